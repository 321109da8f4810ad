package agentstate

import "strings"

// View selects the projection of the log.
type View uint8

// Views, numbered as in the proto.
const (
	ViewUnspecified View = iota
	ViewReasoning
	ViewConversation
)

// RenderFormat is a provider's request body shape.
type RenderFormat uint8

// Render formats, numbered as in the proto.
const (
	RenderNone RenderFormat = iota
	RenderOpenAI
	RenderAnthropic
	RenderGemini
	RenderOllama
	RenderOpenAIResponses
)

var renderNames = [...]string{"none", "openai", "anthropic", "gemini", "ollama", "openai_responses"}

func (f RenderFormat) String() string {
	if int(f) < len(renderNames) {
		return renderNames[f]
	}
	return "render?"
}

// Options are the per-call knobs of a request.
type Options struct {
	View                 View
	ReservedOutputTokens *uint32
	SoftThresholdRatio   *float64
	MaxContextTokens     *uint32
	// Render asks the render stage for the provider's request body.
	Render RenderFormat
	// MaxReplyBytes bounds the reply that carries the compiled messages and
	// the rendered body (0: no bound); rendering is refused, before the body
	// is built, when the two could not fit in it.
	MaxReplyBytes int
	// Goal is what the agent is trying to achieve (Compile's goal); nil when
	// not given. The planner weighs artifacts against it beside the latest
	// user turn.
	Goal *Goal
}

// Goal is what the agent is trying to achieve in a call (ContextGoal).
type Goal struct {
	Description     string
	SuccessCriteria []string
}

// Text is the goal as one text: the description, then each success criterion
// on its own line.
func (g *Goal) Text() string {
	if g == nil {
		return ""
	}
	return strings.Join(append([]string{g.Description}, g.SuccessCriteria...), "\n")
}

// Attachment is a document attached to a request: an artifact for the planner.
type Attachment struct {
	ID      string
	Content string
	Title   string
	Source  string
	Type    string
}
