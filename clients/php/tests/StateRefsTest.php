<?php

declare(strict_types=1);

namespace Ctxc\Client\Tests;

use Ctxc\Client\Client;
use Ctxc\Client\CtxcException;
use Ctxc\Client\Messages as M;
use Ctxc\Client\StateRefs;

final class StateRefsTest extends ServerTestCase
{
    private const OPTIONS = ['profile' => 'budget-aware', 'options' => ['maxContextTokenCount' => 20000]];

    private Client $client;

    protected function setUp(): void
    {
        $this->client = new Client(static::$server->httpUrl);
    }

    /** The state after $turns turns of the coding agent's conversation (9 messages a turn). */
    private static function grown(int $turns): array
    {
        static $whole = null;
        $whole ??= Conversation::state(30);
        $state = $whole;
        $state['context']['messages'] = array_slice($whole['context']['messages'], 0, 9 * $turns);
        return $state;
    }

    public function testGrowingStateGoesByReferenceWithTheSameAnswers(): void
    {
        $refs = $this->client->stateRefs();
        $ref = '';
        for ($turn = 1; $turn <= 30; $turn++) {
            $state = self::grown($turn);
            $got = $refs->compile(['state' => $state] + self::OPTIONS);
            $sent = $refs->lastRequest();
            if ($turn === 1) {
                $this->assertSame($state, $sent['state'], 'the first call goes whole');
            } else {
                $this->assertArrayNotHasKey('state', $sent, "turn $turn");
                $this->assertSame([$ref, array_slice($state['context']['messages'], -9)], [$sent['baseStateRef'], $sent['appendedMessages']], "turn $turn");
                $this->assertSame(self::OPTIONS, array_intersect_key($sent, self::OPTIONS), "turn $turn keeps profile and options");
            }
            $this->assertMatchesRegularExpression('/^sr1-[0-9a-f]{32}$/', $got['stateRef']);
            $ref = $got['stateRef'];

            $want = $this->client->compile(['state' => $state] + self::OPTIONS);
            $this->assertSame($want['messages'], $got['messages'], "turn $turn");
            $this->assertSame($want['budget'], $got['budget'], "turn $turn");
        }
        $this->assertLessThan(count($state['context']['messages']), count($got['messages']), 'the 30th turn was compacted');
        Conversation::assertToolPairing($got['messages']);
        $this->assertSame(['byReference' => 29, 'misses' => 0], $refs->counts());

        // Budget of the same state goes by reference too, with nothing appended.
        $budget = $refs->budget(['state' => $state] + self::OPTIONS);
        $this->assertSame([$ref, []], [$refs->lastRequest()['baseStateRef'], $refs->lastRequest()['appendedMessages']]);
        $this->assertSame($this->client->budget(['state' => $state] + self::OPTIONS)['budget'], $budget['budget']);
    }

    public function testProtoFieldNamesAreComparedAsSent(): void
    {
        $snake = static function (array $value) use (&$snake): array {
            $out = [];
            foreach ($value as $k => $v) {
                $out[is_string($k) ? strtolower(preg_replace('/[A-Z]/', '_$0', $k)) : $k] = is_array($v) ? $snake($v) : $v;
            }
            return $out;
        };
        $refs = $this->client->stateRefs();
        foreach ([2, 3] as $turns) {
            $state = $snake(self::grown($turns));
            $this->assertArrayHasKey('system_prompt', $state['context']);
            $got = $refs->compile(['state' => $state] + self::OPTIONS);
            $this->assertSame($this->client->compile(['state' => self::grown($turns)] + self::OPTIONS)['messages'], $got['messages']);
        }
        $this->assertArrayNotHasKey('state', $refs->lastRequest());
        $this->assertSame(['byReference' => 1, 'misses' => 0], $refs->counts());
    }

