package com.acme.billing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

public class InvoiceService {
    private final InvoiceParser parser = new InvoiceParser();
    private final TaxCalculator tax = new TaxCalculator();

    public List<Invoice> load(Path file) throws BillingException {
        List<Invoice> invoices = new ArrayList<>();
        try {
            List<String> lines = Files.readAllLines(file);
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i);
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                invoices.add(parser.parse(i + 1, line));
            }
        } catch (IOException e) {
            throw new BillingException("cannot read " + file, new UncheckedIOException(e));
        } catch (InvoiceParseException e) {
            throw new BillingException("cannot load invoices from " + file, e);
        }
        return invoices;
    }

    public BigDecimal totalGross(List<Invoice> invoices) {
        return invoices.stream().map(tax::gross).reduce(BigDecimal.ZERO, BigDecimal::add);
    }

    public Map<String, BigDecimal> grossByCountry(List<Invoice> invoices) {
        return invoices.stream().collect(Collectors.groupingBy(
                inv -> inv.customer().country(),
                TreeMap::new,
                Collectors.reducing(BigDecimal.ZERO, tax::gross, BigDecimal::add)));
    }

    public String[] topSkus(List<Invoice> invoices, int n) {
        Map<String, Integer> qty = new TreeMap<>();
        for (Invoice inv : invoices) {
            for (LineItem item : inv.items()) {
                qty.merge(item.sku(), item.quantity(), Integer::sum);
            }
        }
        String[] top = qty.entrySet().stream()
                .sorted((a, b) -> b.getValue() - a.getValue())
                .map(Map.Entry::getKey)
                .toArray(String[]::new);
        String[] out = new String[n];
        for (int i = 0; i < n; i++) {
            out[i] = top[i];
        }
        return out;
    }
}
