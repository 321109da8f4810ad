<?php

declare(strict_types=1);

namespace Ctxc\Client;

use JsonException;

/**
 * Client calls a ctxc server through its HTTP/JSON port (`ctxc serve
 * --http-listen`): every RPC is POST /ctxc.v1.ContextCompilerService/<Method>
 * with the request as the JSON grpcurl takes, and the answer is the response
 * as JSON (lowerCamelCase, zero values left out), decoded into arrays.
 *
 * Calls that found no server or got 503 (UNAVAILABLE) are retried with
 * backoff (every ctxc RPC is stateless); a failed call throws CtxcException.
 */
final class Client
{
    public const VERSION = '0.1.0';
    private const PATH = '/ctxc.v1.ContextCompilerService/';

    private readonly string $baseUrl;

    /**
     * @param string $baseUrl the HTTP/JSON address, such as http://127.0.0.1:8080
     * @param float $timeout seconds a call may take; sent as its gRPC deadline too
     * @param array<string, string> $headers extra headers on every call (Authorization, Grpc-Metadata-*)
     * @param int $maxAttempts attempts of a call in all, the first included
     */
    public function __construct(
        string $baseUrl = 'http://127.0.0.1:8080',
        private readonly float $timeout = 30.0,
        private readonly array $headers = [],
        private readonly int $maxAttempts = 4,
    ) {
        $this->baseUrl = rtrim($baseUrl, '/');
    }

    /** Compile runs the profile's policy chain and returns what the model should see. */
    public function compile(array $request): array
    {
        return $this->call('Compile', $request);
    }

    /** Route appends a user turn, an agent step or an event and returns the new state. */
    public function route(array $request): array
    {
        return $this->call('Route', $request);
    }

    /** Compact persists compaction (summaries, masks) into the state. */
    public function compact(array $request): array
    {
        return $this->call('Compact', $request);
    }

    /** Budget reports the token budget of a state under a profile. */
    public function budget(array $request): array
    {
        return $this->call('Budget', $request);
    }

    /** CountTokens counts texts and messages for a model or an encoding. */
    public function countTokens(array $request): array
    {
        return $this->call('CountTokens', $request);
    }

    /** ListProfiles lists the server's profiles with their stages and settings. */
    public function listProfiles(): array
    {
        return $this->call('ListProfiles', []);
    }

    /** A Route session kept as an opaque state blob; pass $blob to resume one. */
    public function session(array|string $model, string $agentId = '', string $profile = '', string $blob = ''): Session
    {
        return new Session($this, is_string($model) ? ['name' => $model] : $model, $agentId, $profile, $blob);
    }

    /**
     * A tracker that sends a state the runtime keeps growing by reference:
     * each call sends only the messages appended since the previous one.
     */
    public function stateRefs(): StateRefs
    {
        return new StateRefs($this);
    }

    /** Calls one RPC by name with a request array and returns the decoded response. */
    public function call(string $method, array $request): array
    {
        $body = json_encode($request === [] ? new \stdClass() : $request, JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR);
        for ($attempt = 1; ; $attempt++) {
            try {
                return $this->post($method, $body);
            } catch (CtxcException $e) {
                if ($e->grpcCode !== 14 || $attempt >= $this->maxAttempts) {
                    throw $e;
                }
                usleep((int)(min(2.0, 0.1 * 2 ** ($attempt - 1)) * (0.5 + mt_rand() / mt_getrandmax() / 2) * 1e6));
            }
        }
    }

    private function post(string $method, string $body): array
    {
        $headers = ['Content-Type: application/json', 'Grpc-Timeout: ' . max(1, (int)ceil($this->timeout * 1000)) . 'm',
            'User-Agent: ctxc-php/' . self::VERSION];
        foreach ($this->headers as $name => $value) {
            $headers[] = "$name: $value";
        }
        $curl = curl_init($this->baseUrl . self::PATH . $method);
        curl_setopt_array($curl, [
            CURLOPT_POST => true,
            CURLOPT_POSTFIELDS => $body,
            CURLOPT_HTTPHEADER => $headers,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_TIMEOUT_MS => (int)ceil($this->timeout * 1000),
            CURLOPT_CONNECTTIMEOUT_MS => (int)ceil(min($this->timeout, 10.0) * 1000),
        ]);
        $answer = curl_exec($curl);
        $status = (int)curl_getinfo($curl, CURLINFO_RESPONSE_CODE);
        $error = curl_error($curl);
        curl_close($curl);
        if ($answer === false) {
            throw new CtxcException("$method: no answer from {$this->baseUrl}: $error", 14, 0);
        }
        try {
            $decoded = $answer === '' ? [] : json_decode($answer, true, 512, JSON_THROW_ON_ERROR);
        } catch (JsonException $e) {
            throw new CtxcException("$method: HTTP $status with a body that is not JSON: " . substr($answer, 0, 200), 2, $status);
        }
        if ($status !== 200) {
            throw CtxcException::fromStatus($status, is_array($decoded) ? $decoded : []);
        }
        return $decoded;
    }
}
