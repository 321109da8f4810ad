<?php

declare(strict_types=1);

namespace Ctxc\Client;

/**
 * StateRefs sends a growing state by reference: a runtime that holds its
 * agent's state (an array in the request's shape) and calls every turn passes
 * the whole state each time, and StateRefs sends only the messages appended
 * since the state of its previous call, naming that state by the stateRef its
 * response carried (baseStateRef + appendedMessages, state left out). A
 * reference the server cannot resolve (expired, evicted, a restarted server,
 * another caller: FAILED_PRECONDITION with reason STATE_REF_NOT_FOUND) is
 * answered by sending the call again whole, so the caller never sees it.
 *
 * The previous state is compared with the new one as the caller sent it
 * (Compile, Budget) or as the server returned it (Route, Compact: continue
 * from the returned `state`): its messages must begin the new log exactly
 * (===, keys in the same order) and its other fields must be the same; any
 * other change (an earlier message edited, a new system prompt, other tools)
 * sends the whole state. Requests with stateBlob, inputJson, resetHistory or
 * their own baseStateRef go as they are. A StateRefs follows one state (one
 * agent).
 */
final class StateRefs
{
    /** The ErrorInfo reason of a reference the server cannot resolve. */
    public const REASON_NOT_FOUND = 'STATE_REF_NOT_FOUND';

    /** Request fields (JSON and proto names) that keep a method's call whole. */
    private const WHOLE_WITH = [
        'Compile' => ['stateBlob', 'state_blob', 'inputJson', 'input_json', 'resetHistory', 'reset_history'],
        'Route' => ['stateBlob', 'state_blob', 'resetHistory', 'reset_history'],
        'Budget' => [],
        'Compact' => [],
    ];
    private const CALLER_REF = ['baseStateRef', 'base_state_ref', 'appendedMessages', 'appended_messages'];

    /** The reference of the followed state, '' when none is followed. */
    private string $ref = '';
    /** The followed state's log. */
    private array $messages = [];
    /** The followed state without its log. */
    private array $rest = [];
    private array $lastRequest = [];
    private int $byReference = 0;
    private int $misses = 0;

    public function __construct(private readonly Client $client)
    {
    }

    /** Client::compile, with the state sent by reference when it extends the previous call's. */
    public function compile(array $request): array
    {
        return $this->call('Compile', $request);
    }

    /** Client::budget, with the state sent by reference when it extends the previous call's. */
    public function budget(array $request): array
    {
        return $this->call('Budget', $request);
    }

    /** Client::compact, by reference when it can; the next call continues from the returned state. */
    public function compact(array $request): array
    {
        return $this->call('Compact', $request);
    }

    /** Client::route, by reference when it can; the next call continues from the returned state. */
    public function route(array $request): array
    {
        return $this->call('Route', $request);
    }

    /**
     * Follows $state named by $ref, as if a call had just given them: a
     * reference a runtime kept across processes (see ref()) with the state it
     * names, as the call that gave it sent it (Compile, Budget) or returned it
     * (Route, Compact). A reference the server no longer knows costs one
     * extra call; a wrong pairing of reference and state gives wrong answers.
     */
    public function resume(string $ref, array $state): void
    {
        $this->follow($ref, $state);
    }

    /** The reference of the state the next call may extend; '' when there is none. */
    public function ref(): string
    {
        return $this->ref;
    }

    /** Forgets the followed state: the next call is sent whole. */
    public function forget(): void
    {
        $this->follow('', null);
    }

    /** The request last sent to the server (after a miss, the whole one sent again). */
    public function lastRequest(): array
    {
        return $this->lastRequest;
    }

    /**
     * How many calls went by reference, and how many of those the server
     * could not resolve (and were sent again whole).
     *
     * @return array{byReference: int, misses: int}
     */
    public function counts(): array
    {
        return ['byReference' => $this->byReference, 'misses' => $this->misses];
    }

    private function call(string $method, array $request): array
    {
        $state = $request['state'] ?? null;
        if (self::anySet($request, self::CALLER_REF)) {
            // The caller names its own base state: what it names is unknown here.
            $this->forget();
            return $this->send($method, $request);
        }
        $canRef = is_array($state) && !self::anySet($request, self::WHOLE_WITH[$method]);
        $appended = $canRef ? $this->extends($state) : null;
        if ($appended === null) {
            $response = $this->send($method, $request);
        } else {
            $byRef = $request;
            unset($byRef['state']);
            $byRef['baseStateRef'] = $this->ref;
            $byRef['appendedMessages'] = $appended;
            $this->byReference++;
            try {
                $response = $this->send($method, $byRef);
            } catch (CtxcException $e) {
                if ($e->grpcCode !== 9 || $e->reason !== self::REASON_NOT_FOUND) {
                    throw $e;
                }
                $this->misses++;
                $this->forget();
                $response = $this->send($method, $request);
            }
        }
        $returns = $method === 'Route' || $method === 'Compact';
        $this->follow((string)($response['stateRef'] ?? ''), $returns ? ($response['state'] ?? null) : ($canRef ? $state : null));
        return $response;
    }

    private function send(string $method, array $request): array
    {
        $this->lastRequest = $request;
        return $this->client->call($method, $request);
    }

    /**
     * The messages $state appends to the followed state, or null when $state
     * is not the followed state with messages appended and nothing else changed.
     */
    private function extends(array $state): ?array
    {
        if ($this->ref === '') {
            return null;
        }
        $log = self::logOf($state);
        $n = count($this->messages);
        if ($log === null || count($log) < $n) {
            return null;
        }
        // Messages the caller kept are the same arrays (copy on write), which === matches at once.
        if (array_slice($log, 0, $n) !== $this->messages || self::withoutLog($state) !== $this->rest) {
            return null;
        }
        return array_slice($log, $n);
    }

    /** Makes $state, named $ref, the state the next call may extend. */
    private function follow(string $ref, ?array $state): void
    {
        $log = $state === null ? null : self::logOf($state);
        if ($ref === '' || $log === null) {
            [$this->ref, $this->messages, $this->rest] = ['', [], []];
            return;
        }
        [$this->ref, $this->messages, $this->rest] = [$ref, $log, self::withoutLog($state)];
    }

    /** $state's log, or null when it is not a list (an object the caller built otherwise). */
    private static function logOf(array $state): ?array
    {
        $context = $state['context'] ?? [];
        $log = is_array($context) ? ($context['messages'] ?? []) : null;
        return is_array($log) && array_is_list($log) ? $log : null;
    }

    /** $state without its log; a context left empty is left out (as the server leaves it out). */
    private static function withoutLog(array $state): array
    {
        if (is_array($state['context'] ?? null)) {
            unset($state['context']['messages']);
            if ($state['context'] === []) {
                unset($state['context']);
            }
        }
        return $state;
    }

    private static function anySet(array $request, array $fields): bool
    {
        foreach ($fields as $field) {
            $v = $request[$field] ?? null;
            if ($v !== null && $v !== '' && $v !== false && $v !== []) {
                return true;
            }
        }
        return false;
    }
}
