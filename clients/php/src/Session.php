<?php

declare(strict_types=1);

namespace Ctxc\Client;

/**
 * Session is a Route session whose state lives in the opaque blob ctxc
 * returns: the runtime stores blob() (base64, as the JSON carries it) between
 * requests and never looks inside.
 */
final class Session
{
    public function __construct(
        private readonly Client $client,
        private readonly array $model,
        private readonly string $agentId = '',
        private readonly string $profile = '',
        private string $blob = '',
    ) {
    }

    /** The state to persist: base64 of the opaque blob. */
    public function blob(): string
    {
        return $this->blob;
    }

    /**
     * A user turn: starts a new execution. A string is a user message; leading
     * system messages replace the system prompt.
     *
     * @param array|string ...$messages
     */
    public function user(array|string ...$messages): array
    {
        $turn = array_map(static fn($m) => is_string($m) ? Messages::user($m) : $m, $messages);
        return $this->route(['userTurn' => ['messages' => $turn]]);
    }

    /** One agent step: the assistant's output and its tool results; FINISH_REASON_STOP ends the execution. */
    public function step(array $messages, string $finishReason = 'FINISH_REASON_STOP', array $usage = []): array
    {
        $step = ['messages' => $messages, 'finishReason' => $finishReason];
        if ($usage !== []) {
            $step['usage'] = $usage;
        }
        return $this->route(['step' => $step]);
    }

    /** Out-of-band context, stored without a model call. */
    public function event(string $text, array $metadata = []): array
    {
        return $this->route(['event' => ['text' => $text] + ($metadata !== [] ? ['metadata' => $metadata] : [])]);
    }

    /** The context of the next model call (a CompileResponse). */
    public function compile(array $options = []): array
    {
        if ($this->blob === '') {
            throw new \LogicException('the session is empty: route a user turn first');
        }
        $request = ['stateBlob' => $this->blob];
        if ($this->profile !== '') {
            $request['profile'] = $this->profile;
        }
        if ($options !== []) {
            $request['options'] = $options;
        }
        return $this->client->compile($request);
    }

    private function route(array $input): array
    {
        $request = $input;
        if ($this->profile !== '') {
            $request['profile'] = $this->profile;
        }
        if ($this->blob === '') {
            $request['state'] = ['model' => $this->model] + ($this->agentId !== '' ? ['agentId' => $this->agentId] : []);
            $request['wantStateBlob'] = true;
        } else {
            $request['stateBlob'] = $this->blob;
        }
        $answer = $this->client->route($request);
        $this->blob = $answer['stateBlob'] ?? '';
        return $answer;
    }
}
