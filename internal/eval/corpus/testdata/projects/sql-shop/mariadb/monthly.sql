SELECT c.region, DATE_FORMAT(o.created_at, '%Y-%m') AS month, COUNT(*) AS orders, SUM(o.total) AS revenue
  FROM orders o JOIN customers c ON c.id = o.customer_id
 WHERE o.status IN ('paid', 'shipped')
 GROUP BY c.region, month
 ORDER BY c.region, month;
