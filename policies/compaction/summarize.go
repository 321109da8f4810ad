package compaction

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/contextcompiler/ctxc/policies"
)

// Summarizer writes the text of a summary of span, a contiguous run of older
// messages. previous is the text of earlier summaries inside the span ("" when
// none), to be merged (seed 001's IterativeSummaryUpdate). budgetTokens caps
// the result. Implementations must be deterministic for equal input if
// compiles are to be reproducible.
type Summarizer interface {
	Summarize(ctx context.Context, span []policies.Message, previous string, budgetTokens int) (string, error)
}

// summarize is the "summarize" policy: one summary message replaces the
// largest contiguous run of unprotected units before the protected tail.
type summarize struct {
	cfg        SummarizeConfig
	summarizer Summarizer
}

// SummaryIDPrefix starts the id of every summary this policy writes.
const SummaryIDPrefix = "ctxc-summary-"

func (s summarize) Apply(ctx context.Context, w *policies.Work) error {
	span, ok := s.pickSpan(w)
	if !ok {
		return nil
	}
	spanTokens := 0
	var msgs []policies.Message
	var previous []string
	var covers []string
	seen := map[string]bool{}
	cover := func(id string) {
		if id != "" && !seen[id] {
			seen[id] = true
			covers = append(covers, id)
		}
	}
	// An earlier summary's covered ids carry over, except those still shown
	// outside the span: the new summary must not claim (and a bounded log
	// must not delete) a message the view keeps.
	shownOutside := make(map[string]bool)
	for i := range w.Entries {
		if (i < span.Start || i >= span.End) && w.Entries[i].SourceID != "" {
			shownOutside[w.Entries[i].SourceID] = true
		}
	}
	synthesizedSummaries := map[string]bool{}
	for i := span.Start; i < span.End; i++ {
		e := &w.Entries[i]
		spanTokens += e.Tokens
		if e.Message.Kind == policies.KindSummary {
			previous = append(previous, e.Message.Text())
			for _, id := range e.Message.CoversMessageIDs {
				if !shownOutside[id] {
					cover(id)
				}
			}
			if e.SourceID == "" {
				synthesizedSummaries[e.Message.ID] = true
			}
		} else {
			msgs = append(msgs, e.Message)
		}
		cover(e.SourceID)
	}
	// A summary must leave room to shrink: at most three quarters of its span.
	budget := min(s.cfg.MaxSummaryTokens, spanTokens*3/4)
	if budget < 1 {
		return nil
	}
	text, err := s.summarizer.Summarize(ctx, msgs, strings.Join(previous, "\n\n"), budget)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		w.Degrade(fmt.Sprintf("summarizer failed (%v); used the deterministic summary", err))
		text, _ = DeterministicSummarizer{UserTextTokens: s.cfg.UserTextTokens}.Summarize(ctx, msgs, strings.Join(previous, "\n\n"), budget)
	}
	idSource := covers
	if len(idSource) == 0 {
		for _, m := range msgs {
			idSource = append(idSource, m.ID)
		}
	}
	sum := sha256.Sum256([]byte(strings.Join(idSource, "\n")))
	// Role user: every provider accepts a user message right after the system
	// prompt, wherever the span started; Kind summary tells clients what it is.
	summary := policies.Message{
		ID:               SummaryIDPrefix + hex.EncodeToString(sum[:6]),
		Role:             policies.RoleUser,
		Kind:             policies.KindSummary,
		Parts:            []policies.Part{policies.TextPart(text)},
		CoversMessageIDs: covers,
	}
	reason := "summarized into " + summary.ID
	for i := span.Start; i < span.End; i++ {
		dispose(w, &w.Entries[i], policies.DispositionSummarized, TypeSummarize, reason)
	}
	for _, id := range covers {
		if _, ok := w.Dispositions[id]; !ok {
			w.Dispose(policies.MessageReport{MessageID: id, Disposition: policies.DispositionSummarized, Reason: reason, Policy: TypeSummarize})
		}
	}
	entries := make([]policies.Entry, 0, len(w.Entries)-span.Len()+1)
	entries = append(entries, w.Entries[:span.Start]...)
	entries = append(entries, policies.Entry{Message: summary})
	entries = append(entries, w.Entries[span.End:]...)
	w.Entries = entries
	w.Touch(span.Start)
	if len(synthesizedSummaries) > 0 {
		kept := make([]policies.Message, 0, len(w.Appended))
		for _, m := range w.Appended {
			if !synthesizedSummaries[m.ID] {
				kept = append(kept, m)
			}
		}
		w.Appended = kept
	}
	w.Appended = append(w.Appended, summary)
	return nil
}

// pickSpan finds the largest run (in tokens; the oldest among equals) of
// contiguous unprotected units before the protected tail, with at least
// MinSpanMessages entries.
func (s summarize) pickSpan(w *policies.Work) (policies.Span, bool) {
	protected := policies.Protection(w)
	tail := len(w.Entries)
	for tail > 0 && protected[tail-1] {
		tail--
	}
	best, bestTokens := policies.Span{}, -1
	run, runTokens := policies.Span{Start: -1}, 0
	flush := func() {
		if run.Start >= 0 && run.Len() >= s.cfg.MinSpanMessages && runTokens > bestTokens {
			best, bestTokens = run, runTokens
		}
		run, runTokens = policies.Span{Start: -1}, 0
	}
	for _, u := range policies.Units(w.Entries[:tail]) {
		if protected[u.Start] {
			flush()
			continue
		}
		if run.Start < 0 {
			run.Start = u.Start
		}
		run.End = u.End
		runTokens += unitTokens(w, u)
	}
	flush()
	return best, bestTokens >= 0
}
