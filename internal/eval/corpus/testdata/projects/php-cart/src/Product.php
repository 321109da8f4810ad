<?php

declare(strict_types=1);

namespace Shop;

final class Product
{
    public function __construct(
        public readonly string $sku,
        public readonly string $name,
        public readonly int $priceCents,
        public readonly string $taxClass = 'standard',
    ) {
        if ($priceCents < 0) {
            throw new \InvalidArgumentException("negative price for $sku: $priceCents");
        }
    }
}
