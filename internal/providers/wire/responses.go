package wire

import "encoding/json"

// ResponsesRequest is an OpenAI Responses body (POST /v1/responses, what
// Codex CLI and the OpenAI Agents SDK send). The conversation is Input: a
// string, or a list of items (messages, reasoning, function and custom tool
// calls and their outputs); the system prompt is Instructions.
type ResponsesRequest struct {
	Model        string          `json:"model,omitempty"`
	Instructions json.RawMessage `json:"instructions,omitempty"`
	// Input is a string, or a list of items (ResponsesItem).
	Input json.RawMessage `json:"input,omitempty"`
	Tools []ResponsesTool `json:"tools,omitempty"`
	Text  *ResponsesText  `json:"text,omitempty"`
	// The answer's limit, read on import only.
	MaxOutputTokens int  `json:"max_output_tokens,omitempty"`
	Stream          bool `json:"stream,omitempty"`
	// Store false asks for a stateless call: reasoning comes back only as
	// encrypted content, when Include names "reasoning.encrypted_content".
	Store   *bool    `json:"store,omitempty"`
	Include []string `json:"include,omitempty"`
	// Reasoning is the reasoning setting ({"effort", "summary"}).
	Reasoning json.RawMessage `json:"reasoning,omitempty"`
}

// ResponsesItem is every input item type ctxc reads; Type is empty for an
// "easy" message ({"role", "content"}).
type ResponsesItem struct {
	Type string `json:"type,omitempty"`
	// A message's role and content (a string, or content parts).
	Role    string          `json:"role,omitempty"`
	Content json.RawMessage `json:"content,omitempty"`
	// Calls and their outputs.
	CallID string `json:"call_id,omitempty"`
	Name   string `json:"name,omitempty"`
	// Arguments of a function call or an mcp_approval_request (a string;
	// other items' arguments, a tool_search_call's object, are not read).
	Arguments LenientString `json:"arguments,omitempty"`
	// Input of a custom tool call (free-form text).
	Input *string `json:"input,omitempty"`
	// Action is a local_shell_call's command ({"type": "exec", "command", …}).
	Action json.RawMessage `json:"action,omitempty"`
	// Output of a call: a string, or content parts.
	Output json.RawMessage `json:"output,omitempty"`
	// Reasoning: summary parts and the encrypted reasoning a stateless
	// client sends back.
	ID               string             `json:"id,omitempty"`
	Summary          []ResponsesContent `json:"summary,omitempty"`
	EncryptedContent *string            `json:"encrypted_content,omitempty"`
	// ApprovalRequestID is the mcp_approval_request an mcp_approval_response
	// answers.
	ApprovalRequestID string `json:"approval_request_id,omitempty"`
}

// LenientString is a string field that another item type holds a value of
// another kind in: that value reads as "".
type LenientString string

// UnmarshalJSON reads a string, and anything else as "".
func (s *LenientString) UnmarshalJSON(raw []byte) error {
	var v string
	if json.Unmarshal(raw, &v) == nil {
		*s = LenientString(v)
	}
	return nil
}

// ResponsesContent is a content part (input_text, output_text, refusal,
// input_image, …) or a reasoning summary part (summary_text).
type ResponsesContent struct {
	Type     string  `json:"type"`
	Text     *string `json:"text,omitempty"`
	Refusal  *string `json:"refusal,omitempty"`
	ImageURL *string `json:"image_url,omitempty"`
	FileID   string  `json:"file_id,omitempty"`
	Detail   string  `json:"detail,omitempty"`
}

// ResponsesTool is a function tool (type "function", with the name at top
// level, unlike Chat Completions), a custom tool (type "custom", free-form
// input) or a built-in tool (web_search, local_shell, …: a type only).
type ResponsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	// Strict defaults to true in this API, which holds schemas to its strict
	// subset; a rendered tool says false, as Chat Completions' default is.
	Strict *bool `json:"strict,omitempty"`
}

// ResponsesText is the text setting: the answer's format.
type ResponsesText struct {
	Format json.RawMessage `json:"format,omitempty"`
}
