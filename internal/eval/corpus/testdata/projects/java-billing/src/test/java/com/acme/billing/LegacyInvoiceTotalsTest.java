package com.acme.billing;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.List;
import org.junit.Before;
import org.junit.Test;

/** JUnit 4 tests kept from the old build; run with JUnitCore. */
public class LegacyInvoiceTotalsTest {
    private InvoiceService service;
    private List<Invoice> march;

    @Before
    public void setUp() throws Exception {
        service = new InvoiceService();
        march = service.load(Path.of("data/march.csv"));
    }

    @Test
    public void marchHasSixInvoices() {
        assertEquals(6, march.size());
    }

    @Test
    public void marchGrossTotal() {
        assertEquals(new BigDecimal("2439.13"), service.totalGross(march));
    }

    @Test
    public void germanyGrossInMarch() {
        assertEquals("gross for DE", new BigDecimal("1271.07"), service.grossByCountry(march).get("DE"));
    }

    @Test
    public void topThreeSkus() {
        assertArrayEquals(new String[] {"CAB-02", "WID-01", "SRV-10"}, service.topSkus(march, 3));
    }

    @Test
    public void topFiveSkus() {
        assertEquals(5, service.topSkus(march, 5).length);
    }

    @Test
    public void aprilLoads() throws Exception {
        assertEquals(4, service.load(Path.of("data/april.csv")).size());
    }
}
