-- Customers by spend, with their latest order.
SELECT c.id, c.name, c.email,
       count(DISTINCT o.id)       AS orders,
       sum(i.qty * i.unit_price)  AS spent,
       max(o.created_at)          AS last_order
  FROM customers c
  LEFT JOIN orders o      ON o.customer_id = c.id AND o.status <> 'cancelled'
  LEFT JOIN order_items i ON i.order_id = o.id
 GROUP BY c.id, c.name, c.email
 ORDER BY spent DESC NULLS LAST;
