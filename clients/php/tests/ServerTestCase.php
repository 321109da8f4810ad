<?php

declare(strict_types=1);

namespace Ctxc\Client\Tests;

use PHPUnit\Framework\TestCase;

/** One real ctxc server for all the tests of a class. */
abstract class ServerTestCase extends TestCase
{
    protected static Server $server;

    public static function setUpBeforeClass(): void
    {
        static::$server = new Server();
    }

    public static function tearDownAfterClass(): void
    {
        static::$server->stop();
    }
}
