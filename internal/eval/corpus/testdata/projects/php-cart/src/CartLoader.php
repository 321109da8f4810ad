<?php

declare(strict_types=1);

namespace Shop;

final class CartLoader
{
    public function fromFile(string $path): Cart
    {
        try {
            $data = load_json($path);
        } catch (\JsonException $e) {
            throw new CheckoutException("cart file $path is not valid JSON", 0, $e);
        }
        $cart = new Cart();
        foreach ($data['items'] as $item) {
            $product = new Product($item['sku'], $item['name'], $item['price'], $item['tax'] ?? 'standard');
            $cart->add($product, $item['qty']);
        }
        if (!empty($data['coupon'])) {
            $cart->applyCoupon($data['coupon']);
        }
        return $cart;
    }
}
