package isolate

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// MaskReason is the Mask.Reason of masks made by MaskObservations.
const MaskReason = "observation_masking"

// MaskObservations replaces old tool outputs with placeholders and returns how
// many tool messages it masked. Exactly:
//
//  1. Sizes are w.Counter.CountText of each tool_result's content.
//  2. Protection window: walking tool messages newest to oldest (skipping those
//     already masked), the newest cfg.KeepToolUses are protected, and each is
//     protected while the running total of output tokens, itself included, is
//     <= cfg.ProtectRecentTokens; the first one over both ends the window and
//     every older one is unprotected.
//  3. Candidates are unprotected tool messages with at least one tool_result,
//     shown from the log (SourceID set), not already masked (Message.Mask or
//     w.Masks), not pinned, not of the running execution and not an
//     unresolved failure (policies.UnresolvedFailures) unless
//     run.Condensable marks them, not marked by run.Protect (nil marks none), with no result of a tool in cfg.ExemptTools, and whose masked
//     form counts fewer tokens (w.Counter.CountMessage) than the message does
//     now.
//  4. If the candidates' total saving is below cfg.MinPrunableTokens, nothing
//     is masked, except on an intake pass (policies.PassIntake), which breaks
//     no cached prefix.
//  5. Candidates are masked oldest first. With run.TargetTokens > 0, masking
//     stops as soon as w.UsedTokens() <= run.TargetTokens and at least
//     cfg.ClearAtLeastTokens have been cleared (checked before each message;
//     the entries masked here are recounted, so UsedTokens stays exact as far
//     as the other entries' counts are). With targetTokens 0 every candidate
//     is masked.
//
// A masked message keeps one tool_result per result, with the same
// ToolCallID, Name and IsError, and the placeholder (message id, tool, call,
// size; for a failed result the lines that name its error; a head and tail
// preview of cfg.PreviewChars runes each) as content. It gets w.Touch, fresh
// Tokens (Counted), a MASKED disposition and a w.Masks[log id] entry for
// Compact to persist. A nil cfg means the defaults.
func MaskObservations(w *policies.Work, cfg *MaskingConfig, run MaskRun) (masked int) {
	if cfg == nil {
		cfg = DefaultMaskingConfig()
	}
	targetTokens, protect, policy, outputs := run.TargetTokens, run.Protect, run.Policy, run.Outputs
	if policy == "" {
		policy = TypeObservationMasking
	}
	entries := w.Entries
	alreadyMasked := func(e *agentstate.Entry) bool {
		if e.Message.Mask != nil {
			return true
		}
		_, ok := w.Masks[e.SourceID]
		return ok && e.SourceID != ""
	}
	protected := recentOutputs(entries, w.Counter(), cfg, alreadyMasked)
	var log logReader = w // what masked outputs were, for those cut earlier
	runningID := ""
	if w.State() != nil && w.State().Execution.Running() {
		runningID = w.State().Execution.ID
	}
	unresolved := policies.StaysVisible(entries)
	exempt := make(map[string]bool, len(cfg.ExemptTools))
	for _, t := range cfg.ExemptTools {
		exempt[t] = true
	}
	// A placeholder costs a scan of the output for its error lines, so it is
	// built up front only for outputs small enough that it may not shrink
	// them; larger ones are counted as saving all but a placeholder's worth
	// and built when, and if, they are masked.
	bound := placeholderBound(cfg)
	var cands []maskCandidate
	saving := 0
	for i := range entries {
		e := &entries[i]
		m := &e.Message
		if m.Role != agentstate.RoleTool || protected[i] || e.SourceID == "" || alreadyMasked(e) || m.Pinned ||
			(((runningID != "" && m.ExecutionID == runningID) || unresolved[i]) && (run.Condensable == nil || !run.Condensable(i))) || (protect != nil && protect(i)) {
			continue
		}
		if exemptResult(m, exempt) {
			continue
		}
		before := e.Tokens
		if !e.Counted && w.Counter() != nil {
			before, _ = w.Counter().CountMessage(m)
		}
		c := maskCandidate{i: i, before: before}
		if before <= 2*bound {
			var ok bool
			if c, ok = maskedForm(w.Counter(), log, cfg, e, exempt, outputs); !ok {
				continue
			}
			c.i = i
			saving += c.before - c.after
		} else {
			saving += before - bound
		}
		cands = append(cands, c)
	}
	if len(cands) == 0 || (saving < cfg.MinPrunableTokens && w.Pass() != policies.PassIntake) {
		return 0
	}
	used, cleared := 0, 0
	if targetTokens > 0 {
		used = w.UsedTokens()
	}
	for _, c := range cands {
		if targetTokens > 0 && used <= targetTokens && cleared >= cfg.ClearAtLeastTokens {
			break
		}
		if c.parts == nil {
			built, ok := maskedForm(w.Counter(), log, cfg, &w.Entries[c.i], exempt, outputs)
			if !ok {
				continue
			}
			built.i = c.i
			c = built
		}
		e := &w.Entries[c.i]
		e.Message.Parts = c.parts
		w.Touch(c.i)
		e.Tokens = c.after
		if w.Counter() != nil {
			e.Tokens, e.Provenance = w.Counter().CountMessage(&e.Message)
			e.Counted = true
		}
		used -= c.before - e.Tokens
		cleared += c.before - e.Tokens
		w.SetMask(e.SourceID, agentstate.Mask{Reason: MaskReason, Placeholder: c.placeholder, OriginalTokenCount: uint32(min(c.before, math.MaxUint32))})
		w.DisposeEntry(e, policies.MessageReport{Disposition: policies.DispositionMasked, Tokens: e.Tokens, Provenance: e.Provenance,
			Reason: fmt.Sprintf("%[3]s: output of %[2]s (a %[1]d-token message) replaced by a placeholder", c.before, c.tools, policy), Policy: policy})
		masked++
	}
	return masked
}

