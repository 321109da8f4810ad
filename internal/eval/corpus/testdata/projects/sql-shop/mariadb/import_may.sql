-- Orders exported from the shop for May; imported into the reporting replica.
INSERT INTO orders (customer_id, status, total, created_at) VALUES
    (3, 'cancelled', 4.90, '2024-05-06 17:30:00'),
    (2, 'paid', 105.00, '2024-05-07 11:00:00');
INSERT INTO orders (customer_id, status, total, created_at) VALUES
    (4, 'paid', 105.00, '2024-05-07 11:00:00');
INSERT INTO orders (customer_id, status, total, created_at) VALUES
    (1, 'paid', 18.20, '2024-05-09 10:15:00');
