<?php

declare(strict_types=1);

namespace Ctxc\Client\Tests;

use Ctxc\Client\Messages as M;
use PHPUnit\Framework\Assert;

/**
 * A coding agent's state: each turn a request, two parallel tool calls (a
 * file read and a failing test run), a fix, a passing test run and the answer.
 */
final class Conversation
{
    public const SYSTEM_PROMPT = 'You are a careful coding agent working in /src/inventory. Use the tools; run the tests before you answer.';

    public static function state(int $turns): array
    {
        $log = [];
        for ($t = 1; $t <= $turns; $t++) {
            $path = "internal/stock/part$t.go";
            $source = "package stock\n";
            for ($i = 0; $i < 120; $i++) {
                $source .= "func helper{$t}_$i(s *Stock, sku string, n int) error { return s.take(ctx, sku, n+$i) } // line $i\n";
            }
            $log[] = M::user("Step $t: the tests for $path fail. Find out why and fix it.", "u$t");
            $log[] = M::withId(M::assistant("I'll read $path and run its tests.", M::toolCall("call_read_$t", 'read_file', ['path' => $path]),
                M::toolCall("call_test_$t", 'run_tests', ['packages' => './internal/stock/...'])), "a$t");
            $log[] = M::withId(M::tool(M::toolResult("call_read_$t", 'read_file', $source)), "t{$t}r");
            $log[] = M::withId(M::tool(M::toolResult("call_test_$t", 'run_tests', "--- FAIL: TestReserve$t\n    want ErrOutOfStock, got <nil>", true)), "t{$t}t");
            $log[] = M::withId(M::assistant(M::toolCall("call_write_$t", 'write_file', ['path' => $path])), "w$t");
            $log[] = M::withId(M::tool(M::toolResult("call_write_$t", 'write_file', "wrote $path")), "t{$t}w");
            $log[] = M::withId(M::assistant(M::toolCall("call_retest_$t", 'run_tests', ['packages' => './internal/stock/...'])), "v$t");
            $log[] = M::withId(M::tool(M::toolResult("call_retest_$t", 'run_tests', "ok  \tinventory/internal/stock\t0.41s")), "t{$t}v");
            $log[] = M::withId(M::assistant("Fixed step $t: Reserve$t now returns ErrOutOfStock when the stock is short."), "r$t");
        }
        $log[] = M::user('Summarize what you changed across all steps.', 'u-last');
        return ['model' => ['name' => 'gpt-4o'], 'context' => ['systemPrompt' => self::SYSTEM_PROMPT, 'messages' => $log]];
    }

    /** Every tool call is answered by exactly one later result, and every result answers an earlier call. */
    public static function assertToolPairing(array $messages): void
    {
        $open = [];
        foreach ($messages as $i => $m) {
            foreach ($m['parts'] ?? [] as $part) {
                if (isset($part['toolCall'])) {
                    Assert::assertArrayNotHasKey($part['toolCall']['id'], $open, "messages[$i]: call repeated");
                    $open[$part['toolCall']['id']] = true;
                }
                if (isset($part['toolResult'])) {
                    $id = $part['toolResult']['toolCallId'];
                    Assert::assertArrayHasKey($id, $open, "messages[$i]: result $id answers no open call");
                    unset($open[$id]);
                }
            }
        }
        Assert::assertSame([], array_keys($open), 'tool calls without a result');
    }
}
