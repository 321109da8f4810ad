<?php

declare(strict_types=1);

namespace Ctxc\Client;

/** Builders for the messages of an AgentState, in ctxc's JSON form. */
final class Messages
{
    public static function system(string $text, string $id = ''): array
    {
        return self::message('ROLE_SYSTEM', [['text' => $text]], $id);
    }

    public static function user(string $text, string $id = ''): array
    {
        return self::message('ROLE_USER', [['text' => $text]], $id);
    }

    /** An assistant message; string parts are text, arrays are parts (see toolCall). */
    public static function assistant(array|string ...$parts): array
    {
        return self::message('ROLE_ASSISTANT', array_map(static fn($p) => is_string($p) ? ['text' => $p] : $p, $parts));
    }

    /** A ROLE_TOOL message of tool results (see toolResult). */
    public static function tool(array ...$results): array
    {
        return self::message('ROLE_TOOL', $results);
    }

    /** A tool call part; $arguments is a JSON string or a value to encode as one. */
    public static function toolCall(string $id, string $name, mixed $arguments = []): array
    {
        $json = is_string($arguments) ? $arguments : json_encode($arguments === [] ? new \stdClass() : $arguments, JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR);
        return ['toolCall' => ['id' => $id, 'name' => $name, 'argumentsJson' => $json]];
    }

    /** A tool result part answering the call $callId. */
    public static function toolResult(string $callId, string $name, string $content, bool $isError = false): array
    {
        return ['toolResult' => ['toolCallId' => $callId, 'name' => $name, 'content' => $content] + ($isError ? ['isError' => true] : [])];
    }

    /** Gives a message an id (required in a state's log). */
    public static function withId(array $message, string $id): array
    {
        return ['id' => $id] + $message;
    }

    private static function message(string $role, array $parts, string $id = ''): array
    {
        return ($id !== '' ? ['id' => $id] : []) + ['role' => $role, 'parts' => $parts];
    }
}
