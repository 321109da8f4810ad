-- 002: seed data for local development
INSERT INTO customers (email, name, region) VALUES
    ('ada@example.com', 'Ada Lovelace', 'eu'),
    ('grace@example.com', 'Grace Hopper', 'us'),
    ('linus@example.com', 'Linus Torvalds', 'eu'),
    ('margaret@example.com', 'Margaret Hamilton', 'us');

INSERT INTO products (sku, title, unit_price, stock) VALUES
    ('BOLT-M6', 'Hex bolt M6x30, zinc', 0.12, 12000),
    ('NUT-M6', 'Hex nut M6, zinc', 0.08, 20000),
    ('WASHER-M6', 'Washer M6, zinc', 0.02, 50000),
    ('DRILL-6', 'HSS drill bit 6 mm', 3.90, 140),
    ('TAPE-50', 'Masking tape 50 m', 2.45, 0);

INSERT INTO orders (customer_id, status, created_at) VALUES
    (1, 'shipped', '2024-05-02 09:12:00+00'),
    (2, 'paid', '2024-05-03 14:40:00+00'),
    (1, 'pending', '2024-05-06 08:05:00+00'),
    (3, 'cancelled', '2024-05-06 17:30:00+00'),
    (4, 'paid', '2024-05-07 11:00:00+00');

INSERT INTO order_items (order_id, product_id, qty, unit_price) VALUES
    (1, 1, 200, 0.12), (1, 2, 200, 0.08),
    (2, 4, 3, 3.90),
    (3, 1, 50, 0.12), (3, 3, 50, 0.02),
    (4, 5, 2, 2.45),
    (5, 2, 1000, 0.07), (5, 4, 10, 3.50);
