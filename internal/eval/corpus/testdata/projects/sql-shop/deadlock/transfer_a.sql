-- Move 100 units of stock reservation from BOLT-M6 to NUT-M6.
BEGIN;
UPDATE products SET stock = stock - 100 WHERE sku = 'BOLT-M6';
SELECT pg_sleep(0.5);
UPDATE products SET stock = stock + 100 WHERE sku = 'NUT-M6';
COMMIT;
