package com.acme.catalog;

import java.nio.file.Path;

public class App {
    public static void main(String[] args) {
        Catalog catalog = new CatalogLoader().load(Path.of(args[0]));
        for (Product p : catalog.cheapest(5)) {
            System.out.println(CatalogLoader.describe(p));
        }
        System.out.println("total stock value: " + catalog.totalValue());
        System.out.println("by prefix: " + catalog.countByPrefix());
        System.out.println(catalog.find("TOOL-0001").getName());
    }
}
