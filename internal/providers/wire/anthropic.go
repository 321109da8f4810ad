package wire

import "encoding/json"

// AnthropicRequest is a Messages API body (POST /v1/messages, and
// /v1/messages/count_tokens without max_tokens).
type AnthropicRequest struct {
	Model string `json:"model,omitempty"`
	// System is a string, or an array of text blocks.
	System    json.RawMessage    `json:"system,omitempty"`
	MaxTokens int                `json:"max_tokens"`
	Messages  []AnthropicMessage `json:"messages"`
	Tools     []AnthropicTool    `json:"tools,omitempty"`
	// Thinking turns extended thinking on ("enabled", "adaptive") or off.
	Thinking *AnthropicThinking `json:"thinking,omitempty"`
	Stream   bool               `json:"stream,omitempty"`
}

// AnthropicThinking is a body's thinking setting.
type AnthropicThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

// AnthropicMessage is one message of a body: role user or assistant (or
// system, as Claude Code sends its environment).
type AnthropicMessage struct {
	Role string `json:"role"`
	// Content is an array of blocks, or a string.
	Content json.RawMessage `json:"content"`
}

// AnthropicBlock is a content block: text, thinking and redacted_thinking,
// image, tool_use and tool_result (and, read by type only, the others).
type AnthropicBlock struct {
	Type     string  `json:"type"`
	Text     *string `json:"text,omitempty"`
	Thinking *string `json:"thinking,omitempty"`
	// Signature signs a thinking block; Data is a redacted_thinking's.
	Signature string           `json:"signature,omitempty"`
	Data      string           `json:"data,omitempty"`
	Source    *AnthropicSource `json:"source,omitempty"`
	ID        string           `json:"id,omitempty"`
	Name      string           `json:"name,omitempty"`
	Input     json.RawMessage  `json:"input,omitempty"`
	ToolUseID string           `json:"tool_use_id,omitempty"`
	// Content of a tool_result: a string, or blocks.
	Content json.RawMessage `json:"content,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	// CacheControl marks a prompt-cache breakpoint after this block.
	CacheControl *AnthropicCacheControl `json:"cache_control,omitempty"`
}

// AnthropicCacheControl is a prompt-cache breakpoint ({"type": "ephemeral"}).
type AnthropicCacheControl struct {
	Type string `json:"type"`
}

// AnthropicSource is an image's (or a document's) source.
type AnthropicSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
	// FileID names a file of the Files API (type "file").
	FileID string `json:"file_id,omitempty"`
}

// UnmarshalJSON reads a source object, and leaves a source of another shape
// (a search_result's source is its URL, a string) empty rather than fail the
// whole message.
func (s *AnthropicSource) UnmarshalJSON(raw []byte) error {
	type plain AnthropicSource
	var v plain
	if json.Unmarshal(raw, &v) == nil {
		*s = AnthropicSource(v)
	}
	return nil
}

// AnthropicTool is a tool a body offers.
type AnthropicTool struct {
	// Type is set for Anthropic's server and client tools (web_search_...,
	// bash_..., text_editor_...), which have no input_schema; empty or
	// "custom" for a tool the client defines.
	Type         string                 `json:"type,omitempty"`
	Name         string                 `json:"name"`
	Description  string                 `json:"description,omitempty"`
	InputSchema  json.RawMessage        `json:"input_schema,omitempty"`
	CacheControl *AnthropicCacheControl `json:"cache_control,omitempty"`
}
