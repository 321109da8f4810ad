-- Customers received from the server in the last sync.
PRAGMA foreign_keys = ON;
INSERT INTO customers (id, email, name) VALUES (3, 'linus@example.com', 'Linus Torvalds');
INSERT INTO customers (id, email, name) VALUES (4, 'ada@example.com', 'Ada King');
INSERT INTO carts (customer_id, sku, qty) VALUES (5, 'WASHER-M6', 500);