// MaskRun says how far one MaskObservations call goes.
type MaskRun struct {
	// TargetTokens stops masking once the context uses no more; 0 masks
	// every candidate.
	TargetTokens int
	// Protect marks entries that must not be masked, beyond the rules above.
	Protect func(i int) bool
	// Policy is the policy type named in dispositions; TypeObservationMasking
	// when empty.
	Policy string
	// Outputs remembers what was read of tool outputs; nil reads afresh.
	Outputs *diagnose.Cache
	// Condensable marks entries (a running task's history, policies.TaskHistory)
	// that are masked even when they are unresolved failures or outputs of
	// the running execution, as long as Protect leaves them: their
	// placeholders keep the lines that identify what failed, which is how an
	// agent deep in a long task keeps seeing it. nil marks none.
	Condensable func(i int) bool
}

// recentOutputs marks the newest tool outputs that are never masked: the
// newest cfg.KeepToolUses messages, and the newest within
// cfg.ProtectRecentTokens of output.
func recentOutputs(entries []agentstate.Entry, counter agentstate.TokenCounter, cfg *MaskingConfig, alreadyMasked func(*agentstate.Entry) bool) []bool {
	protected := make([]bool, len(entries))
	total, kept := 0, 0
	for i := len(entries) - 1; i >= 0; i-- {
		m := &entries[i].Message
		if m.Role != agentstate.RoleTool || alreadyMasked(&entries[i]) {
			continue
		}
		for _, p := range m.Parts {
			if p.Kind == agentstate.PartToolResult {
				total += countText(counter, p.ToolResult.Content)
			}
		}
		if kept >= cfg.KeepToolUses && total > cfg.ProtectRecentTokens {
			break
		}
		kept++
		protected[i] = true
	}
	return protected
}

type maskCandidate struct {
	i             int
	parts         []agentstate.Part
	placeholder   string
	before, after int
	tools         string
}

// placeholderBound is a generous bound on a placeholder's tokens.
func placeholderBound(cfg *MaskingConfig) int {
	return (200 + 2*cfg.PreviewChars*3 + 3*170) / 3
}

