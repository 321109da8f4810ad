<?php

declare(strict_types=1);

namespace Ctxc\Client\Tests;

use RuntimeException;

/**
 * A real `ctxc serve` with its HTTP/JSON port, for the tests: the binary named
 * by CTXC_BIN, else the repository's bin/ctxc (`make build`). A missing binary
 * fails the tests.
 */
final class Server
{
    /** @var resource */
    private $process;
    /** @var resource */
    private $stderr;
    public readonly string $httpUrl;
    private array $logs = [];

    /** @param string $httpListen the HTTP address; a stopped server's address starts it again there */
    public function __construct(string $httpListen = '127.0.0.1:0')
    {
        $root = dirname(__DIR__, 3);
        $binary = getenv('CTXC_BIN') ?: "$root/bin/ctxc";
        $binary = realpath($binary) ?: $binary;
        if (!is_executable($binary)) {
            throw new RuntimeException("ctxc binary not found at $binary: run `make build` in the repository root or set CTXC_BIN");
        }
        $env = getenv() + [];
        $env['OTEL_TRACES_EXPORTER'] = '';
        $env['OTEL_EXPORTER_OTLP_ENDPOINT'] = '';
        $command = [$binary, 'serve', '--listen', '127.0.0.1:0', '--http-listen', $httpListen, '--log-format', 'json'];
        $this->process = proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['pipe', 'w']], $pipes, $root, $env);
        if (!is_resource($this->process)) {
            throw new RuntimeException("could not start $binary");
        }
        $this->stderr = $pipes[2];
        $this->httpUrl = 'http://' . $this->waitFor('serving http');
        // The gRPC port serves once this is logged; the HTTP port forwards to it.
        $this->waitFor('serving');
    }

    private function waitFor(string $msg): string
    {
        $deadline = microtime(true) + 60;
        while (microtime(true) < $deadline) {
            $read = [$this->stderr];
            $write = $except = null;
            if (stream_select($read, $write, $except, 1) === 0) {
                continue;
            }
            $line = fgets($this->stderr);
            if ($line === false) {
                break;
            }
            $this->logs[] = $line;
            $entry = json_decode($line, true);
            if (is_array($entry) && ($entry['msg'] ?? '') === $msg && isset($entry['addr'])) {
                return $entry['addr'];
            }
        }
        $this->stop();
        throw new RuntimeException("ctxc serve did not log \"$msg\":\n" . implode('', $this->logs));
    }

    public function stop(): void
    {
        if (is_resource($this->process)) {
            proc_terminate($this->process);
            proc_close($this->process);
        }
    }
}
