package com.acme.billing;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CustomerTest {

    @Nested
    class ReverseCharge {
        @Test
        void appliesToForeignEuCustomerWithVatId() {
            assertTrue(new Customer("Van Dijk BV", "NL", "NL001234567B01").reverseCharge());
        }

        @Test
        void neverAppliesToGermanCustomers() {
            assertFalse(new Customer("ACME GmbH", "DE", "DE811234567").reverseCharge());
        }

        @ParameterizedTest
        @ValueSource(strings = {"", " ", "\t"})
        void blankVatIdFailsTheCheck(String vatId) {
            assertFalse(new Customer("Boulangerie Martin", "FR", vatId).reverseCharge());
        }

        @Test
        void missingVatIdIsNotAnError() {
            assertFalse(new Customer("Zürcher AG", "CH", null).reverseCharge());
        }
    }
}
