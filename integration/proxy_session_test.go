//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/providers"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// proxyFormat is how a test talks to one of the proxy's endpoints.
type proxyFormat struct {
	name     string
	provider string // as the model registry names it
	format   agentstate.RenderFormat
	input    ctxcv1.InputFormat
	model    string
	path     string // the model is in the path for Gemini
	// key sets the planted key where the provider's clients send theirs.
	key func(h http.Header)
	// conversation is the body field holding the messages.
	conversation string
}

var proxyFormats = []proxyFormat{
	{"openai", "openai", agentstate.RenderOpenAI, ctxcv1.InputFormat_INPUT_FORMAT_OPENAI, "gpt-4o", "/v1/chat/completions",
		func(h http.Header) { h.Set("Authorization", "Bearer "+plantedKey) }, "messages"},
	{"openai_responses", "openai", agentstate.RenderOpenAIResponses, ctxcv1.InputFormat_INPUT_FORMAT_OPENAI_RESPONSES, "gpt-4o", "/v1/responses",
		func(h http.Header) { h.Set("Authorization", "Bearer "+plantedKey) }, "input"},
	{"anthropic", "anthropic", agentstate.RenderAnthropic, ctxcv1.InputFormat_INPUT_FORMAT_ANTHROPIC, "claude-sonnet-4-5", "/v1/messages",
		func(h http.Header) { h.Set("X-Api-Key", plantedKey) }, "messages"},
	{"gemini", "google", agentstate.RenderGemini, ctxcv1.InputFormat_INPUT_FORMAT_GEMINI, "gemini-2.5-pro", "/v1beta/models/gemini-2.5-pro:generateContent",
		func(h http.Header) { h.Set("X-Goog-Api-Key", plantedKey) }, "contents"},
	{"ollama", "ollama", agentstate.RenderOllama, ctxcv1.InputFormat_INPUT_FORMAT_OLLAMA, "llama3.1:8b", "/api/chat",
		func(http.Header) {}, "messages"},
}

// growingSession is a coding agent's conversation of turns turns: each a
// request (every fourth with a constraint), a step with two tool calls whose
// outputs vary in size (every third names an error code), and a decision.
// facts are the identifiers planted, each with the turn that planted it.
func growingSession(turns int) (msgs []agentstate.Message, turnEnds []int, facts map[string]int) {
	facts = map[string]int{}
	id := func(kind string, k, n int) string { return fmt.Sprintf("%s%d-%d", kind, k, n) }
	for k := 1; k <= turns; k++ {
		request := fmt.Sprintf("Turn %d: make the export job's step %d faster and keep its output the same.", k, k)
		if k%4 == 1 {
			rule := "R-" + strconv.Itoa(k)
			request += fmt.Sprintf(" Constraint %s: never edit the generated files under internal/gen.", rule)
			facts[rule] = k
		}
		msgs = append(msgs, agentstate.Message{ID: id("u", k, 0), Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart(request)}})
		turnEnds = append(turnEnds, len(msgs))
		a, b := fmt.Sprintf("call_%d_a", k), fmt.Sprintf("call_%d_b", k)
		msgs = append(msgs, agentstate.Message{ID: id("a", k, 0), Role: agentstate.RoleAssistant, Parts: []agentstate.Part{
			agentstate.TextPart(fmt.Sprintf("Profiling step %d and reading its source.", k)),
			{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: a, Name: "run_profile", ArgumentsJSON: fmt.Sprintf(`{"step":%d}`, k)}},
			{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: b, Name: "read_file", ArgumentsJSON: fmt.Sprintf(`{"path":"export/step%d.go"}`, k)}},
		}})
		var profile strings.Builder
		for line := 0; line < 8+(k*7)%30; line++ {
			fmt.Fprintf(&profile, "step%d.go:%d  %5.1f%%  export.(*Writer).flush  buffered=%d\n", k, 100+line, float64((k*13+line*7)%97)/3, 4096*(line+1))
		}
		if k%3 == 0 {
			code := "E-EXP-" + strconv.Itoa(k)
			fmt.Fprintf(&profile, "error %s: flush blocked on the audit lock for 1.8s\n", code)
			facts[code] = k
		}
		source := strings.Repeat(fmt.Sprintf("\t// step %d copies each row once; the writer buffers up to 4 MiB.\n", k), 4+(k*5)%16)
		msgs = append(msgs,
			agentstate.Message{ID: id("t", k, 0), Role: agentstate.RoleTool, Parts: []agentstate.Part{{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: a, Name: "run_profile", Content: profile.String()}}}},
			agentstate.Message{ID: id("t", k, 1), Role: agentstate.RoleTool, Parts: []agentstate.Part{{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: b, Name: "read_file", Content: source}}}},
		)
		turnEnds = append(turnEnds, len(msgs))
		decision := "DEC-" + strconv.Itoa(k)
		facts[decision] = k
		msgs = append(msgs, agentstate.Message{ID: id("a", k, 1), Role: agentstate.RoleAssistant, Parts: []agentstate.Part{
			agentstate.TextPart(fmt.Sprintf("Decision %s: step %d flushes once per 4 MiB instead of per row; the output is byte for byte the same.", decision, k))}})
	}
	return msgs, turnEnds, facts
}

