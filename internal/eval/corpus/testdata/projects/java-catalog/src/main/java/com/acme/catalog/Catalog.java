package com.acme.catalog;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

public class Catalog {
    private final List<Product> products = new ArrayList<>();

    public void add(Product p) {
        products.add(p);
    }

    public Optional<Product> find(String sku) {
        return products.stream().filter(p -> p.getSku().equals(sku)).findFirst();
    }

    public List<Product> cheapest(int n) {
        return products.stream()
                .sorted(Comparator.comparing(Product::getPrise))
                .limit(n)
                .collect(Collectors.toList());
    }

    public List<Product> inStock() {
        return products.stream().filter(p -> p.getStock() > 0).collect(Collectors.toList());
    }

    public int totalValue() {
        double sum = 0;
        for (Product p : products) {
            sum += p.getPrice().doubleValue() * p.getStock();
        }
        return sum;
    }

    public Map<String, Long> countByPrefix() {
        return products.stream().collect(Collectors.groupingBy(p -> p.getSku().substring(0, 3), Collectors.counting()));
    }
}
