mod parse;

use std::collections::BTreeMap;
use std::{env, fs, process};

fn main() {
    let path = env::args().nth(1).unwrap_or_else(|| {
        eprintln!("usage: orders FILE");
        process::exit(2);
    });
    let text = fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("{}: {}", path, e);
        process::exit(1);
    });
    println!("reading {}", path);
    let lines = parse::parse_all(&text);
    let mut per_customer: BTreeMap<&str, u64> = BTreeMap::new();
    for l in &lines {
        *per_customer.entry(l.customer.as_str()).or_default() += l.quantity as u64 * l.unit_price_cents;
    }
    for (customer, cents) in per_customer {
        println!("{:<20} {:>8}.{:02}", customer, cents / 100, cents % 100);
    }
}
