<?php
// A PHP agent runtime calling ctxc over HTTP/JSON: nothing but php-cli, no gRPC
// extension. It compiles a small state, then runs a session through Route (a
// user turn, a tool step whose test run fails, the final answer), compiles the
// result and sends one bad request. It checks every answer and exits non-zero
// on the first surprise; the integration tests run it against the real server.
//
//     ./bin/ctxc serve --http-listen 127.0.0.1:8080
//     php examples/clients/php/compile.php http://127.0.0.1:8080

$base = rtrim($argv[1] ?? 'http://127.0.0.1:8080', '/');

// call posts a request to one RPC and returns [HTTP status, decoded answer].
function call(string $base, string $method, array $request): array
{
    $context = stream_context_create(['http' => [
        'method' => 'POST',
        'header' => "Content-Type: application/json\r\n",
        'content' => json_encode($request, JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR),
        'timeout' => 10,
        // Read the JSON status of 4xx and 5xx answers instead of failing.
        'ignore_errors' => true,
    ]]);
    $body = @file_get_contents("$base/ctxc.v1.ContextCompilerService/$method", false, $context);
    if ($body === false) {
        fail("$method: no answer from $base: " . (error_get_last()['message'] ?? 'unknown error'));
    }
    // $http_response_header is set by file_get_contents; its first line is the status line.
    preg_match('{^HTTP/\S+ (\d{3})}', $http_response_header[0] ?? '', $status);
    return [(int)($status[1] ?? 0), json_decode($body, true, 512, JSON_THROW_ON_ERROR)];
}

// ok calls an RPC that must succeed and returns its answer.
function ok(string $base, string $method, array $request): array
{
    [$status, $answer] = call($base, $method, $request);
    if ($status !== 200) {
        fail("$method: HTTP $status: " . json_encode($answer));
    }
    return $answer;
}

function expect(string $what, $got, $want): void
{
    if ($got !== $want) {
        fail("$what: got " . json_encode($got) . ', want ' . json_encode($want));
    }
}

function fail(string $message): void
{
    fwrite(STDERR, "php client: $message\n");
    exit(1);
}

function text(string $role, string $text): array
{
    return ['role' => $role, 'parts' => [['text' => $text]]];
}

// 1. One compile of a state the runtime keeps itself.
$state = [
    'model' => ['name' => 'gpt-4o', 'provider' => 'openai'],
    'context' => [
        'systemPrompt' => 'You are a concise assistant.',
        'messages' => [['id' => 'u1'] + text('ROLE_USER', 'What is the capital of Portugal?')],
    ],
];
$compiled = ok($base, 'Compile', ['state' => $state]);
expect('compiled roles', array_column($compiled['messages'], 'role'), ['ROLE_SYSTEM', 'ROLE_USER']);
if (($compiled['budget']['usedTokenCount'] ?? 0) <= 0) {
    fail('the budget counts no tokens: ' . json_encode($compiled['budget']));
}
echo "compile: {$compiled['budget']['usedTokenCount']} tokens used\n";

// 2. A session: ctxc appends each step to the log and returns the new state.
$state = ['agentId' => 'php-coder', 'model' => ['name' => 'gpt-4o', 'provider' => 'openai']];
$route = function (array $input) use ($base, &$state): array {
    $answer = ok($base, 'Route', ['state' => $state] + $input);
    $state = $answer['state'];
    return $answer;
};

$r = $route(['userTurn' => ['messages' => [
    text('ROLE_SYSTEM', 'You are a careful coding agent. Run the tests before you answer.'),
    text('ROLE_USER', 'The tests in ./store fail. Fix them.'),
]]]);
expect('user turn ids', $r['appendedMessageIds'], ['exec-1-u1']);
expect('system prompt replaced', $r['systemPromptReplaced'] ?? false, true);

$r = $route(['step' => [
    'finishReason' => 'FINISH_REASON_TOOL_CALLS',
    'usage' => ['inputTokenCount' => 150, 'outputTokenCount' => 30],
    'messages' => [
        ['role' => 'ROLE_ASSISTANT', 'parts' => [
            ['toolCall' => ['id' => 'c1', 'name' => 'run_tests', 'argumentsJson' => '{"pkg":"./store"}']],
        ]],
        ['role' => 'ROLE_TOOL', 'parts' => [
            ['toolResult' => ['toolCallId' => 'c1', 'name' => 'run_tests', 'content' => "--- FAIL: TestReserve\n    want ErrOutOfStock, got <nil>", 'isError' => true]],
        ]],
    ],
]]);
expect('tool step ids', $r['appendedMessageIds'], ['exec-1-s0-0', 'exec-1-s0-1']);
expect('tool step ended the execution', $r['executionEnded'] ?? false, false);

$r = $route(['step' => [
    'finishReason' => 'FINISH_REASON_STOP',
    'messages' => [text('ROLE_ASSISTANT', 'Fixed: Reserve now returns ErrOutOfStock when stock is short.')],
]]);
expect('final answer ids', $r['appendedMessageIds'], ['exec-1-s1-0']);
expect('final answer ended the execution', $r['executionEnded'] ?? false, true);

$compiled = ok($base, 'Compile', ['state' => $state]);
expect('compiled ids', array_column($compiled['messages'], 'id'),
    ['ctxc-system', 'exec-1-u1', 'exec-1-s0-0', 'exec-1-s0-1', 'exec-1-s1-0']);
$failed = $compiled['messages'][3]['parts'][0]['toolResult'] ?? [];
expect('the failed test run is visible', $failed['isError'] ?? false, true);
echo "session: {$compiled['budget']['usedTokenCount']} tokens used, " . count($compiled['messages']) . " messages\n";

// 3. A bad request is HTTP 400 with the reason and the exact field.
[$status, $error] = call($base, 'Compile', ['state' => [
    'model' => ['name' => 'gpt-4o'],
    'context' => ['messages' => [['id' => 't1', 'role' => 'ROLE_TOOL', 'parts' => [['toolResult' => ['content' => 'ok']]]]]],
]]);
expect('bad request status', $status, 400);
$reason = null;
$fields = [];
foreach ($error['details'] ?? [] as $detail) {
    if ($detail['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo') {
        $reason = $detail['reason'];
    } elseif ($detail['@type'] === 'type.googleapis.com/google.rpc.BadRequest') {
        $fields = array_column($detail['fieldViolations'], 'field');
    }
}
expect('bad request reason', $reason, 'INVALID_STATE');
expect('bad request fields', $fields, ['state.context.messages[0].parts[0].tool_result.tool_call_id']);

echo "php client: ok\n";
