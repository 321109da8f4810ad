<?php

declare(strict_types=1);

namespace Shop\Legacy;

use Shop\Cart;

/** Writes a cart as the accounting system's fixed-width invoice lines. */
final class InvoiceExport
{
    public function __construct(private string $invoiceNo)
    {
    }

    public function render(Cart $cart): string
    {
        $out = sprintf("H%-12s%s\n", $this->invoiceNo, date('Ymd'));
        foreach ($cart->lines() as $line) {
            $out .= sprintf("L%-10s%6d%12d\n", $line['sku'], $line['qty'], $line['cents'];
        }
        $out .= sprintf("T%12d\n", $cart->total());
        return $out;
    }
}