// sessionTools are the session's tools.
var sessionTools = []agentstate.ToolDefinition{
	{Name: "run_profile", Description: "Profile one step of the export job.", ParametersJSON: `{"type":"object","properties":{"step":{"type":"integer"}}}`},
	{Name: "read_file", Description: "Read a file.", ParametersJSON: `{"type":"object","properties":{"path":{"type":"string"}}}`},
}

// clientBody is what a client of format sends for the conversation msgs.
func clientBody(t testing.TB, f proxyFormat, msgs []agentstate.Message) []byte {
	t.Helper()
	st := &agentstate.State{Model: agentstate.ModelSpec{Name: f.model}, Context: agentstate.Context{SystemPrompt: "You are a coding agent working on the export job.", Tools: sessionTools}}
	body, _, err := providers.Render(f.format, providers.Input{State: st, Model: agentstate.ModelInfo{Name: f.model, MaxOutputTokens: 1024}, View: agentstate.EntriesFromLog(msgs)})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// proxyPost sends body to the proxy's endpoint of f with the planted key and
// the window, and returns the answer's status, headers and body.
func proxyPost(t testing.TB, base string, f proxyFormat, body []byte, window int) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+f.path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	f.key(req.Header)
	if window > 0 {
		req.Header.Set("X-Ctxc-Max-Context-Tokens", strconv.Itoa(window))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data
}

// sessionWindow is the window of the growing session: its 40 turns grow to
// about 45,000 tokens, so budget-aware compacts it several times.
const sessionWindow = 28000

// TestProxyGrowingSession sends a 40-turn coding session through the proxy
// as its client would, twice a turn (the request, then the tool results),
// in each provider's format, and measures what the upstream received:
//
//   - below the trigger the forwarded body is the client's, byte for byte;
//   - above it, it is exactly what Compile renders into the same body
//     (render_into_input), so it keeps the facts Compile keeps, and it is
//     within the window;
//   - the conversation forwarded keeps the prefix of the one before it
//     between compaction points: over the session, the bytes of the
//     leading messages equal to the previous call's are at least 0.9 of
//     what an append-only forwarder would repeat (cache_control markers
//     aside, which a client moves to its newest message on every call).
//
// Every forwarded body passes its provider's validator.
func TestProxyGrowingSession(t *testing.T) {
	t.Parallel()
	up := newScriptedUpstream(t, nil)
	s, base := startProxyServer(t, map[string]string{"openai": up.URL, "anthropic": up.URL, "gemini": up.URL, "ollama": up.URL})
	msgs, ends, facts := growingSession(sessionTurns)
	var answers []string
	figures := sessionFigures{Turns: sessionTurns, Calls: len(ends), Window: sessionWindow, Facts: len(facts), Formats: map[string]formatFigures{}}
	for _, f := range proxyFormats {
		t.Run(f.name, func(t *testing.T) {
			before := len(up.requests())
			var unchanged, rewritten int
			var outcomes []string
			for call, end := range ends {
				body := clientBody(t, f, msgs[:end])
				resp, answer := proxyPost(t, base, f, body, sessionWindow)
				answers = append(answers, string(answer))
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("call %d: HTTP %d %s", call, resp.StatusCode, answer)
				}
				got := up.requests()
				if len(got) != before+call+1 {
					t.Fatalf("call %d: the upstream has %d requests", call, len(got)-before)
				}
				forwarded := got[len(got)-1]
				if forwarded.Invalid != "" {
					t.Errorf("call %d: the forwarded body is invalid: %s", call, forwarded.Invalid)
				}
				outcome := resp.Header.Get("X-Ctxc-Forwarded")
				outcomes = append(outcomes, outcome)
				switch outcome {
				case "unchanged":
					unchanged++
					if rewritten > 0 {
						t.Errorf("call %d went unchanged after %d rewritten: the client's context only grows", call, rewritten)
					}
					if !bytes.Equal(forwarded.Body, body) {
						t.Errorf("call %d: below the trigger the upstream got another body than the client's", call)
					}
				case "rewritten":
					rewritten++
					checkAsCompiled(t, s, f, call, body, forwarded.Body)
				default:
					t.Fatalf("call %d: forwarded %q (%s)", call, outcome, resp.Header.Get("X-Ctxc-Error"))
				}
			}
			if unchanged < 8 || rewritten < 20 {
				t.Errorf("%d calls unchanged and %d rewritten: the window does not make the session cross the trigger: %v", unchanged, rewritten, outcomes)
			}
			ratio := prefixRatio(t, f, up.requests()[before:])
			t.Logf("%s: %d calls forwarded unchanged, %d rewritten; prefix / append-only bound %.3f", f.name, unchanged, rewritten, ratio)
			if ratio < 0.9 {
				t.Errorf("prefix / append-only bound %.3f, want at least 0.9", ratio)
			}
			// The session's facts the last call sent, and how many of them
			// its forwarded body holds.
			client, forwarded := conversationText(t, f, clientBody(t, f, msgs[:ends[len(ends)-1]])), conversationText(t, f, up.requests()[len(up.requests())-1].Body)
			sent, kept := 0, 0
			for fact := range facts {
				if strings.Contains(client, fact) {
					sent++
					if strings.Contains(forwarded, fact) {
						kept++
					}
				}
			}
			figures.Formats[f.name] = formatFigures{Unchanged: unchanged, Rewritten: rewritten, PrefixBound: strconv.FormatFloat(ratio, 'f', 3, 64), FactsSent: sent, FactsKept: kept}
		})
	}
	checkKeyStaysPut(t, s, answers)
	// The figures are deterministic (the compile is): the README quotes them.
	golden(t, sessionFiguresFile, figures)
}

