<?php

declare(strict_types=1);

namespace Ctxc\Client\Tests;

use PHPUnit\Framework\TestCase;

/** The README's quick start, run as written against a real server (only the address differs). */
final class ReadmeTest extends TestCase
{
    public function testQuickStart(): void
    {
        $package = dirname(__DIR__);
        $readme = file_get_contents("$package/README.md");
        $this->assertSame(1, preg_match('/## Quick start\n\n```php\n(.*?)```/s', $readme, $block), 'no ```php block under ## Quick start');
        $server = new Server();
        try {
            $script = tempnam(sys_get_temp_dir(), 'ctxc-quick-start-');
            file_put_contents($script, "<?php\nrequire " . var_export("$package/vendor/autoload.php", true) . ";\n"
                . str_replace('http://127.0.0.1:8080', $server->httpUrl, $block[1]));
            exec(PHP_BINARY . ' ' . escapeshellarg($script) . ' 2>&1', $output, $code);
            unlink($script);
        } finally {
            $server->stop();
        }
        $this->assertSame(0, $code, implode("\n", $output));
        $this->assertMatchesRegularExpression('/^2 messages, \d+ tokens$/', implode("\n", $output));
    }
}
