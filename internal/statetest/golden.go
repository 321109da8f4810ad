package statetest

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// The JSON form of a state used by testdata/*.json files:
//
//	{"execution": {"id": "e2", "status": "running"},   // status: running|completed|failed|""
//	 "window": 1000,                                    // optional context window override
//	 "messages": [
//	   {"id": "m1", "role": "user", "text": "fix the build"},
//	   {"id": "m2", "role": "assistant", "exec": "e1", "parts": [
//	     {"reasoning": {"text": "...", "signature": "a1b2"}},   // signature in hex
//	     {"call": {"id": "c1", "name": "read_file", "args": "{\"path\":\"main.go\"}"}}]},
//	   {"id": "m3", "role": "tool", "exec": "e1", "parts": [
//	     {"result": {"id": "c1", "name": "read_file", "content": "...", "error": false}}]},
//	   {"id": "m4", "role": "user", "kind": "summary", "covers": ["m2", "m3"], "text": "..."},
//	   {"id": "m5", "role": "tool", "pinned": true, "mask": {"reason": "r", "placeholder": "[p]", "tokens": 9}, ...}]}
//
// "text" is shorthand for one text part placed before "parts". Roles: system,
// user, assistant, tool. Kinds: regular (default), summary, event, repair,
// placeholder. A part may also be {"text": ""} or {"image": "https://..."}.
type jsonState struct {
	Execution *struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"execution"`
	Window   uint32        `json:"window"`
	Messages []jsonMessage `json:"messages"`
}

type jsonMessage struct {
	ID     string     `json:"id"`
	Role   string     `json:"role"`
	Kind   string     `json:"kind"`
	Exec   string     `json:"exec"`
	Pinned bool       `json:"pinned"`
	Covers []string   `json:"covers"`
	Text   *string    `json:"text"`
	Parts  []jsonPart `json:"parts"`
	Mask   *struct {
		Reason      string `json:"reason"`
		Placeholder string `json:"placeholder"`
		Tokens      uint32 `json:"tokens"`
	} `json:"mask"`
}

type jsonPart struct {
	Text *string `json:"text"`
	Call *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		Args string `json:"args"`
	} `json:"call"`
	Result *struct {
		ID      string `json:"id"`
		Name    string `json:"name"`
		Content string `json:"content"`
		Error   bool   `json:"error"`
	} `json:"result"`
	Reasoning *struct {
		Text      string `json:"text"`
		Signature string `json:"signature"`
	} `json:"reasoning"`
	Image string `json:"image"`
}

func lookup[T ~uint8](what, s string, names []string) (T, error) {
	for i, n := range names {
		if n == s {
			return T(i), nil
		}
	}
	return 0, fmt.Errorf("unknown %s %q", what, s)
}

// ParseJSON decodes the JSON form above into a state. Unknown fields are errors.
func ParseJSON(data []byte) (*agentstate.State, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var js jsonState
	if err := dec.Decode(&js); err != nil {
		return nil, err
	}
	st := &agentstate.State{SchemaVersion: agentstate.CurrentSchemaVersion, Model: agentstate.ModelSpec{Name: "test-model"}}
	if js.Window > 0 {
		st.Model.ContextWindowTokens = &js.Window
	}
	if e := js.Execution; e != nil {
		st.Execution.ID = e.ID
		status, err := lookup[agentstate.ExecutionStatus]("status", e.Status, []string{"", "running", "completed", "failed"})
		if err != nil {
			return nil, err
		}
		st.Execution.Status = status
	}
	for _, jm := range js.Messages {
		role, err := lookup[agentstate.Role]("role", jm.Role, []string{"", "system", "user", "assistant", "tool"})
		if err != nil {
			return nil, fmt.Errorf("message %s: %w", jm.ID, err)
		}
		kind := agentstate.KindRegular
		if jm.Kind != "" {
			if kind, err = lookup[agentstate.MessageKind]("kind", jm.Kind, []string{"regular", "summary", "event", "repair", "placeholder"}); err != nil {
				return nil, fmt.Errorf("message %s: %w", jm.ID, err)
			}
		}
		m := agentstate.Message{ID: jm.ID, Role: role, Kind: kind, ExecutionID: jm.Exec, Pinned: jm.Pinned, CoversMessageIDs: jm.Covers}
		if jm.Mask != nil {
			m.Mask = &agentstate.Mask{Reason: jm.Mask.Reason, Placeholder: jm.Mask.Placeholder, OriginalTokenCount: jm.Mask.Tokens}
		}
		if jm.Text != nil {
			m.Parts = append(m.Parts, agentstate.TextPart(*jm.Text))
		}
		for _, jp := range jm.Parts {
			var p agentstate.Part
			switch {
			case jp.Text != nil:
				p = agentstate.TextPart(*jp.Text)
			case jp.Call != nil:
				p = agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: jp.Call.ID, Name: jp.Call.Name, ArgumentsJSON: jp.Call.Args}}
			case jp.Result != nil:
				p = agentstate.Part{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: jp.Result.ID, Name: jp.Result.Name, Content: jp.Result.Content, IsError: jp.Result.Error}}
			case jp.Reasoning != nil:
				sig, err := hex.DecodeString(jp.Reasoning.Signature)
				if err != nil {
					return nil, fmt.Errorf("message %s: signature: %w", jm.ID, err)
				}
				p = agentstate.Part{Kind: agentstate.PartReasoning, Reasoning: agentstate.Reasoning{Text: jp.Reasoning.Text, Signature: sig}}
			case jp.Image != "":
				p = agentstate.Part{Kind: agentstate.PartImage, Image: agentstate.Image{Source: agentstate.ImageSourceURL, URL: jp.Image}}
			default:
				return nil, fmt.Errorf("message %s: empty part", jm.ID)
			}
			m.Parts = append(m.Parts, p)
		}
		st.Context.Messages = append(st.Context.Messages, m)
	}
	return st, nil
}

// LoadJSON reads and parses a testdata file, failing the test on error.
func LoadJSON(t testing.TB, path string) *agentstate.State {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := ParseJSON(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return st
}

// Format renders a view for golden files: one line per entry, then the
// dispositions (sorted by id), the repairs, the masks and the warnings:
//
//	m3 tool/regular exec=e1 pinned src=m3 changed
//	    result c1 read_file ok "first 60 runes…"
func Format(w *policies.Work) string {
	var b strings.Builder
	for i := range w.Entries {
		e := &w.Entries[i]
		m := &e.Message
		fmt.Fprintf(&b, "%s %s/%s", m.ID, m.Role, m.Kind)
		if m.ExecutionID != "" {
			fmt.Fprintf(&b, " exec=%s", m.ExecutionID)
		}
		if m.Pinned {
			b.WriteString(" pinned")
		}
		if len(m.CoversMessageIDs) > 0 {
			fmt.Fprintf(&b, " covers=%s", strings.Join(m.CoversMessageIDs, ","))
		}
		if m.Mask != nil {
			fmt.Fprintf(&b, " mask=%q", m.Mask.Reason)
		}
		switch {
		case e.SourceID == "":
			b.WriteString(" synthesized")
		case e.SourceID != m.ID:
			fmt.Fprintf(&b, " src=%s", e.SourceID)
		}
		if e.Changed {
			b.WriteString(" changed")
		}
		b.WriteByte('\n')
		for _, p := range m.Parts {
			b.WriteString("    ")
			b.WriteString(formatPart(&p))
			b.WriteByte('\n')
		}
	}
	if ds := w.Dispositions(); len(ds) > 0 {
		b.WriteString("dispositions:\n")
		sort.Slice(ds, func(i, j int) bool { return ds[i].MessageID < ds[j].MessageID })
		for _, d := range ds {
			fmt.Fprintf(&b, "    %s %s by %s: %s\n", d.MessageID, d.Disposition, d.Policy, d.Reason)
		}
	}
	if len(w.Report().Repairs) > 0 {
		b.WriteString("repairs:\n")
		for _, r := range w.Report().Repairs {
			fmt.Fprintf(&b, "    %s %s: %s\n", r.Kind, r.MessageID, r.Detail)
		}
	}
	if len(w.Masks) > 0 {
		b.WriteString("masks:\n")
		ids := make([]string, 0, len(w.Masks))
		for id := range w.Masks {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			mk := w.Masks[id]
			fmt.Fprintf(&b, "    %s %s original=%d placeholder=%q\n", id, mk.Reason, mk.OriginalTokenCount, mk.Placeholder)
		}
	}
	for _, s := range w.Report().Warnings {
		fmt.Fprintf(&b, "warning: %s\n", s)
	}
	return b.String()
}

func formatPart(p *agentstate.Part) string {
	switch p.Kind {
	case agentstate.PartText:
		return "text " + quote(p.Text)
	case agentstate.PartToolCall:
		return fmt.Sprintf("call %s %s(%s)", p.ToolCall.ID, p.ToolCall.Name, p.ToolCall.ArgumentsJSON)
	case agentstate.PartToolResult:
		status := "ok"
		if p.ToolResult.IsError {
			status = "error"
		}
		return fmt.Sprintf("result %s %s %s %s", p.ToolResult.ToolCallID, p.ToolResult.Name, status, quote(p.ToolResult.Content))
	case agentstate.PartReasoning:
		return fmt.Sprintf("reasoning %s sig=%x", quote(p.Reasoning.Text), p.Reasoning.Signature)
	case agentstate.PartImage:
		return "image " + p.Image.URL
	}
	return p.Kind.String()
}

// quote shows at most 300 runes of s, quoted.
func quote(s string) string {
	const max = 300
	r := []rune(s)
	if len(r) > max {
		return fmt.Sprintf("%q… (%d bytes)", string(r[:max]), len(s))
	}
	return fmt.Sprintf("%q", s)
}

// Golden compares got with the golden file at path, or rewrites the file when
// update is set (wire it to a -update test flag).
func Golden(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}