// sessionTurns is the growing session's length.
const sessionTurns = 40

// sessionFiguresFile holds what TestProxyGrowingSession measured (the
// README quotes it; -update rewrites it).
var sessionFiguresFile = filepath.Join("testdata", "proxy-session.json")

type sessionFigures struct {
	Turns, Calls, Window, Facts int
	Formats                     map[string]formatFigures
}

type formatFigures struct {
	Unchanged, Rewritten int
	PrefixBound          string
	// FactsSent is how many of the session's facts the client's last body
	// holds, FactsKept how many of them the body forwarded for it does.
	FactsSent, FactsKept int
}

// golden compares v, as indented JSON, with the file at path (under
// integration/), or writes it with -update.
func golden(t testing.TB, path string, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, '\n')
	if *update {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), string(data)); diff != "" {
		t.Errorf("%s (-file +measured):\n%s", path, diff)
	}
}

// conversationText is the text of a body's conversation: its messages'
// texts and tool results.
func conversationText(t *testing.T, f proxyFormat, body []byte) string {
	t.Helper()
	im, err := providers.Import(f.format, body)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range im.Messages {
		b.WriteString(m.Text() + "\n")
		for _, p := range m.Parts {
			b.WriteString(p.ToolResult.Content + "\n")
		}
	}
	return b.String()
}

// checkAsCompiled: a rewritten body is what Compile renders into the
// client's body for the same profile and window, its conversation within
// the usable window, holding the facts Compile's messages hold.
func checkAsCompiled(t *testing.T, s *server, f proxyFormat, call int, client, forwarded []byte) {
	t.Helper()
	window := uint32(sessionWindow)
	// The same request the proxy makes: the body's max_tokens is the reservation.
	var head struct {
		MaxTokens *uint32 `json:"max_tokens"`
	}
	_ = json.Unmarshal(client, &head)
	compile := func(render bool) *ctxcv1.CompileResponse {
		resp, err := s.client().Compile(context.Background(), &ctxcv1.CompileRequest{
			State:   &ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: f.model, Provider: f.provider, MaxOutputTokenCount: head.MaxTokens}},
			Profile: "budget-aware", InputFormat: f.input, InputJson: string(client),
			Options: &ctxcv1.CompileOptions{MaxContextTokenCount: &window, RenderIntoInput: render},
		})
		if err != nil {
			t.Fatalf("call %d: Compile: %v", call, err)
		}
		return resp
	}
	rendered := compile(true)
	if rendered.GetRendered() != string(forwarded) || len(forwarded) == 0 {
		t.Errorf("call %d: the proxy forwarded another body than Compile renders", call)
	}
	usable := rendered.GetBudget().GetContextWindowTokenCount() - rendered.GetBudget().GetReservedOutputTokenCount()
	if used := rendered.GetBudget().GetUsedTokenCount(); used > usable {
		t.Errorf("call %d: %d tokens forwarded, over the usable window of %d", call, used, usable)
	}
	// The facts: identifiers in Compile's messages are in the forwarded body.
	var compiled strings.Builder
	for _, m := range compile(false).GetMessages() {
		for _, p := range m.GetParts() {
			compiled.WriteString(p.GetText() + p.GetToolResult().GetContent() + "\n")
		}
	}
	imported, err := providers.Import(f.format, forwarded)
	if err != nil {
		t.Fatalf("call %d: the forwarded body does not import: %v", call, err)
	}
	sent := imported.SystemPrompt
	for _, m := range imported.Messages {
		sent += m.Text() + "\n"
		for _, p := range m.Parts {
			sent += p.ToolResult.Content
		}
	}
	for _, word := range strings.FieldsFunc(compiled.String(), func(r rune) bool { return r == ' ' || r == '\n' || r == ',' || r == '.' || r == ':' }) {
		if (strings.HasPrefix(word, "R-") || strings.HasPrefix(word, "E-EXP-") || strings.HasPrefix(word, "DEC-")) && !strings.Contains(sent, word) {
			t.Errorf("call %d: Compile keeps the fact %s, the forwarded body does not", call, word)
		}
	}
}

