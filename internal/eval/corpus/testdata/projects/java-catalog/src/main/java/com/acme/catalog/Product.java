package com.acme.catalog;

import java.math.BigDecimal;

public class Product {
    private final String sku;
    private final String name;
    private final BigDecimal price;
    private final int stock;

    public Product(String sku, String name, BigDecimal price, int stock) {
        this.sku = sku;
        this.name = name;
        this.price = price;
        this.stock = stock;
    }

    public String getSku() { return sku; }
    public String getName() { return name; }
    public BigDecimal getPrice() { return price; }
    public int getStock() { return stock; }

    @Override
    public String toString() {
        return sku + " " + name + " @ " + price;
    }
}
