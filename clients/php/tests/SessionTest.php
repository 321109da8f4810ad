<?php

declare(strict_types=1);

namespace Ctxc\Client\Tests;

use Ctxc\Client\Client;
use Ctxc\Client\CtxcException;
use Ctxc\Client\Messages as M;

final class SessionTest extends ServerTestCase
{

    public function testSessionWithToolsAnEventAndASecondTurn(): void
    {
        $client = new Client(static::$server->httpUrl);
        $s = $client->session('gpt-4o', agentId: 'php-test');
        $r = $s->user(M::system('You are a careful coding agent.'), 'The tests in ./store fail. Fix them.');
        $this->assertSame(['exec-1-u1'], $r['appendedMessageIds']);
        $this->assertTrue($r['systemPromptReplaced']);
        $r = $s->step([
            M::assistant(M::toolCall('c1', 'run_tests', ['pkg' => './store'])),
            M::tool(M::toolResult('c1', 'run_tests', "--- FAIL: TestReserve", true)),
        ], 'FINISH_REASON_TOOL_CALLS', ['inputTokenCount' => 150, 'outputTokenCount' => 30]);
        $this->assertSame(['exec-1-s0-0', 'exec-1-s0-1'], $r['appendedMessageIds']);
        $this->assertFalse($r['executionEnded'] ?? false);

        $resumed = $client->session('gpt-4o', blob: $s->blob());
        $r = $resumed->step([M::assistant('Fixed: Reserve checks the stock.')]);
        $this->assertTrue($r['executionEnded']);
        $this->assertSame(['evt-4'], $resumed->event('The user checked in at Harrogate.')['appendedMessageIds']);
        $this->assertSame(['exec-2-u0'], $resumed->user('Add a test for n <= 0.')['appendedMessageIds']);

        $compiled = $resumed->compile();
        $this->assertSame(['ctxc-system', 'exec-1-u1', 'exec-1-s0-0', 'exec-1-s0-1', 'exec-1-s1-0', 'evt-4', 'exec-2-u0'], array_column($compiled['messages'], 'id'));
        $this->assertSame('TOKEN_COUNT_PROVENANCE_ANCHORED', $compiled['budget']['provenance']);
        Conversation::assertToolPairing($compiled['messages']);
        $view = $resumed->compile(['view' => 'VIEW_CONVERSATION']);
        $this->assertSame(['ctxc-system', 'exec-1-u1', 'exec-1-s1-0', 'evt-4', 'exec-2-u0'], array_column($view['messages'], 'id'));

        $this->expectException(CtxcException::class);
        $client->session('gpt-4o', blob: substr($resumed->blob(), 0, -8))->compile();
    }

    public function testEmptySessionCannotCompile(): void
    {
        $this->expectException(\LogicException::class);
        (new Client(static::$server->httpUrl))->session('gpt-4o')->compile();
    }
}
