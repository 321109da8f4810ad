package com.acme.billing;

import java.math.BigDecimal;

public record LineItem(String sku, int quantity, BigDecimal unitPrice) {

    public BigDecimal net() {
        return unitPrice.multiply(BigDecimal.valueOf(quantity));
    }
}
