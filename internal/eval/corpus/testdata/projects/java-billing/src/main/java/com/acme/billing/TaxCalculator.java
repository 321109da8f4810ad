package com.acme.billing;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Map;

public class TaxCalculator {
    private static final Map<String, BigDecimal> VAT = Map.of(
            "DE", new BigDecimal("0.19"),
            "FR", new BigDecimal("0.20"),
            "NL", new BigDecimal("0.21"),
            "AT", new BigDecimal("0.20"),
            "CH", new BigDecimal("0.081"));

    public BigDecimal vat(Invoice invoice) {
        if (invoice.customer().reverseCharge()) {
            return BigDecimal.ZERO;
        }
        BigDecimal rate = VAT.get(invoice.customer().country());
        return invoice.net().multiply(rate).setScale(2, RoundingMode.HALF_UP);
    }

    public BigDecimal gross(Invoice invoice) {
        return invoice.net().add(vat(invoice));
    }

    /** Early-payment discount: 2% within 10 days, 1% within 20, none after. */
    public static BigDecimal discountRate(int daysPaidAfterIssue) {
        if (daysPaidAfterIssue < 10) {
            return new BigDecimal("0.02");
        } else if (daysPaidAfterIssue < 20) {
            return new BigDecimal("0.01");
        }
        return BigDecimal.ZERO;
    }
}
