package com.acme.billing;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;

/**
 * Parses one invoice per line:
 * {@code INV-1001;ACME GmbH;DE;DE811234567;2024-03-01;WID-01:3:19.99|GAD-07:1:249.00}
 */
public class InvoiceParser {

    public Invoice parse(int lineNo, String line) {
        String[] f = line.split(";", -1);
        if (f.length != 6) {
            throw new InvoiceParseException(lineNo, "expected 6 fields, got " + f.length, null);
        }
        Customer customer = new Customer(f[1].trim(), f[2].trim(), f[3].isBlank() ? null : f[3].trim());
        List<LineItem> items = new ArrayList<>();
        for (String item : f[5].split("\\|")) {
            items.add(parseItem(lineNo, item));
        }
        return new Invoice(f[0].trim(), customer, LocalDate.parse(f[4].trim()), items);
    }

    LineItem parseItem(int lineNo, String text) {
        String[] p = text.split(":");
        int qty;
        try {
            qty = Integer.parseInt(p[1].trim());
        } catch (NumberFormatException e) {
            throw new InvoiceParseException(lineNo, "bad quantity in item '" + text + "'", e);
        }
        return new LineItem(p[0].trim(), qty, new BigDecimal(p[2].trim()));
    }
}
