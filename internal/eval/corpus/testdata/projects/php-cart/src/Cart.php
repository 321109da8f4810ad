<?php

declare(strict_types=1);

namespace Shop;

final class Cart
{
    /** @var array<string, array{product: Product, qty: int}> */
    private array $lines = [];
    private ?string $coupon = null;

    private const TAX_RATES = ['standard' => 19, 'reduced' => 7];
    private const COUPONS = ['WELCOME10' => 10, 'SPRING15' => 15];

    public function add(Product $product, int $qty): void
    {
        if ($qty <= 0) {
            throw new \InvalidArgumentException("quantity must be positive, got $qty");
        }
        $current = $this->lines[$product->sku]['qty'] ?? 0;
        $this->lines[$product->sku] = ['product' => $product, 'qty' => $current + $qty];
    }

    public function applyCoupon(string $code): void
    {
        if (!isset(self::COUPONS[strtoupper($code)])) {
            throw new \DomainException("unknown coupon $code");
        }
        $this->coupon = strtoupper($code);
    }

    public function count(): int
    {
        return array_sum(array_column($this->lines, 'qty'));
    }

    public function subtotal(): int
    {
        $sum = 0;
        foreach ($this->lines as $line) {
            $sum += $line['product']->priceCents * $line['qty'];
        }
        return $sum;
    }

    public function discount(): int
    {
        if ($this->coupon === null) {
            return 0;
        }
        return (int) round($this->subtotal() * self::COUPONS[$this->coupon] / 100);
    }

    public function tax(): int
    {
        $tax = 0;
        foreach ($this->lines as $line) {
            $rate = self::TAX_RATES[$line['product']->taxClass];
            $tax += intdiv($line['product']->priceCents * $line['qty'] * $rate, 100);
        }
        return $tax;
    }

    public function total(): int
    {
        return $this->subtotal() - $this->discount() + $this->tax();
    }

    public function averageItemPrice(): int
    {
        return intdiv($this->subtotal(), $this->count());
    }

    /** @return list<array{sku: string, name: string, qty: int, cents: int}> */
    public function lines(): array
    {
        $out = [];
        foreach ($this->lines as $sku => $line) {
            $out[] = ['sku' => $sku, 'name' => $line['product']->name, 'qty' => $line['qty'],
                'cents' => $line['product']->priceCents * $line['qty']];
        }
        return $out;
    }
}
