package agentstate

// Budget is the token accounting of a context (ContextTokenBudget).
type Budget struct {
	ContextWindow     int
	Used              int
	ReservedOutput    int
	ReservedSystem    int
	SoftThreshold     int
	Remaining         int
	OverSoftThreshold bool
	// MinHeadroom is the token_budget's min_headroom_tokens: fewer tokens
	// remaining than this asks for compaction, as the soft threshold does.
	MinHeadroom int
	// ShouldCompact is the profile's decision on this context: its trigger's
	// verdict when it has one (the runner sets it, so that the budget and the
	// decide stage agree), else OverSoftThreshold or Remaining < MinHeadroom.
	ShouldCompact bool
	Provenance    Provenance
	Breakdown     Breakdown
	Counter       string
}

// Breakdown splits used tokens by what they are spent on.
type Breakdown struct {
	SystemPrompt int
	Tools        int
	Pinned       int
	Summaries    int
	Conversation int
	ToolTrace    int
}
