package compaction

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// dedupe is the "dedupe" policy: an earlier read of a resource that a later
// read supersedes, and a tool result identical to a later one, become a short
// pointer to the later message.
type dedupe struct {
	cfg DedupeConfig
}

// resultRef locates one tool result part.
type resultRef struct{ entry, part int }

// InPlaceEdit: deduplication replaces results' content and keeps every message.
func (dedupe) InPlaceEdit() {}

// Replayable: deduplication reads only the view.
func (dedupe) Replayable() bool { return true }

func (d dedupe) Apply(_ context.Context, w *policies.Work) error {
	protected := policies.Protection(w)
	calls := make(map[string]agentstate.ToolCall) // call id -> call, per unit
	later := make(map[string]string)              // read key or content hash -> id of the newest message holding it
	replace := make(map[resultRef]string)         // result -> placeholder
	saving := 0
	units := policies.Units(w.Entries)
	for k := len(units) - 1; k >= 0; k-- {
		u := units[k]
		clear(calls)
		for _, p := range w.Entries[u.Start].Message.Parts {
			if p.Kind == agentstate.PartToolCall {
				calls[p.ToolCall.ID] = p.ToolCall
			}
		}
		for i := u.End - 1; i >= u.Start; i-- {
			e := &w.Entries[i]
			if e.Message.Role != agentstate.RoleTool || e.Message.Mask != nil {
				continue
			}
			for j := len(e.Message.Parts) - 1; j >= 0; j-- {
				p := &e.Message.Parts[j]
				if p.Kind != agentstate.PartToolResult || p.ToolResult.Content == "" {
					continue
				}
				var keys []string
				if call, ok := calls[p.ToolResult.ToolCallID]; ok && !p.ToolResult.IsError {
					keys = d.readKeys(call)
				}
				keys = append(keys, "content\x00"+hash(p.ToolResult.Content))
				placeholder := ""
				for n, key := range keys {
					if newer, ok := later[key]; ok && newer != e.Message.ID && placeholder == "" {
						if n < len(keys)-1 {
							placeholder = fmt.Sprintf("[superseded by a later read in message %s]", newer)
						} else {
							placeholder = fmt.Sprintf("[same content as the later result in message %s]", newer)
						}
					}
					if _, ok := later[key]; !ok {
						later[key] = e.Message.ID
					}
				}
				if placeholder == "" || protected[i] {
					continue
				}
				if gain := w.Counter().CountText(p.ToolResult.Content) - w.Counter().CountText(placeholder); gain > 0 {
					replace[resultRef{i, j}] = placeholder
					saving += gain
				}
			}
		}
	}
	// On intake nothing cached is broken, so any saving is worth it.
	if len(replace) == 0 || (w.Pass() != policies.PassIntake && float64(saving) < d.cfg.MinSavingRatio*float64(w.UsedTokens())) {
		return nil
	}
	for i := range w.Entries {
		e := &w.Entries[i]
		var placeholders []string
		results := 0
		for j := range e.Message.Parts {
			if e.Message.Parts[j].Kind == agentstate.PartToolResult {
				results++
			}
			ph, ok := replace[resultRef{i, j}]
			if !ok {
				continue
			}
			if placeholders == nil {
				copyParts(&e.Message)
			}
			e.Message.Parts[j].ToolResult.Content = ph
			placeholders = append(placeholders, ph)
		}
		if placeholders == nil {
			continue
		}
		original := e.Tokens
		w.Touch(i)
		dispose(w, e, policies.DispositionMasked, TypeDedupe, strings.Join(placeholders, " "))
		// A log mask hides the whole message, so it is recorded only when every
		// result of the message was deduplicated.
		if e.SourceID != "" && len(placeholders) == results {
			w.SetMask(e.SourceID, agentstate.Mask{Reason: TypeDedupe, Placeholder: strings.Join(placeholders, "\n"), OriginalTokenCount: uint32(max(original, 0))})
		}
	}
	return nil
}

// readKeys identifies what a call reads: the tool with its exact arguments,
// and the tool with the value of its first resource key.
func (d dedupe) readKeys(call agentstate.ToolCall) []string {
	keys := []string{"args\x00" + call.Name + "\x00" + call.ArgumentsJSON}
	var args map[string]any
	if json.Unmarshal([]byte(call.ArgumentsJSON), &args) != nil {
		return keys
	}
	for _, k := range d.cfg.ResourceKeys {
		if v, ok := args[k].(string); ok && v != "" {
			return append(keys, "resource\x00"+call.Name+"\x00"+v)
		}
	}
	return keys
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return string(sum[:16])
}
