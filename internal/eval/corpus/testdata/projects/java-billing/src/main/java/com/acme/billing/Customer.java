package com.acme.billing;

public record Customer(String name, String country, String vatId) {

    public boolean reverseCharge() {
        return vatId != null && !vatId.isBlank() && !"DE".equals(country);
    }
}
