//! Parsing of order export lines: `order_id,customer,sku,quantity,unit_price`.

#[derive(Debug, Clone)]
pub struct OrderLine {
    pub order_id: u64,
    pub customer: String,
    pub sku: String,
    pub quantity: u32,
    pub unit_price_cents: u64,
}

/// Parses "12.50" into 1250 cents.
pub fn parse_price(s: &str) -> Option<u64> {
    let (whole, frac) = s.trim().split_once('.').unwrap_or((s.trim(), "0"));
    let frac = format!("{:0<2}", frac);
    Some(whole.parse::<u64>().ok()? * 100 + frac[..2].parse::<u64>().ok()?)
}

pub fn parse_line(line: &str) -> OrderLine {
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    OrderLine {
        order_id: fields[0].parse().expect("order id must be a number"),
        customer: fields[1].to_string(),
        sku: fields[2].to_string(),
        quantity: fields[3].parse().unwrap(),
        unit_price_cents: parse_price(fields[4]).unwrap_or(0),
    }
}

pub fn parse_all(text: &str) -> Vec<OrderLine> {
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(parse_line)
        .collect()
}
