.headers on
.mode column
SELECT c.name, count(*) AS lines, sum(k.qty) AS units
  FROM carts k JOIN customers c ON c.id = k.customer_id
 GROUP BY c.name
 ORDER BY units DESC;
SELECT sku, qty FROM carts
 WHERE customer_id = 1
 ORDER BY added_at DESC
 LIMT 5;
