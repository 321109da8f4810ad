package com.acme.billing;

public class InvoiceParseException extends RuntimeException {
    private final int line;

    public InvoiceParseException(int line, String message, Throwable cause) {
        super("line " + line + ": " + message, cause);
        this.line = line;
    }

    public int line() {
        return line;
    }
}
