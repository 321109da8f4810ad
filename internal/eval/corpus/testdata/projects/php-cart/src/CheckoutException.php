<?php

declare(strict_types=1);

namespace Shop;

final class CheckoutException extends \RuntimeException
{
}
