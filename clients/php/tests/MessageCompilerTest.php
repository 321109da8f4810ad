<?php

declare(strict_types=1);

namespace Ctxc\Client\Tests;

use Ctxc\Client\Client;
use Ctxc\Client\Contracts\CanCompileMessages;
use Ctxc\Client\MessageCompiler;

final class MessageCompilerTest extends ServerTestCase
{

    private function compiler(string $profile, array $options = []): CanCompileMessages
    {
        return new MessageCompiler(new Client(static::$server->httpUrl), $profile, $options);
    }

    public function testSmallStateComesBackWhole(): void
    {
        $state = Conversation::state(2);
        $messages = $this->compiler('pragmatic')->compile($state);
        $this->assertSame(['role' => 'ROLE_SYSTEM', 'text' => Conversation::SYSTEM_PROMPT], ['role' => $messages[0]['role'], 'text' => $messages[0]['parts'][0]['text']]);
        $this->assertSame(array_column($state['context']['messages'], 'id'), array_column(array_slice($messages, 1), 'id'));
        $this->assertSame($state['context']['messages'], array_slice($messages, 1));
    }

    public function testLongToolUsingConversationIsMaskedKeepingPairsAndIds(): void
    {
        $state = Conversation::state(12);
        $compiler = new MessageCompiler(new Client(static::$server->httpUrl), 'budget-aware', ['maxContextTokenCount' => 16000, 'reservedOutputTokenCount' => 500]);
        $messages = $compiler->compile($state);

        $this->assertSame('ctxc-system', $messages[0]['id']);
        $this->assertSame(Conversation::SYSTEM_PROMPT, $messages[0]['parts'][0]['text']);
        Conversation::assertToolPairing($messages);
        $this->assertSame(array_column($state['context']['messages'], 'id'), array_column(array_slice($messages, 1), 'id'), 'budget-aware drops nothing here');
        $own = array_column($state['context']['messages'], null, 'id');
        $changed = [];
        foreach (array_slice($messages, 1) as $m) {
            if ($m !== $own[$m['id']]) {
                $changed[] = $m['id'];
                $result = $m['parts'][0]['toolResult'];
                $this->assertSame($own[$m['id']]['parts'][0]['toolResult']['toolCallId'], $result['toolCallId']);
                $this->assertStringStartsWith('[output masked: message ' . $m['id'], $result['content']);
            }
        }
        // The oldest file reads are masked, oldest first; the newest steps' never.
        $this->assertGreaterThanOrEqual(5, count($changed));
        $this->assertSame(array_map(static fn($t) => "t{$t}r", range(1, count($changed))), $changed);
        $this->assertNotContains('t12r', $changed);
        $budget = $compiler->lastResponse()['budget'];
        $this->assertLessThanOrEqual(16000 - 500, $budget['usedTokenCount']);
        $masked = array_filter($compiler->lastResponse()['report']['messages'], static fn($r) => $r['disposition'] === 'DISPOSITION_MASKED');
        $this->assertCount(count($changed), $masked);
    }

    public function testPolicyDrivenSummarizes(): void
    {
        $state = Conversation::state(12);
        $messages = $this->compiler('policy-driven', ['maxContextTokenCount' => 4000, 'reservedOutputTokenCount' => 500])->compile($state);
        $this->assertSame('ctxc-system', $messages[0]['id']);
        $this->assertSame('u1', $messages[1]['id'], 'the first task is kept');
        $this->assertStringStartsWith('ctxc-summary-', $messages[2]['id']);
        $this->assertSame(['MESSAGE_KIND_SUMMARY', 'ROLE_USER'], [$messages[2]['kind'], $messages[2]['role']]);
        $this->assertStringStartsWith('Summary of ', $messages[2]['parts'][0]['text']);
        $this->assertSame(end($state['context']['messages']), end($messages), 'the newest turn is sent as it was');
        $this->assertLessThan(count($state['context']['messages']), count($messages));
        Conversation::assertToolPairing($messages);
    }
}
