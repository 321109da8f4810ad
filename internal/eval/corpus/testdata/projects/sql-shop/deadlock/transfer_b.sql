-- Move 50 units the other way, at the same time.
BEGIN;
UPDATE products SET stock = stock - 50 WHERE sku = 'NUT-M6';
SELECT pg_sleep(2);
UPDATE products SET stock = stock + 50 WHERE sku = 'BOLT-M6';
COMMIT;
