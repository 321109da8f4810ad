package metrics

import (
	"strings"

	"github.com/contextcompiler/ctxc/internal/llm"
)

// Reason classes of a degraded step (the reason label of
// ctxc_stage_degraded_total). A degraded reason is free text for people
// (it names models, counts and ids), so the label is its class.
const (
	// ReasonNotShrunk: a compaction transform did not shrink the context and
	// the runner reverted it.
	ReasonNotShrunk = "not_shrunk"
	// ReasonModelNotConfigured: a policy that uses a helper model has none
	// configured and used its deterministic form.
	ReasonModelNotConfigured = "model_not_configured"
	// ReasonModelOutputRejected: the helper model answered, but the answer
	// was unusable (empty, over its budget, not a valid plan).
	ReasonModelOutputRejected = "model_output_rejected"
	// ReasonPromptTooLarge: what the helper model would have to read does
	// not fit its window or the prompt limit.
	ReasonPromptTooLarge = "prompt_too_large"
	// ReasonOther: a reason no class matches.
	ReasonOther = "other"
	// Failed helper-model calls are "model_" and the client's error kind:
	// model_timeout, model_rate_limited, model_server_error,
	// model_connection_error, model_breaker_open, model_client_error,
	// model_empty_response, model_canceled.
	modelPrefix = "model_"
)

// llmKinds are the helper-model client's error kinds.
var llmKinds = []string{llm.KindTimeout, llm.KindRateLimited, llm.KindServer, llm.KindConnection,
	llm.KindBreakerOpen, llm.KindClient, llm.KindEmpty, llm.KindCanceled}

// reasonPhrases find the class of a reason that is no failed call, by the
// words the policies and the runner write.
var reasonPhrases = []struct{ phrase, class string }{
	{"did not shrink the context", ReasonNotShrunk},
	{"model configured", ReasonModelNotConfigured},
	{"empty summary", ReasonModelOutputRejected},
	{"rejected a ", ReasonModelOutputRejected},
	{"plan is not JSON", ReasonModelOutputRejected},
	{"invalid plan", ReasonModelOutputRejected},
	{"is too small for a", ReasonPromptTooLarge},
	{"no artifact fits", ReasonPromptTooLarge},
}

// ReasonClasses lists every class ReasonClass returns.
func ReasonClasses() []string {
	out := []string{ReasonNotShrunk, ReasonModelNotConfigured, ReasonModelOutputRejected, ReasonPromptTooLarge}
	for _, k := range llmKinds {
		out = append(out, modelPrefix+k)
	}
	return append(out, ReasonOther)
}

// ReasonClass is the class of a degraded step's reason. A failed
// helper-model call ("gpt-4o-mini timeout after 2 attempt(s)") is classed by
// the client's error kind; the first failure a reason names decides.
func ReasonClass(reason string) string {
	first, class := len(reason), ReasonOther
	for _, k := range llmKinds {
		if i := strings.Index(reason, " "+k+" after "); i >= 0 && i < first {
			first, class = i, modelPrefix+k
		}
	}
	for _, p := range reasonPhrases {
		if i := strings.Index(reason, p.phrase); i >= 0 && i < first {
			first, class = i, p.class
		}
	}
	return class
}
