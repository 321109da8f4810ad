-- The offline cache of the mobile app (SQLite).
PRAGMA foreign_keys = ON;
CREATE TABLE customers (
    id     INTEGER PRIMARY KEY,
    email  TEXT NOT NULL UNIQUE,
    name   TEXT NOT NULL
);
CREATE TABLE carts (
    id           INTEGER PRIMARY KEY,
    customer_id  INTEGER NOT NULL REFERENCES customers (id),
    sku          TEXT NOT NULL,
    qty          INTEGER NOT NULL CHECK (qty > 0),
    added_at     TEXT NOT NULL DEFAULT (datetime('now'))
);
INSERT INTO customers (id, email, name) VALUES
    (1, 'ada@example.com', 'Ada Lovelace'),
    (2, 'grace@example.com', 'Grace Hopper');
INSERT INTO carts (customer_id, sku, qty, added_at) VALUES
    (1, 'BOLT-M6', 200, '2024-05-02 09:00:00'),
    (1, 'NUT-M6', 200, '2024-05-02 09:01:00'),
    (2, 'DRILL-6', 3, '2024-05-03 14:30:00');