// exemptResult reports whether a tool message holds a result of an exempt tool.
func exemptResult(m *agentstate.Message, exempt map[string]bool) bool {
	for _, p := range m.Parts {
		if p.Kind == agentstate.PartToolResult && exempt[p.ToolResult.Name] {
			return true
		}
	}
	return false
}

// maskedForm builds the masked parts of a tool message and measures both
// forms; ok is false when a result is exempt or masking would not shrink it.
// log is the request's, read for what an output cut earlier was.
func maskedForm(counter agentstate.TokenCounter, log logReader, cfg *MaskingConfig, e *agentstate.Entry, exempt map[string]bool, outputs *diagnose.Cache) (maskCandidate, bool) {
	m := &e.Message
	var c maskCandidate
	var placeholders, tools []string
	for _, p := range m.Parts {
		if p.Kind != agentstate.PartToolResult {
			continue
		}
		if exempt[p.ToolResult.Name] {
			return c, false
		}
		// An output clamped earlier in the chain is described by its log
		// original: its size and error lines are what the model should know.
		original := p.ToolResult
		if e.Changed {
			if c, ok := log.LogToolResult(e.SourceID, p.ToolResult.ToolCallID); ok {
				original.Content = c
			}
		}
		ph := placeholder(counter, m.ID, &original, cfg.PreviewChars, outputs)
		p.ToolResult.Content = ph
		c.parts = append(c.parts, p)
		placeholders = append(placeholders, ph)
		tools = append(tools, p.ToolResult.Name)
	}
	if len(c.parts) == 0 {
		return c, false
	}
	c.before = e.Tokens
	if !e.Counted && counter != nil {
		c.before, _ = counter.CountMessage(m)
	}
	probe := *m
	probe.Parts = c.parts
	c.after = countMessage(counter, &probe)
	if c.after >= c.before {
		return c, false
	}
	c.placeholder = strings.Join(placeholders, "\n")
	c.tools = strings.Join(tools, ", ")
	return c, true
}

// logReader finds a tool result of the request's log (*policies.Work),
// as the normalize stage left it.
type logReader interface {
	LogToolResult(id, callID string) (string, bool)
}

func countMessage(counter agentstate.TokenCounter, m *agentstate.Message) int {
	if counter == nil {
		n := 0
		for _, p := range m.Parts {
			n += len(p.ToolResult.Content) + len(p.Text)
		}
		return (n+3)/4 + 3
	}
	t, _ := counter.CountMessage(m)
	return t
}

// placeholder describes a masked output: where it is, how big it was, and its
// head and tail, cut at rune boundaries.
func placeholder(counter agentstate.TokenCounter, messageID string, r *agentstate.ToolResult, preview int, outputs *diagnose.Cache) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[output masked: message %s, tool %s, call %s, %d tokens", messageID, r.Name, r.ToolCallID, countText(counter, r.Content))
	d := outputs.Read(r.Content)
	failed := r.IsError || d.Failed
	if failed {
		b.WriteString(", error")
	}
	b.WriteString("; the full output stays in the log]")
	if failed {
		// What identifies the failure must outlive its output (invariant 5;
		// an output that failed in its own words too).
		for _, line := range outputs.Identify(r.Content, diagnose.DefaultLimits) {
			b.WriteString("\nerror: " + strings.ToValidUTF8(line, "\uFFFD"))
		}
	} else {
		// An output that went through but printed an error of its own (a
		// panic in a server's log, a failing case of a passing run): an
		// agent in the middle of a task is looking for just that line.
		for _, line := range d.ProblemLines(false, diagnose.DefaultLimits) {
			b.WriteString("\ntrouble: " + strings.ToValidUTF8(line, "\uFFFD"))
		}
	}
	if preview > 0 && r.Content != "" {
		if utf8.RuneCountInString(r.Content) <= 2*preview {
			b.WriteString("\n" + strings.ToValidUTF8(r.Content, "\uFFFD"))
		} else {
			b.WriteString("\nhead: " + strings.ToValidUTF8(headRunes(r.Content, preview), "\uFFFD"))
			b.WriteString("\n…\ntail: " + strings.ToValidUTF8(tailRunes(r.Content, preview), "\uFFFD"))
		}
	}
	return b.String()
}
