//! Stock items and their prices.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub sku: String,
    pub name: String,
    pub quantity: u32,
    pub price_cents: u64,
}

impl Item {
    pub fn new(sku: &str, name: &str, quantity: u32, price_cents: u64) -> Item {
        Item { sku: sku.to_string(), name: name.to_string(), quantity, price_cents }
    }

    /// Value of the stock of this item, in cents.
    pub fn value(&self) -> u64 {
        self.quantity * self.price_cents
    }
}

impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:<10} {:<24} {:>6} @ {}.{:02}", self.sku, self.name, self.quantity,
            self.price_cents / 100, self.price_cents % 100)
    }
}
