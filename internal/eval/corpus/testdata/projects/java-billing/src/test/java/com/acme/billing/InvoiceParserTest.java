package com.acme.billing;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigDecimal;
import org.junit.jupiter.api.Test;

class InvoiceParserTest {
    private final InvoiceParser parser = new InvoiceParser();

    @Test
    void parsesAllFields() {
        Invoice inv = parser.parse(1, "INV-1001;ACME GmbH;DE;DE811234567;2024-03-01;WID-01:3:19.99|GAD-07:1:249.00");
        assertAll(
                () -> assertEquals("INV-1001", inv.id()),
                () -> assertEquals("DE", inv.customer().country()),
                () -> assertEquals(2, inv.items().size()),
                () -> assertEquals(new BigDecimal("308.97"), inv.net()));
    }

    @Test
    void blankVatIdIsNull() {
        Invoice inv = parser.parse(1, "INV-1002;Boulangerie Martin;FR;;2024-03-04;WID-01:10:18.50");
        assertNull(inv.customer().vatId());
    }

    @Test
    void wrongFieldCountFails() {
        InvoiceParseException e = assertThrows(InvoiceParseException.class, () -> parser.parse(7, "INV-1;x;DE"));
        assertEquals("line 7: expected 6 fields, got 3", e.getMessage());
    }

    @Test
    void itemWithoutPriceFailsWithLineNumber() {
        InvoiceParseException e = assertThrows(InvoiceParseException.class,
                () -> parser.parse(3, "INV-1012;Huber;AT;;2024-05-06;CAB-02:12"));
        assertEquals(3, e.line());
    }
}
