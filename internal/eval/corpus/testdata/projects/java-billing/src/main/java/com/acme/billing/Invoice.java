package com.acme.billing;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.List;

public record Invoice(String id, Customer customer, LocalDate date, List<LineItem> items) {

    public BigDecimal net() {
        return items.stream().map(LineItem::net).reduce(BigDecimal.ZERO, BigDecimal::add);
    }
}
