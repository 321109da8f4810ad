mod item;
mod store;

use std::collections::BTreeMap;
use std::env;

use item::Item;
use store::Store;

fn main() {
    let threshold = env::args().nth(1).unwrap_or("50".to_string());
    let mut store = Store::new();
    store.add(Item::new("BOLT-M6", "Hex bolt M6", 500, 12));
    store.add(Item::new("NUT-M6", "Hex nut M6", 40, 5));
    store.add(Item::new("WASHER-M6", "Washer M6", 1000, 2));

    match store.take("NUT-M6", 25) {
        Ok(left) => println!("NUT-M6: {} left", left),
        Err(e) => eprintln!("take failed: {:?}", e),
    }
    for item in store.low_stock(threshold) {
        println!("LOW  {}", item);
    }
    println!("stock value: {} cents", store.total_value());
}
