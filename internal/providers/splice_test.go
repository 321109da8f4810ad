package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// spliceCases are client bodies as real clients send them
// (testdata/splice/<format>.json: Claude Code's Messages body with thinking,
// context_management and cache_control; an OpenAI SDK chat with parallel
// calls and fields ctxc does not know; Codex's Responses body with reasoning
// items and a custom apply_patch call; a Gemini body with a thought
// signature and a search tool; Ollama's with options and keep_alive), and
// what a compaction does to each (Claude Code's body holds a system message
// of its environment, as Claude Code 2.1 sends it, which the summary does
// not cover): the imported messages from summarized up
// to (not including) to replaced by a summary, and the message masked given
// a placeholder.
var spliceCases = []struct {
	format             agentstate.RenderFormat
	summarized, to     int
	masked             int
	conversation       string
	preamble, elements int
}{
	{agentstate.RenderAnthropic, 2, 7, 8, "messages", 0, 10},
	{agentstate.RenderOpenAI, 1, 5, 7, "messages", 1, 10},
	{agentstate.RenderOpenAIResponses, 2, 4, 5, "input", 1, 12},
	{agentstate.RenderGemini, 1, 3, 4, "contents", 0, 7},
	{agentstate.RenderOllama, 1, 4, 6, "messages", 1, 9},
}

