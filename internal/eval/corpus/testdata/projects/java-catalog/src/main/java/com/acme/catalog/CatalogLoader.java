package com.acme.catalog;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;

public class CatalogLoader {

    public Catalog load(Path file) {
        Catalog catalog = new Catalog();
        for (String line : Files.readAllLines(file)) {
            String[] f = line.split(",");
            int stock = f[3].trim();
            catalog.add(new Product(f[0], f[1], new BigDecimal(f[2]), stock));
        }
        return catalog;
    }

    public static String describe(Product p) {
        if (p.getStock() == 0) {
            return p.getName() + " (sold out)";
        } else if (p.getStock() < 5) {
            return p.getName() + " (only " + p.getStock() + " left)";
        }
    }
}
