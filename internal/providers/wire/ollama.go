package wire

import "encoding/json"

// OllamaRequest is an /api/chat body. Its tools are Chat Completions'
// shape.
type OllamaRequest struct {
	Model    string          `json:"model,omitempty"`
	Messages []OllamaMessage `json:"messages"`
	Tools    []OpenAITool    `json:"tools,omitempty"`
	Format   json.RawMessage `json:"format,omitempty"`
	Options  *OllamaOptions  `json:"options,omitempty"`
	Stream   *bool           `json:"stream,omitempty"`
}

// OllamaMessage is one message: a string content, thinking, base64
// images, calls.
type OllamaMessage struct {
	Role      string           `json:"role"`
	Content   string           `json:"content"`
	Thinking  string           `json:"thinking,omitempty"`
	Images    []string         `json:"images,omitempty"`
	ToolCalls []OllamaToolCall `json:"tool_calls,omitempty"`
	ToolName  string           `json:"tool_name,omitempty"`
	// ToolCallID and OllamaToolCall.ID carry call ids for Ollama versions
	// that read them; older versions ignore them and pair by tool_name and
	// order.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// OllamaToolCall is a call of an assistant message.
type OllamaToolCall struct {
	ID       string         `json:"id,omitempty"`
	Function OllamaFunction `json:"function"`
}

// OllamaFunction is a call's name and arguments (an object).
type OllamaFunction struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// OllamaOptions are the model's options ctxc reads and writes.
type OllamaOptions struct {
	NumCtx int `json:"num_ctx,omitempty"`
	// NumPredict is the answer's limit (-1: none).
	NumPredict int `json:"num_predict,omitempty"`
}
