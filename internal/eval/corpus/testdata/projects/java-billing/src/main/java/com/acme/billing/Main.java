package com.acme.billing;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

public class Main {

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: billing total|by-country|vat-ids|top-skus FILE [N]");
            System.exit(2);
        }
        InvoiceService service = new InvoiceService();
        List<Invoice> invoices = service.load(Path.of(args[1]));
        System.out.println("loaded " + invoices.size() + " invoices from " + args[1]);
        switch (args[0]) {
            case "total" -> System.out.println("gross total: " + service.totalGross(invoices) + " EUR");
            case "by-country" -> {
                for (Map.Entry<String, BigDecimal> e : service.grossByCountry(invoices).entrySet()) {
                    System.out.printf("%-4s %12s EUR%n", e.getKey(), e.getValue());
                }
            }
            case "vat-ids" -> {
                for (Invoice inv : invoices) {
                    System.out.println(inv.id() + " " + inv.customer().vatId().toUpperCase());
                }
            }
            case "top-skus" -> {
                int n = args.length > 2 ? Integer.parseInt(args[2]) : 3;
                for (String sku : service.topSkus(invoices, n)) {
                    System.out.println(sku);
                }
            }
            default -> {
                System.err.println("unknown command: " + args[0]);
                System.exit(2);
            }
        }
    }
}
