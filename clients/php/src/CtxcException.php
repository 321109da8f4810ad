<?php

declare(strict_types=1);

namespace Ctxc\Client;

use RuntimeException;

/**
 * A failed ctxc call: the gRPC status code and the HTTP status the gateway
 * mapped it to, the google.rpc.ErrorInfo reason (INVALID_STATE,
 * CONTEXT_IRREDUCIBLE...) with its metadata, and the bad fields of an
 * INVALID_ARGUMENT answer. A transport failure (no answer) has code 14
 * (UNAVAILABLE) and HTTP status 0.
 */
final class CtxcException extends RuntimeException
{
    /**
     * @param array<string, string> $metadata ErrorInfo metadata, such as needed_tokens
     * @param list<array{field: string, description: string}> $fieldViolations
     */
    public function __construct(
        string $message,
        public readonly int $grpcCode,
        public readonly int $httpStatus,
        public readonly string $reason = '',
        public readonly string $domain = '',
        public readonly array $metadata = [],
        public readonly array $fieldViolations = [],
    ) {
        parent::__construct($message, $grpcCode);
    }

    /** Builds the exception from the gateway's JSON status body. */
    public static function fromStatus(int $httpStatus, array $status): self
    {
        $reason = '';
        $domain = '';
        $metadata = [];
        $violations = [];
        foreach ($status['details'] ?? [] as $detail) {
            $type = $detail['@type'] ?? '';
            if ($type === 'type.googleapis.com/google.rpc.ErrorInfo') {
                $reason = $detail['reason'] ?? '';
                $domain = $detail['domain'] ?? '';
                $metadata = $detail['metadata'] ?? [];
            } elseif ($type === 'type.googleapis.com/google.rpc.BadRequest') {
                foreach ($detail['fieldViolations'] ?? [] as $v) {
                    $violations[] = ['field' => $v['field'] ?? '', 'description' => $v['description'] ?? ''];
                }
            }
        }
        return new self((string)($status['message'] ?? "HTTP $httpStatus"), (int)($status['code'] ?? 2), $httpStatus, $reason, $domain, $metadata, $violations);
    }
}
