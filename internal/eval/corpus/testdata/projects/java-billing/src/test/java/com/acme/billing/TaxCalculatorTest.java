package com.acme.billing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TaxCalculatorTest {
    private final TaxCalculator tax = new TaxCalculator();

    private static Invoice invoice(String country, String vatId, String price, int qty) {
        return new Invoice("INV-T", new Customer("Test", country, vatId), LocalDate.of(2024, 3, 1),
                List.of(new LineItem("WID-01", qty, new BigDecimal(price))));
    }

    @Test
    void germanVatIs19Percent() {
        assertEquals(new BigDecimal("5.70"), tax.vat(invoice("DE", null, "10.00", 3)));
    }

    @Test
    void reverseChargeHasNoVat() {
        assertEquals(BigDecimal.ZERO, tax.vat(invoice("NL", "NL001234567B01", "249.00", 1)));
    }

    @Test
    @DisplayName("gross = net + VAT for a French customer")
    void grossForFrance() {
        assertEquals(new BigDecimal("222.00"), tax.gross(invoice("FR", null, "18.50", 10)));
    }

    @Test
    void swissVatRoundsHalfUp() {
        assertEquals(new BigDecimal("20.98"), tax.vat(invoice("CH", null, "259.00", 1)));
    }

    @Test
    void unknownCountryIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> tax.vat(invoice("NO", null, "249.00", 1)));
    }

    @ParameterizedTest(name = "paid after {0} days -> {1}")
    @CsvSource({"0, 0.02", "9, 0.02", "10, 0.02", "15, 0.01", "20, 0.00", "45, 0.00"})
    void earlyPaymentDiscount(int days, String expected) {
        assertEquals(new BigDecimal(expected), TaxCalculator.discountRate(days));
    }
}