// prefixRatio is, over consecutive forwarded bodies, the bytes of the
// leading conversation messages equal to the previous body's (cache_control
// markers removed) over the bytes of all of the previous body's messages,
// which an append-only forwarder would repeat.
func prefixRatio(t *testing.T, f proxyFormat, reqs []upstreamRequest) float64 {
	t.Helper()
	var prev []string
	prefix, bound := 0, 0
	for _, r := range reqs {
		var body map[string]json.RawMessage
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(body[f.conversation], &elems); err != nil {
			t.Fatal(err)
		}
		cur := make([]string, len(elems))
		for i, e := range elems {
			cur[i] = withoutCacheControl(t, e)
		}
		for _, e := range prev {
			bound += len(e)
		}
		for i := 0; i < len(prev) && i < len(cur) && cur[i] == prev[i]; i++ {
			prefix += len(prev[i])
		}
		prev = cur
	}
	if bound == 0 {
		return 1
	}
	return float64(prefix) / float64(bound)
}

// withoutCacheControl is a message's JSON with Anthropic's cache_control
// markers removed, compact.
func withoutCacheControl(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var strip func(any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "cache_control")
			for k := range x {
				x[k] = strip(x[k])
			}
		case []any:
			for i := range x {
				x[i] = strip(x[i])
			}
		}
		return v
	}
	out, err := json.Marshal(strip(v))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestProxyStreamsEveryFormat: a streamed answer of each provider (SSE for
// OpenAI, Anthropic and Gemini's alt=sse, NDJSON for Ollama) reaches the
// client as the upstream wrote it.
func TestProxyStreamsEveryFormat(t *testing.T) {
	t.Parallel()
	up := newScriptedUpstream(t, func(upstreamRequest) modelTurn {
		return modelTurn{Text: "Streaming works.", Calls: []agentstate.ToolCall{{Name: "read_file", ArgumentsJSON: `{"path":"a.go"}`}}}
	})
	_, base := startProxyServer(t, map[string]string{"openai": up.URL, "anthropic": up.URL, "gemini": up.URL, "ollama": up.URL})
	msgs := []agentstate.Message{{ID: "u1", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart("Read a.go.")}}}
	for _, f := range proxyFormats {
		if f.format == agentstate.RenderOpenAIResponses {
			continue // the scripted upstream answers Responses unstreamed
		}
		t.Run(f.name, func(t *testing.T) {
			body := clientBody(t, f, msgs)
			sf := f
			switch f.format {
			case agentstate.RenderGemini:
				sf.path = strings.Replace(f.path, ":generateContent", ":streamGenerateContent?alt=sse", 1)
			case agentstate.RenderOllama:
				body = bytes.Replace(body, []byte(`"stream":false`), []byte(`"stream":true`), 1)
			default:
				body = append(body[:len(body)-1], []byte(`,"stream":true}`)...)
			}
			resp, got := proxyPost(t, base, sf, body, 0)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("HTTP %d %s", resp.StatusCode, got)
			}
			events := 0
			sc := bufio.NewScanner(bytes.NewReader(got))
			for sc.Scan() {
				if line := sc.Text(); strings.HasPrefix(line, "data: ") || f.format == agentstate.RenderOllama && strings.HasPrefix(line, "{") {
					events++
				}
			}
			if events < 2 || !bytes.Contains(got, []byte("works.")) || !bytes.Contains(got, []byte("read_file")) {
				t.Errorf("%d events in\n%s", events, got)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, "event-stream") && !strings.Contains(ct, "ndjson") {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}
