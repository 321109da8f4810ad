<?php

declare(strict_types=1);

namespace Shop\Tests;

use PHPUnit\Framework\TestCase;
use Shop\Product;

final class ProductTest extends TestCase
{
    public function testKeepsItsFields(): void
    {
        $p = new Product('TEA-001', 'Sencha green tea 100 g', 899, 'reduced');
        $this->assertSame('TEA-001', $p->sku);
        $this->assertSame(899, $p->priceCents);
        $this->assertSame('reduced', $p->taxClass);
    }

    public function testTaxClassDefaultsToStandard(): void
    {
        $this->assertSame('standard', (new Product('MUG-010', 'Stoneware mug', 1450))->taxClass);
    }

    public function testNegativePriceFailsWithError(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->expectExceptionMessage('negative price for MUG-010: -1');
        new Product('MUG-010', 'Stoneware mug', -1);
    }

    public function testFreeProductIsAllowed(): void
    {
        $this->assertSame(0, (new Product('BAG-000', 'Paper bag', 0))->priceCents);
    }
}
