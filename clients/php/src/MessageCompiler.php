<?php

declare(strict_types=1);

namespace Ctxc\Client;

use Ctxc\Client\Contracts\CanCompileMessages;

/**
 * MessageCompiler compiles through ctxc with one profile: swapping the
 * profile ("pragmatic", "budget-aware", "policy-driven", "llm-assisted" or a server's own)
 * swaps the whole context strategy, with no policy code in the runtime.
 * lastResponse() keeps the budget and report of the latest compile.
 */
final class MessageCompiler implements CanCompileMessages
{
    private array $lastResponse = [];

    /** @param array $options CompileOptions as JSON (maxContextTokenCount, view, templateVariables...) */
    public function __construct(
        private readonly Client $client,
        private readonly string $profile = '',
        private readonly array $options = [],
    ) {
    }

    public function compile(array $state): array
    {
        $request = ['state' => $state];
        if ($this->profile !== '') {
            $request['profile'] = $this->profile;
        }
        if ($this->options !== []) {
            $request['options'] = $this->options;
        }
        $this->lastResponse = $this->client->compile($request);
        return $this->lastResponse['messages'] ?? [];
    }

    /** The whole CompileResponse of the latest compile (budget, report). */
    public function lastResponse(): array
    {
        return $this->lastResponse;
    }
}
