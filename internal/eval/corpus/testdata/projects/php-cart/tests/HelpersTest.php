<?php

declare(strict_types=1);

namespace Shop\Tests;

use PHPUnit\Framework\TestCase;

final class HelpersTest extends TestCase
{
    /** @return array<string, array{string, int}> */
    public static function prices(): array
    {
        return [
            'whole' => ['12', 1200],
            'dot' => ['8.50', 850],
            'comma' => ['8,50', 850],
            'euro sign' => ['€ 14.50', 1450],
            'tea' => ['8.99', 899],
            'kettle sale' => ['19.99', 1999],
        ];
    }

    /** @dataProvider prices */
    public function testParsePrice(string $text, int $cents): void
    {
        $this->assertSame($cents, parse_price($text));
    }

    public function testParsePriceRejectsText(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        parse_price('free');
    }

    public function testFormatCents(): void
    {
        $this->assertSame('0.05', format_cents(5));
        $this->assertSame('-19.99', format_cents(-1999));
        $this->assertSame('1234567.89', format_cents(123456789));
    }
}
