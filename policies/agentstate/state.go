package agentstate

import (
	"strconv"
	"time"
)

// CurrentSchemaVersion is the only AgentState layout this build reads.
const CurrentSchemaVersion = 1

// Role is the author of a message.
type Role uint8

// Roles, numbered as in the proto.
const (
	RoleUnspecified Role = iota
	RoleSystem
	RoleUser
	RoleAssistant
	RoleTool
)

var roleNames = [...]string{"unspecified", "system", "user", "assistant", "tool"}

func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return "role(" + strconv.Itoa(int(r)) + ")"
}

// MessageKind says what a message is beyond its role.
type MessageKind uint8

// Message kinds, numbered as in the proto.
const (
	KindRegular MessageKind = iota
	KindSummary
	KindEvent
	KindRepair
	KindPlaceholder
)

var kindNames = [...]string{"regular", "summary", "event", "repair", "placeholder"}

func (k MessageKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// ExecutionStatus says whether an execution still runs.
type ExecutionStatus uint8

// Execution statuses, numbered as in the proto.
const (
	ExecutionUnspecified ExecutionStatus = iota
	ExecutionRunning
	ExecutionCompleted
	ExecutionFailed
)

// State is an agent state snapshot. Pipeline runs never modify it.
type State struct {
	SchemaVersion uint32
	AgentID       string
	Context       Context
	Model         ModelSpec
	Execution     Execution
}

// Context is the data the model may be shown.
type Context struct {
	Messages       []Message
	SystemPrompt   string
	Tools          []ToolDefinition
	ResponseFormat string
	Metadata       map[string]string
}

// ModelSpec names the target model; nil overrides mean "use the registry".
type ModelSpec struct {
	Name                string
	Provider            string
	ContextWindowTokens *uint32
	MaxOutputTokens     *uint32
}

// Execution is the user request being worked on.
type Execution struct {
	ID        string
	StepIndex uint32
	Status    ExecutionStatus
}

// Running reports whether the execution is still stepping. An execution
// without an id cannot own messages, so it never counts as running.
func (e Execution) Running() bool {
	return e.ID != "" && (e.Status == ExecutionRunning || e.Status == ExecutionUnspecified)
}

// Message is one log entry.
type Message struct {
	ID          string
	Role        Role
	Parts       []Part
	Kind        MessageKind
	Pinned      bool
	Importance  uint32
	ExecutionID string
	Usage       *Usage
	Metadata    map[string]string
	CreateTime  *time.Time
	// CoversMessageIDs lists, for a summary, the log messages it replaces.
	CoversMessageIDs []string
	// Mask, when set, makes compiles show Mask.Placeholder instead of the content.
	Mask *Mask
	// Counts, when set, remembers the token counts of Parts (CountMemo): set
	// on the messages of a log the server keeps decoded.
	Counts *CountMemo
}

// Mask records that compiles show a placeholder instead of a message's content.
type Mask struct {
	Reason             string
	Placeholder        string
	OriginalTokenCount uint32
}

// Usage is provider-reported usage of one inference.
type Usage struct {
	InputTokens       uint32
	CachedInputTokens uint32
	OutputTokens      uint32
}

// Total is the prompt plus the output: the provider's count of everything up to
// and including the message that carries this usage.
func (u Usage) Total() int {
	return int(u.InputTokens) + int(u.CachedInputTokens) + int(u.OutputTokens)
}

// PartKind says which field of a Part is set.
type PartKind uint8

// Part kinds, numbered as the proto oneof fields.
const (
	PartUnspecified PartKind = iota
	PartText
	PartToolCall
	PartToolResult
	PartImage
	PartReasoning
)

var partKindNames = [...]string{"unspecified", "text", "tool_call", "tool_result", "image", "reasoning"}

func (k PartKind) String() string {
	if int(k) < len(partKindNames) {
		return partKindNames[k]
	}
	return "part(" + strconv.Itoa(int(k)) + ")"
}

// Part is one piece of content; Kind says which field holds it.
type Part struct {
	Kind       PartKind
	Text       string
	ToolCall   ToolCall
	ToolResult ToolResult
	Image      Image
	Reasoning  Reasoning
}

// ToolCall is a call the assistant asked for.
type ToolCall struct {
	ID            string
	Name          string
	ArgumentsJSON string
}

// ToolResult is the outcome of a call.
type ToolResult struct {
	ToolCallID string
	Name       string
	Content    string
	IsError    bool
}

// ImageSource says how an image is given.
type ImageSource uint8

// Image sources.
const (
	ImageSourceUnspecified ImageSource = iota
	ImageSourceURL
	ImageSourceData
)

// Image is a picture given by URL or inline bytes.
type Image struct {
	Source    ImageSource
	URL       string
	Data      []byte
	MediaType string
}

// Reasoning is the model's thinking; Signature is opaque and must round-trip untouched.
type Reasoning struct {
	Text      string
	Signature []byte
}

// ToolDefinition describes a tool offered to the model.
type ToolDefinition struct {
	Name           string
	Description    string
	ParametersJSON string
}

// TextPart returns a text part.
func TextPart(s string) Part { return Part{Kind: PartText, Text: s} }

// HasToolCalls reports whether the message asks for tool calls.
func (m *Message) HasToolCalls() bool {
	for i := range m.Parts {
		if m.Parts[i].Kind == PartToolCall {
			return true
		}
	}
	return false
}

// Text joins the message's text parts with newlines.
func (m *Message) Text() string {
	var n int
	for i := range m.Parts {
		if m.Parts[i].Kind == PartText {
			n += len(m.Parts[i].Text) + 1
		}
	}
	b := make([]byte, 0, n)
	for i := range m.Parts {
		if m.Parts[i].Kind == PartText {
			if len(b) > 0 {
				b = append(b, '\n')
			}
			b = append(b, m.Parts[i].Text...)
		}
	}
	return string(b)
}
