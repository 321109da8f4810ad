<?php

declare(strict_types=1);

namespace Ctxc\Client\Tests;

use Ctxc\Client\Client;
use Ctxc\Client\CtxcException;
use Ctxc\Client\Messages as M;

final class ClientTest extends ServerTestCase
{
    private Client $client;

    protected function setUp(): void
    {
        $this->client = new Client(static::$server->httpUrl);
    }

    public function testCompile(): void
    {
        $reply = $this->client->compile(['state' => ['model' => ['name' => 'gpt-4o'],
            'context' => ['systemPrompt' => 'You are helpful.', 'messages' => [M::user('Hello!', 'u1')]]]]);
        $this->assertSame(['ctxc-system', 'u1'], array_column($reply['messages'], 'id'));
        $this->assertSame(['ROLE_SYSTEM', 'ROLE_USER'], array_column($reply['messages'], 'role'));
        $this->assertSame(128000, $reply['budget']['contextWindowTokenCount']);
    }

    public function testCompactTheCodingAgentExample(): void
    {
        $example = json_decode(file_get_contents(dirname(__DIR__, 3) . '/examples/coding-agent.json'), true, 512, JSON_THROW_ON_ERROR);
        $reply = $this->client->compact(['state' => $example['state'], 'profile' => 'policy-driven', 'options' => ['maxContextTokenCount' => 2000]]);
        $masked = array_column(array_filter($reply['state']['context']['messages'], static fn($m) => isset($m['mask'])), 'id');
        $this->assertSame(['t1', 't3'], array_values($masked));
        $this->assertLessThan($reply['budgetBefore']['usedTokenCount'], $reply['budgetAfter']['usedTokenCount']);
    }

    public function testBudget(): void
    {
        $b = $this->client->budget(['state' => ['model' => ['name' => 'gpt-4o'], 'context' => ['messages' => [M::user('How many tokens?', 'u1')]]]])['budget'];
        $this->assertSame($b['contextWindowTokenCount'] - $b['usedTokenCount'] - $b['reservedOutputTokenCount'], $b['remainingTokenCount']);
        $this->assertSame('TOKEN_COUNT_PROVENANCE_EXACT', $b['provenance']);
    }

    public function testCountTokens(): void
    {
        $reply = $this->client->countTokens(['model' => 'gpt-4o', 'texts' => ['Hello, world!']]);
        $this->assertSame(['o200k_base', 4], [$reply['counter'], $reply['totalTokenCount']]);
    }

    public function testListProfiles(): void
    {
        $default = array_filter($this->client->listProfiles()['profiles'], static fn($p) => $p['default'] ?? false);
        $this->assertSame(['pragmatic'], array_values(array_column($default, 'name')));
    }

    public function testBadStateNamesReasonAndField(): void
    {
        try {
            $this->client->compile(['state' => ['model' => ['name' => 'gpt-4o'],
                'context' => ['messages' => [M::withId(M::tool(M::toolResult('', '', 'ok')), 't1')]]]]);
            $this->fail('a tool result without a call id was accepted');
        } catch (CtxcException $e) {
            $this->assertSame([3, 400, 'INVALID_STATE', 'ctxc'], [$e->grpcCode, $e->httpStatus, $e->reason, $e->domain]);
            $this->assertSame(['state.context.messages[0].parts[0].tool_result.tool_call_id'], array_column($e->fieldViolations, 'field'));
        }
    }

    public function testIrreducibleContextCarriesItsNumbers(): void
    {
        $state = Conversation::state(2);
        $state['context']['systemPrompt'] = str_repeat('Always run the tests before you answer. ', 100);
        try {
            $this->client->compile(['state' => $state, 'profile' => 'budget-aware', 'options' => ['maxContextTokenCount' => 500]]);
            $this->fail('an 800-token system prompt fit a 500-token window');
        } catch (CtxcException $e) {
            $this->assertSame([8, 429, 'CONTEXT_IRREDUCIBLE'], [$e->grpcCode, $e->httpStatus, $e->reason]);
            $this->assertGreaterThan((int)$e->metadata['available_tokens'], (int)$e->metadata['needed_tokens']);
        }
    }

    public function testNoServerIsUnavailableAfterRetries(): void
    {
        $client = new Client('http://127.0.0.1:1', timeout: 5.0, maxAttempts: 2);
        try {
            $client->listProfiles();
            $this->fail('a call without a server succeeded');
        } catch (CtxcException $e) {
            $this->assertSame([14, 0], [$e->grpcCode, $e->httpStatus]);
        }
    }
}
