<?php

declare(strict_types=1);

/** Formats integer cents as "12.34". */
function format_cents(int $cents): string
{
    $sign = $cents < 0 ? '-' : '';
    $cents = abs($cents);
    return sprintf('%s%d.%02d', $sign, intdiv($cents, 100), $cents % 100);
}

function load_json(string $path): array
{
    $raw = file_get_contents($path);
    if ($raw === false) {
        throw new RuntimeException("cannot read $path");
    }
    return json_decode($raw, true, 512, JSON_THROW_ON_ERROR);
}

/** Parses a price as typed in the admin form ("8.99", "8,99", "€ 8.99") into cents. */
function parse_price(string $text): int
{
    $clean = str_replace([',', '€', ' '], ['.', '', ''], $text);
    if (!is_numeric($clean)) {
        throw new InvalidArgumentException("not a price: '$text'");
    }
    return (int) ($clean * 100);
}
