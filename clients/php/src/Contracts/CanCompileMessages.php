<?php

declare(strict_types=1);

namespace Ctxc\Client\Contracts;

/**
 * The runtime's one contract for inference input: an agent state in, the
 * messages to send out. Agent loops and drivers depend on this, never on the
 * policies behind it.
 */
interface CanCompileMessages
{
    /**
     * @param array $state an AgentState as ctxc's JSON takes it (model, context.messages, context.systemPrompt...)
     * @return list<array> the messages to send, system prompt first, as ctxc's JSON gives them
     */
    public function compile(array $state): array;
}