    public function testRouteAndCompactContinueFromTheReturnedState(): void
    {
        $refs = $this->client->stateRefs();
        $r = $refs->route(['state' => ['model' => ['name' => 'gpt-4o']], 'userTurn' => ['messages' => [M::user('The tests in ./store fail. Fix them.')]]]);
        $steps = [
            ['messages' => [M::assistant(M::toolCall('c1', 'run_tests', ['pkg' => './store'])),
                M::tool(M::toolResult('c1', 'run_tests', str_repeat("--- FAIL: TestReserve\n", 400), true))], 'finishReason' => 'FINISH_REASON_TOOL_CALLS'],
            ['messages' => [M::assistant('Fixed: Reserve checks the stock.')], 'finishReason' => 'FINISH_REASON_STOP'],
        ];
        foreach ($steps as $step) {
            $previous = $r;
            $r = $refs->route(['state' => $r['state'], 'step' => $step]);
            $this->assertSame(['baseStateRef' => $previous['stateRef'], 'appendedMessages' => []],
                array_intersect_key($refs->lastRequest(), ['baseStateRef' => 1, 'appendedMessages' => 1]));
            $this->assertArrayNotHasKey('state', $refs->lastRequest());
        }
        $r = $refs->route(['state' => $r['state'], 'userTurn' => ['messages' => [M::user('Now add a test.')]]]);
        $this->assertSame(['exec-2-u0'], $r['appendedMessageIds']);
        $this->assertSame(['exec-1-u0', 'exec-1-s0-0', 'exec-1-s0-1', 'exec-1-s1-0', 'exec-2-u0'], array_column($r['state']['context']['messages'], 'id'));

        // The runtime appends a message of its own to the returned state, then compacts it.
        $state = $r['state'];
        $state['context']['messages'][] = M::withId(M::assistant('Reading the store.'), 'mine-1');
        $request = ['state' => $state, 'profile' => 'policy-driven', 'options' => ['maxContextTokenCount' => 2000]];
        $compacted = $refs->compact($request);
        $this->assertSame([$r['stateRef'], [M::withId(M::assistant('Reading the store.'), 'mine-1')]],
            [$refs->lastRequest()['baseStateRef'], $refs->lastRequest()['appendedMessages']]);
        $this->assertSame($this->client->compact($request)['state'], $compacted['state']);
        $this->assertLessThan($compacted['budgetBefore']['usedTokenCount'], $compacted['budgetAfter']['usedTokenCount']);
        $this->assertNotSame($state['context']['messages'], $compacted['state']['context']['messages'], 'compaction changed the log');

        // The next call extends the compacted state, not the one sent.
        $next = $compacted['state'];
        $next['context']['messages'][] = M::user('Also cover n <= 0.', 'mine-2');
        $got = $refs->compile(['state' => $next]);
        $this->assertSame([$compacted['stateRef'], [M::user('Also cover n <= 0.', 'mine-2')]],
            [$refs->lastRequest()['baseStateRef'], $refs->lastRequest()['appendedMessages']]);
        $this->assertSame($this->client->compile(['state' => $next])['messages'], $got['messages']);
        $this->assertSame(['byReference' => 5, 'misses' => 0], $refs->counts());
    }

    public function testMissAfterARestartIsInvisible(): void
    {
        $server = new Server();
        $address = parse_url($server->httpUrl, PHP_URL_HOST) . ':' . parse_url($server->httpUrl, PHP_URL_PORT);
        try {
            $refs = (new Client($server->httpUrl))->stateRefs();
            $refs->compile(['state' => self::grown(2)] + self::OPTIONS);
            $server->stop();
            $server = new Server($address); // the same address, none of the old references
            $state = self::grown(3);
            $got = $refs->compile(['state' => $state] + self::OPTIONS);
            $this->assertSame($state, $refs->lastRequest()['state'], 'sent again whole');
            $this->assertSame(['byReference' => 1, 'misses' => 1], $refs->counts());
            $this->assertSame($this->client->compile(['state' => $state] + self::OPTIONS)['messages'], $got['messages']);

            // The whole call's reference is followed again.
            $refs->compile(['state' => self::grown(4)] + self::OPTIONS);
            $this->assertSame($got['stateRef'], $refs->lastRequest()['baseStateRef']);
            $this->assertSame(['byReference' => 2, 'misses' => 1], $refs->counts());
        } finally {
            $server->stop();
        }
    }