func spliceBody(t *testing.T, format agentstate.RenderFormat) []byte {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", "splice", format.String()+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// importedBody is a client body of format and what Import reads of it.
func importedBody(t *testing.T, format agentstate.RenderFormat) ([]byte, *Imported) {
	t.Helper()
	body := spliceBody(t, format)
	im, err := Import(format, body)
	if err != nil {
		t.Fatal(err)
	}
	return body, im
}

// compacted is the view of im after the case's compaction.
func compacted(im *Imported, summarized, to, masked int) []agentstate.Entry {
	view := agentstate.EntriesFromLog(im.Messages)
	m := &view[masked]
	parts := make([]agentstate.Part, len(m.Message.Parts))
	for k, p := range m.Message.Parts {
		p.ToolResult.Content = fmt.Sprintf("[output masked: message %s, %d characters; the full output stays in the log]", m.Message.ID, len(p.ToolResult.Content))
		parts[k] = p
	}
	m.Message.Parts, m.Changed = parts, true
	var covers []string
	for _, e := range view[summarized:to] {
		covers = append(covers, e.Message.ID)
	}
	summary := agentstate.Entry{Message: agentstate.Message{ID: "ctxc-summary-1", Role: agentstate.RoleUser, Kind: agentstate.KindSummary, CoversMessageIDs: covers,
		Parts: []agentstate.Part{text(fmt.Sprintf("Summary of %d earlier messages, written by ctxc without a model.\n\n## Work done\n- the first part of the task", len(covers)))}}}
	return append(append(append([]agentstate.Entry(nil), view[:summarized]...), summary), view[to:]...)
}

// The client's own bodies are valid for their provider: the validators know
// the shapes real clients send, not only those ctxc renders.
func TestClientBodiesAreValid(t *testing.T) {
	for _, tc := range spliceCases {
		t.Run(tc.format.String(), func(t *testing.T) {
			if err := validatorOf(tc.format)(spliceBody(t, tc.format)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func validatorOf(format agentstate.RenderFormat) func([]byte) error {
	_, v := conversationKey(format)
	return v
}

// TestSpliceUnchanged: a compile that changed nothing gives the client's
// body back, the same bytes.
func TestSpliceUnchanged(t *testing.T) {
	for _, tc := range spliceCases {
		t.Run(tc.format.String(), func(t *testing.T) {
			body, im := importedBody(t, tc.format)
			out, changed, err := Splice(tc.format, body, im, Input{View: agentstate.EntriesFromLog(im.Messages)})
			if err != nil || changed || !bytes.Equal(out, body) {
				t.Fatalf("changed %v, err %v, same bytes %v", changed, err, bytes.Equal(out, body))
			}
		})
	}
}

// TestSplice: after a compaction, every field of the body but the
// conversation keeps its bytes and its place; the messages the compaction
// left as they were keep their bytes; the result is valid (Splice checks)
// and imports back to the compiled messages; and the whole body is as the
// golden file shows it.
func TestSplice(t *testing.T) {
	for _, tc := range spliceCases {
		t.Run(tc.format.String(), func(t *testing.T) {
			body, im := importedBody(t, tc.format)
			view := compacted(im, tc.summarized, tc.to, tc.masked)
			out, changed, err := Splice(tc.format, body, im, Input{View: view})
			if err != nil || !changed {
				t.Fatalf("changed %v, err %v", changed, err)
			}
			before, err := objectFields(body)
			if err != nil {
				t.Fatal(err)
			}
			after, err := objectFields(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(before) != len(after) {
				t.Fatalf("%d fields became %d", len(before), len(after))
			}
			var elems []json.RawMessage
			for i := range before {
				switch {
				case before[i].key != after[i].key:
					t.Errorf("field %d: %q became %q", i, before[i].key, after[i].key)
				case before[i].key == tc.conversation:
					if err := json.Unmarshal(before[i].value, &elems); err != nil {
						t.Fatal(err)
					}
				case !bytes.Equal(before[i].value, after[i].value):
					t.Errorf("field %q changed:\n%s\nbecame\n%s", before[i].key, before[i].value, after[i].value)
				}
			}
			if len(elems) != tc.elements {
				t.Fatalf("the body has %d messages, the case says %d", len(elems), tc.elements)
			}
			// The messages after the masked one are the client's bytes, and
			// so are those before the summarized ones where the summary
			// does not join their turn (Anthropic, Gemini).
			var kept []json.RawMessage
			switch tc.format {
			case agentstate.RenderAnthropic:
				kept = append(kept, elems[1]) // the system message
			case agentstate.RenderGemini:
			default:
				kept = append(kept, elems[:tc.preamble+1]...)
			}
			last := im.Origins[tc.masked][len(im.Origins[tc.masked])-1].Message
			kept = append(kept, elems[last+1:]...)
			for _, raw := range kept {
				if !bytes.Contains(out, raw) {
					t.Errorf("the spliced body lacks the client's message %s", raw)
				}
			}

			back, err := Import(tc.format, out)
			if err != nil {
				t.Fatalf("Import(Splice): %v", err)
			}
			want := comparable(entryMessages(view), tc.format)
			switch tc.format {
			case agentstate.RenderOpenAIResponses:
				// Responses' reasoning items are sent back as the client's own.
			case agentstate.RenderAnthropic:
				// Its system message stays one, between turns.
				want = withSystemTurns(want, lossOf[tc.format])
			default:
				want = lossOf[tc.format](want)
			}
			got := stripIDs(back.Messages)
			if tc.format == agentstate.RenderGemini || tc.format == agentstate.RenderOllama {
				// Their bodies carry no call ids: Import numbers calls by place.
				want, got = renumberCalls(want), renumberCalls(got)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Import(Splice) (-compiled +imported):\n%s", diff)
			}
			if back.SystemPrompt != im.SystemPrompt {
				t.Errorf("system prompt %q, want %q", back.SystemPrompt, im.SystemPrompt)
			}
			statetest.Golden(t, filepath.Join("testdata", "splice", tc.format.String()+".golden"), prettyJSON(t, out), *update)
		})
	}
}

// withSystemTurns applies loss to the conversation but for its system
// messages, which Splice keeps as they are between turns: a user or
// assistant message after them joins the turn before them.
func withSystemTurns(in []agentstate.Message, loss func([]agentstate.Message) []agentstate.Message) []agentstate.Message {
	var system []agentstate.Message
	var rest []agentstate.Message
	var at []int // where each system message goes: after rest[:at]
	for _, m := range in {
		if m.Role == agentstate.RoleSystem {
			system, at = append(system, m), append(at, len(rest))
			continue
		}
		rest = append(rest, m)
	}
	// Turns merge across the system messages; then each goes back after the
	// turn holding the message before it.
	merged := loss(rest)
	var out []agentstate.Message
	k, consumed := 0, 0
	for _, m := range merged {
		out = append(out, m)
		consumed += countOriginals(m, rest[consumed:])
		for k < len(system) && at[k] <= consumed && endsTurn(merged, len(out)-1, m) {
			out = append(out, system[k])
			k++
		}
	}
	return append(out, system[k:]...)
}

// countOriginals is how many messages of rest (in order) m was made of:
// those whose parts it holds.
func countOriginals(m agentstate.Message, rest []agentstate.Message) int {
	n, parts := 0, 0
	for n < len(rest) && parts < len(m.Parts) {
		parts += len(rest[n].Parts)
		n++
	}
	return n
}

// endsTurn reports whether out[i] is the last message of its turn in merged
// (a user turn comes back split into tool and user runs).
func endsTurn(merged []agentstate.Message, i int, m agentstate.Message) bool {
	if i+1 >= len(merged) {
		return true
	}
	next := merged[i+1]
	side := func(r agentstate.Role) bool { return r == agentstate.RoleAssistant }
	return side(next.Role) != side(m.Role)
}

func entryMessages(view []agentstate.Entry) []agentstate.Message {
	out := make([]agentstate.Message, len(view))
	for i := range view {
		out[i] = view[i].Message
	}
	return out
}

// TestSpliceAnthropicBreakpoints: a breakpoint goes on the last block of the
// stable prefix's last turn, and the client's earliest breakpoints in
// messages give way when the body would carry more than four.
func TestSpliceAnthropicBreakpoints(t *testing.T) {
	body, im := importedBody(t, agentstate.RenderAnthropic)
	// Three more of the client's: on both blocks of the first message and on
	// the answer before the last message (with the system prompt's, the last
	// message's and the one Splice places, seven).
	crowded := strings.Replace(string(body), `"text": "The build of ./cmd/stock fails. Fix it and run the tests."}`,
		`"text": "The build of ./cmd/stock fails. Fix it and run the tests.", "cache_control": {"type": "ephemeral"}}`, 1)
	crowded = strings.Replace(crowded, `</system-reminder>"}`, `</system-reminder>", "cache_control": {"type": "ephemeral"}}`, 1)
	crowded = strings.Replace(crowded, `The build passes."}`, `The build passes.", "cache_control": {"type": "ephemeral"}}`, 1)
	imCrowded, err := Import(agentstate.RenderAnthropic, []byte(crowded))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		body      []byte
		im        *Imported
		unsettled int // first Unsettled entry of the compacted view
		want      []string
	}{
		{"all stable: the client's last breakpoint is the boundary", body, im, -1,
			[]string{"system[1]", "messages[5].content[0]"}},
		{"unsettled from the masked result: one on the call before it", body, im, 4,
			[]string{"system[1]", "messages[2].content[1]", "messages[5].content[0]"}},
		{"too many: the client's earliest in messages give way", []byte(crowded), imCrowded, 4,
			[]string{"system[1]", "messages[2].content[1]", "messages[4].content[0]", "messages[5].content[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			view := compacted(tt.im, 2, 7, 8)
			if tt.unsettled >= 0 {
				view[tt.unsettled].Unsettled = true
			}
			out, _, err := Splice(agentstate.RenderAnthropic, tt.body, tt.im, Input{View: view})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, breakpointsOf(t, out)); diff != "" {
				t.Errorf("breakpoints (-want +got):\n%s", diff)
			}
		})
	}
}

// breakpointsOf lists where an Anthropic body carries cache_control.
func breakpointsOf(t *testing.T, body []byte) []string {
	t.Helper()
	var req struct {
		System   []map[string]json.RawMessage `json:"system"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, b := range req.System {
		if b["cache_control"] != nil {
			out = append(out, fmt.Sprintf("system[%d]", i))
		}
	}
	for i, m := range req.Messages {
		var blocks []map[string]json.RawMessage
		_ = json.Unmarshal(m.Content, &blocks) // a string carries none
		for j, b := range blocks {
			if b["cache_control"] != nil {
				out = append(out, fmt.Sprintf("messages[%d].content[%d]", i, j))
			}
		}
	}
	return out
}

// TestSpliceKeepsReasoningBeforeItsCalls: a Responses assistant turn the
// compile masks (its reasoning and text left out, a placeholder given) keeps
// its reasoning item as the client sent it when a call item after it keeps
// its id, since the API refuses such a call without its reasoning; its
// message item gets the placeholder, its other fields as they were.
func TestSpliceKeepsReasoningBeforeItsCalls(t *testing.T) {
	reasoning := `{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Look at main.go."}],"encrypted_content":"c2lnbmVk"}`
	call := `{"type":"function_call","id":"fc_1","call_id":"c1","name":"read","arguments":"{}","status":"completed"}`
	body := []byte(`{"model":"gpt-4o","store":false,"input":[{"role":"user","content":"fix it"},` + reasoning +
		`,{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Reading main.go first.","annotations":[]}]},` +
		call + `,{"type":"function_call_output","id":"fco_1","call_id":"c1","output":"package main"}]}`)
	im, err := Import(agentstate.RenderOpenAIResponses, body)
	if err != nil {
		t.Fatal(err)
	}
	view := agentstate.EntriesFromLog(im.Messages)
	m := &view[1].Message
	m.Parts = []agentstate.Part{text("[masked]"), m.Parts[2]}
	view[1].Changed = true
	out, _, err := Splice(agentstate.RenderOpenAIResponses, body, im, Input{View: view})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"gpt-4o","store":false,"input":[{"role":"user","content":"fix it"},` + reasoning +
		`,{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"[masked]","annotations":[]}]},` +
		call + `,{"type":"function_call_output","id":"fco_1","call_id":"c1","output":"package main"}]}`
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
