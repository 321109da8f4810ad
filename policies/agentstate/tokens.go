package agentstate

// Provenance says how a token count was obtained.
type Provenance uint8

// Provenances, numbered as in the proto.
const (
	ProvenanceUnspecified Provenance = iota
	ProvenanceExact
	ProvenanceAnchored
	ProvenanceEstimated
)

var provenanceNames = [...]string{"unspecified", "exact", "anchored", "estimated"}

func (p Provenance) String() string {
	if int(p) < len(provenanceNames) {
		return provenanceNames[p]
	}
	return "provenance?"
}

// TokenCounter counts tokens for one model. The pipeline resolves it from the
// state's model before the first stage, so every policy measures the same way.
// Implementations are safe for concurrent use: requests share them, and the
// estimate stage counts a long log from several goroutines.
type TokenCounter interface {
	// CountMessage counts a message with its framing overhead, honouring its Mask.
	CountMessage(m *Message) (int, Provenance)
	// CountText counts bare text.
	CountText(s string) int
	// CountPreamble counts the system prompt, tool definitions and response format
	// as the provider frames them: system prompt first, then tools and format.
	CountPreamble(c *Context) (system int, tools int)
	// Name names the encoding or estimator ("o200k_base", "cl100k_base*1.20").
	Name() string
}

// ModelInfo is what the registry knows of the target model, after request overrides.
type ModelInfo struct {
	Name            string
	Provider        string
	ContextWindow   int
	MaxOutputTokens int
	// Prices in US dollars per million tokens; 0 when unknown.
	InputPricePerMTok  float64
	OutputPricePerMTok float64
	// Assumption is set for a model the registry lacks, counted with its
	// provider's defaults: what was assumed, for the report's warnings (the
	// estimate stage adds it). Empty for a registered model.
	Assumption string
}

// BoundCounter is a TokenCounter that can stop counting when a call ends:
// Bound returns one that, once done is closed, cuts short whatever it is
// counting (a text of megabytes without a space takes seconds) and answers
// an approximate count it never keeps. Whoever runs the counts must then
// discard them: the pipeline checks its context after every stage.
type BoundCounter interface {
	TokenCounter
	Bound(done <-chan struct{}) TokenCounter
}