    public function testMissOfAReferenceNeverGivenIsInvisible(): void
    {
        $refs = $this->client->stateRefs();
        $never = 'sr1-' . str_repeat('0', 32);
        $refs->resume($never, self::grown(1));
        $state = self::grown(2);
        foreach (['compile', 'budget'] as $method) {
            $refs->resume($never, self::grown(1));
            $got = $refs->$method(['state' => $state] + self::OPTIONS);
            $this->assertSame($state, $refs->lastRequest()['state'], "$method sent again whole");
            $this->assertSame($this->client->$method(['state' => $state] + self::OPTIONS)['budget'], $got['budget'], $method);
            $this->assertNotSame($never, $refs->ref());
        }
        $this->assertSame(['byReference' => 2, 'misses' => 2], $refs->counts());

        // What the server says of it, which the tracker hides.
        try {
            $this->client->compile(['baseStateRef' => $never, 'appendedMessages' => []]);
            $this->fail('a reference never given was resolved');
        } catch (CtxcException $e) {
            $this->assertSame([9, 400, 'STATE_REF_NOT_FOUND'], [$e->grpcCode, $e->httpStatus, $e->reason]);
        }
    }

    public function testChangedHistoryOrSystemPromptGoesWhole(): void
    {
        $refs = $this->client->stateRefs();
        $refs->compile(['state' => self::grown(2)] + self::OPTIONS);

        $edited = self::grown(3);
        $edited['context']['messages'][3]['parts'][0]['toolResult']['content'] = '--- FAIL: TestReserve1 (edited)';
        $this->assertWhole($refs, $edited);

        $prompt = self::grown(4);
        $prompt['context']['messages'][3] = $edited['context']['messages'][3];
        $next = $refs->compile(['state' => $prompt] + self::OPTIONS);
        $this->assertSame(array_slice($prompt['context']['messages'], 27), $refs->lastRequest()['appendedMessages'], 'the edited log, extended, goes by reference');
        $this->assertSame($this->client->compile(['state' => $prompt] + self::OPTIONS)['messages'], $next['messages']);

        $prompt['context']['systemPrompt'] = 'You are a terse coding agent.';
        $this->assertWhole($refs, $prompt);

        $fewer = $prompt;
        $fewer['context']['messages'] = array_slice($prompt['context']['messages'], 0, 9);
        $this->assertWhole($refs, $fewer);
        $this->assertSame(['byReference' => 1, 'misses' => 0], $refs->counts());

        // A state blob or the caller's own reference is sent as it is.
        $blob = $this->client->route(['state' => ['model' => ['name' => 'gpt-4o']], 'userTurn' => ['messages' => [M::user('Hello!')]], 'wantStateBlob' => true])['stateBlob'];
        $request = ['stateBlob' => $blob];
        $this->assertSame(['exec-1-u0'], array_column($refs->compile($request)['messages'], 'id'));
        $this->assertSame($request, $refs->lastRequest());
        $this->assertSame('', $refs->ref(), 'a blob names no state the tracker holds');
    }

    private function assertWhole(StateRefs $refs, array $state): void
    {
        $got = $refs->compile(['state' => $state] + self::OPTIONS);
        $this->assertSame(['state' => $state] + self::OPTIONS, $refs->lastRequest(), 'sent whole');
        $want = $this->client->compile(['state' => $state] + self::OPTIONS);
        $this->assertSame($want['messages'], $got['messages']);
        $this->assertSame($want['budget'], $got['budget']);
    }
}
