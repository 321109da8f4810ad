-- 003: discount codes, and the discount applied to each order.
CREATE TABLE discounts (
    id          bigserial PRIMARY KEY,
    code        text NOT NULL UNIQUE,
    percent     integer NOT NULL CHECK (percent BETWEEN 1 AND 50),
    valid_until date
);

INSERT INTO discounts (code, percent, valid_until) VALUES
    ('SPRING10', 10, '2024-05-31'),
    ('BULK15', 15, NULL);

ALTER TABLE orders ADD COLUMN discount_id bigint REFERENCES discounts (id);

-- Orders of 1000 or more units get BULK15.
UPDATE orders o
   SET discount_id = (SELECT id FROM discounts WHERE code = 'BULK15')
 WHERE (SELECT sum(qty) FROM order_items i WHERE i.order_id = o.id) >= 1000;

-- From now on every order records its discount (none: the NONE code).
ALTER TABLE orders ALTER COLUMN discount_id SET NOT NULL;

INSERT INTO discounts (code, percent) VALUES ('NONE', 0);
UPDATE orders SET discount_id = (SELECT id FROM discounts WHERE code = 'NONE') WHERE discount_id IS NULL;
