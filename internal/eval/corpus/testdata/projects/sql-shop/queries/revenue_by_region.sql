-- Revenue per region and month, paid and shipped orders only.
SELECT c.region,
       date_trunc('month', o.created_at)::date AS month,
       count(DISTINCT o.id)                    AS orders,
       sum(i.qty * i.unit_price)               AS revenue
  FROM orders o
  JOIN customers c   ON c.id = o.customer_id
  JOIN order_items i ON i.order_id = o.id
 WHERE o.status IN ('paid', 'shipped')
 GROUP BY c.region, month
 ORDER BY c.region, month;

-- Regions with their sales targets.
SELECT r.name, r.monthly_target, sum(i.qty * i.unit_price) AS revenue
  FROM regions r
  JOIN customers c   ON c.region = r.code
  JOIN orders o      ON o.customer_id = c.id
  JOIN order_items i ON i.order_id = o.id
 GROUP BY r.name, r.monthly_target;
