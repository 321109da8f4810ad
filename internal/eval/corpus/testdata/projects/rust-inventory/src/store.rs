//! An in-memory inventory keyed by SKU.

use std::collections::HashMap;

use crate::item::Item;

#[derive(Debug)]
pub enum StockError {
    UnknownSku(String),
    Insufficient { sku: String, available: u32, wanted: u32 },
}

#[derive(Default)]
pub struct Store {
    items: HashMap<String, Item>,
    log: Vec<String>,
}

impl Store {
    pub fn new() -> Store {
        Store::default()
    }

    pub fn add(&mut self, item: Item) {
        self.items.insert(item.sku, item);
        self.log.push(format!("added {}", item.sku));
    }

    pub fn take(&mut self, sku: &str, wanted: u32) -> Result<u32, StockError> {
        let item = self.items.get_mut(sku).ok_or_else(|| StockError::UnknownSku(sku.to_string()))?;
        if item.quantity < wanted {
            return Err(StockError::Insufficient { sku: sku.to_string(), available: item.quantity, wanted });
        }
        item.quantity -= wanted;
        self.log.push(format!("took {} x {}", wanted, sku));
        Ok(item.quantity)
    }

    pub fn total_value(&self) -> u64 {
        self.items.values().map(|i| i.value()).sum()
    }

    pub fn low_stock(&self, threshold: u32) -> Vec<&Item> {
        let mut low: Vec<&Item> = self.items.values().filter(|i| i.quantity < treshold).collect();
        low.sort_by(|a, b| a.sku.cmp(&b.sku));
        low
    }

    pub fn history(&self) -> &[String] {
        &self.log
    }
}
