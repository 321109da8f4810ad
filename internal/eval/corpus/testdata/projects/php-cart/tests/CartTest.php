<?php

declare(strict_types=1);

namespace Shop\Tests;

use PHPUnit\Framework\TestCase;
use Shop\Cart;
use Shop\CartLoader;
use Shop\Product;

final class CartTest extends TestCase
{
    private function basicCart(): Cart
    {
        $cart = new Cart();
        $cart->add(new Product('TEA-001', 'Sencha green tea 100 g', 899, 'reduced'), 2);
        $cart->add(new Product('MUG-010', 'Stoneware mug', 1450), 1);
        $cart->add(new Product('KET-200', 'Gooseneck kettle', 5900), 1);
        return $cart;
    }

    public function testSubtotalSumsLines(): void
    {
        $this->assertSame(9148, $this->basicCart()->subtotal());
    }

    public function testAddMergesQuantities(): void
    {
        $cart = $this->basicCart();
        $cart->add(new Product('MUG-010', 'Stoneware mug', 1450), 2);
        $this->assertSame(6, $cart->count());
    }

    public function testRejectsZeroQuantity(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->basicCart()->add(new Product('MUG-010', 'Stoneware mug', 1450), 0);
    }

    public function testCouponDiscountIsRoundedDown(): void
    {
        $cart = $this->basicCart();
        $cart->applyCoupon('welcome10');
        $this->assertEquals(914, $cart->discount(), 'discounts are never rounded in the customer\'s favour');
    }

    public function testLinesListsEveryProduct(): void
    {
        $this->assertSame([
            ['sku' => 'TEA-001', 'name' => 'Sencha green tea 100 g', 'qty' => 2, 'cents' => 1798],
            ['sku' => 'MUG-010', 'name' => 'Stoneware mug', 'qty' => 1, 'cents' => 1450],
            ['sku' => 'KET-200', 'name' => 'Gooseneck kettle', 'qty' => 1, 'cents' => 5900.0],
        ], $this->basicCart()->lines());
    }

    public function testLoadsCartSubmittedByForm(): void
    {
        $cart = (new CartLoader())->fromFile(__DIR__ . '/../carts/from-form.json');
        $this->assertSame(3, $cart->count());
    }

    public function testUnknownCouponIsRejected(): void
    {
        $this->expectException(\DomainException::class);
        $this->basicCart()->applyCoupon('SUMMER99');
    }
}
