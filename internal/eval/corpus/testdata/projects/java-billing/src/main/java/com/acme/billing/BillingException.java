package com.acme.billing;

public class BillingException extends Exception {

    public BillingException(String message, Throwable cause) {
        super(message, cause);
    }
}
