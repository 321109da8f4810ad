package wire

import "encoding/json"

// OpenAIRequest is a Chat Completions body (POST /v1/chat/completions).
// Messages are kept as sent, to be read one by one as OpenAIMessage.
type OpenAIRequest struct {
	Model          string            `json:"model,omitempty"`
	Messages       []json.RawMessage `json:"messages"`
	Tools          []OpenAITool      `json:"tools,omitempty"`
	ResponseFormat json.RawMessage   `json:"response_format,omitempty"`
	// The answer's limit, read on import only.
	MaxTokens           int  `json:"max_tokens,omitempty"`
	MaxCompletionTokens int  `json:"max_completion_tokens,omitempty"`
	Stream              bool `json:"stream,omitempty"`
}

// OpenAIMessage is one message of a Chat Completions body.
type OpenAIMessage struct {
	Role string `json:"role"`
	// Content is a string, an array of content parts, or absent.
	Content    json.RawMessage  `json:"content,omitempty"`
	ToolCalls  []OpenAIToolCall `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
	// FunctionCall is the deprecated call of an assistant message, answered
	// by a message of role "function" named as the function, as Name is.
	FunctionCall *OpenAIFunction `json:"function_call,omitempty"`
	Name         string          `json:"name,omitempty"`
}

// OpenAIToolCall is a call of an assistant message.
type OpenAIToolCall struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Function OpenAIFunction `json:"function"`
	// Custom is a call of a custom tool (type "custom": free-form input).
	Custom *OpenAICustomCall `json:"custom,omitempty"`
}

// NameAndArguments are the call's name and arguments, a custom tool's input
// as its arguments.
func (tc *OpenAIToolCall) NameAndArguments() (string, string) {
	if tc.Custom != nil {
		return tc.Custom.Name, tc.Custom.Input
	}
	return tc.Function.Name, tc.Function.Arguments
}

// OpenAICustomCall is a custom tool's call: its name and free-form input.
type OpenAICustomCall struct {
	Name  string `json:"name"`
	Input string `json:"input"`
}

// OpenAIFunction is a function call's name and arguments (a string of JSON).
type OpenAIFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// OpenAIContentPart is a part of a message's content: text, refusal,
// image_url (and, read by type only, the others).
type OpenAIContentPart struct {
	Type     string          `json:"type"`
	Text     *string         `json:"text,omitempty"`
	Refusal  *string         `json:"refusal,omitempty"`
	ImageURL *OpenAIImageURL `json:"image_url,omitempty"`
}

// OpenAIImageURL is an image_url part's image.
type OpenAIImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

// OpenAITool is a tool a body offers; it is also Ollama's tool shape.
type OpenAITool struct {
	Type     string             `json:"type"`
	Function OpenAIFunctionDecl `json:"function"`
	// Custom is a custom tool's definition (type "custom").
	Custom *OpenAIFunctionDecl `json:"custom,omitempty"`
}

// OpenAIFunctionDecl is a function tool's (or a custom tool's) definition.
type OpenAIFunctionDecl struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}
