-- The reporting replica's schema (MariaDB).
CREATE TABLE customers (
    id         BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    email      VARCHAR(255) NOT NULL,
    name       VARCHAR(255) NOT NULL,
    region     CHAR(2) NOT NULL DEFAULT 'eu',
    UNIQUE KEY customers_email_uq (email)
) ENGINE=InnoDB;

CREATE TABLE orders (
    id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    customer_id  BIGINT UNSIGNED NOT NULL,
    status       ENUM('pending', 'paid', 'shipped', 'cancelled') NOT NULL DEFAULT 'pending',
    total        DECIMAL(10, 2) NOT NULL,
    created_at   DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT orders_customer_fk FOREIGN KEY (customer_id) REFERENCES customers (id)
) ENGINE=InnoDB;

INSERT INTO customers (email, name, region) VALUES
    ('ada@example.com', 'Ada Lovelace', 'eu'),
    ('grace@example.com', 'Grace Hopper', 'us'),
    ('linus@example.com', 'Linus Torvalds', 'eu');

INSERT INTO orders (customer_id, status, total, created_at) VALUES
    (1, 'shipped', 40.00, '2024-05-02 09:12:00'),
    (2, 'paid', 11.70, '2024-05-03 14:40:00'),
    (1, 'pending', 7.00, '2024-05-06 08:05:00');
