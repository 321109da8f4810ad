//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/contextcompiler/ctxc/internal/providers"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// The scratch Go module Claude Code works on: a stock package whose Reserve
// adds what it should take away (its test fails), and a command.
var inventoryModule = map[string]string{
	"go.mod": "module example.com/inventory\n\ngo 1.22\n",
	"stock/stock.go": `// Package stock keeps the warehouse's stock levels.
package stock

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrShort is returned when a reservation asks for more items than the
// warehouse holds.
var ErrShort = errors.New("stock: not enough items")

// Stock is the number of items of each SKU.
type Stock struct {
	items map[string]int
}

// New returns a stock holding the given counts.
func New(counts map[string]int) *Stock {
	s := &Stock{items: map[string]int{}}
	for sku, n := range counts {
		s.items[sku] = n
	}
	return s
}

// Count is how many items of sku are in stock.
func (s *Stock) Count(sku string) int { return s.items[sku] }

// Receive adds n items of sku.
func (s *Stock) Receive(sku string, n int) {
	s.items[sku] += n
}

// Reserve takes n items of sku out of stock, or fails with ErrShort when
// there are not enough.
func (s *Stock) Reserve(sku string, n int) error {
	if s.items[sku] < n {
		return fmt.Errorf("%w: %s has %d, %d asked", ErrShort, sku, s.items[sku], n)
	}
	s.items[sku] += n
	return nil
}

// SKUs lists the SKUs in stock, sorted.
func (s *Stock) SKUs() []string {
	out := make([]string, 0, len(s.items))
	for sku, n := range s.items {
		if n > 0 {
			out = append(out, sku)
		}
	}
	sort.Strings(out)
	return out
}

// Report is one line per SKU: its name and count.
func (s *Stock) Report() string {
	var b strings.Builder
	for _, sku := range s.SKUs() {
		fmt.Fprintf(&b, "%-12s %6d\n", sku, s.items[sku])
	}
	return b.String()
}

// Release puts n reserved items of sku back into stock, for an order that
// was cancelled before it shipped. Releasing more than was reserved is the
// caller's mistake and is not checked here: the order service keeps the
// reservations.
func (s *Stock) Release(sku string, n int) {
	s.items[sku] += n
}

// Transfer moves n items of sku from s to dst, as a rebalancing between two
// warehouses does. It fails with ErrShort, moving nothing, when s holds fewer.
func (s *Stock) Transfer(dst *Stock, sku string, n int) error {
	if s.items[sku] < n {
		return fmt.Errorf("%w: transfer of %d %s, %d held", ErrShort, n, sku, s.items[sku])
	}
	s.items[sku] -= n
	dst.items[sku] += n
	return nil
}

// Total is the number of items of every SKU together.
func (s *Stock) Total() int {
	total := 0
	for _, n := range s.items {
		total += n
	}
	return total
}

// Low lists the SKUs with fewer than threshold items, sorted, for the
// purchasing team's morning report.
func (s *Stock) Low(threshold int) []string {
	var out []string
	for sku, n := range s.items {
		if n < threshold {
			out = append(out, sku)
		}
	}
	sort.Strings(out)
	return out
}

// Snapshot copies the stock levels, for a report that must not change while
// orders keep coming in.
func (s *Stock) Snapshot() map[string]int {
	out := make(map[string]int, len(s.items))
	for sku, n := range s.items {
		out[sku] = n
	}
	return out
}

// Restore sets the stock levels to a snapshot, as the nightly reconciliation
// does after counting the shelves.
func (s *Stock) Restore(snapshot map[string]int) {
	s.items = make(map[string]int, len(snapshot))
	for sku, n := range snapshot {
		s.items[sku] = n
	}
}

// Merge adds every level of other into s, as when two warehouses are
// consolidated into one.
func (s *Stock) Merge(other *Stock) {
	for sku, n := range other.items {
		s.items[sku] += n
	}
}

// Valid reports the SKUs whose level went below zero, which only a bug in a
// caller can cause; the nightly job alerts on any.
func (s *Stock) Valid() []string {
	var bad []string
	for sku, n := range s.items {
		if n < 0 {
			bad = append(bad, sku)
		}
	}
	sort.Strings(bad)
	return bad
}
`,
	"stock/stock_test.go": `package stock

import (
	"errors"
	"testing"
)

func TestReceive(t *testing.T) {
	s := New(nil)
	s.Receive("bolt-m4", 40)
	if got := s.Count("bolt-m4"); got != 40 {
		t.Fatalf("got %d, want 40", got)
	}
}

func TestReserve(t *testing.T) {
	s := New(map[string]int{"bolt-m4": 5})
	if err := s.Reserve("bolt-m4", 2); err != nil {
		t.Fatal(err)
	}
	if got := s.Count("bolt-m4"); got != 3 {
		t.Fatalf("after reserving 2 of 5: got %d, want 3", got)
	}
}

func TestReserveShort(t *testing.T) {
	s := New(map[string]int{"nut-m4": 1})
	if err := s.Reserve("nut-m4", 2); !errors.Is(err, ErrShort) {
		t.Fatalf("got %v, want ErrShort", err)
	}
}
`,
	"cmd/inventory/main.go": `// Command inventory prints a demo warehouse's stock after one reservation.
package main

import (
	"fmt"
	"os"

	"example.com/inventory/stock"
)

func main() {
	s := stock.New(map[string]int{"bolt-m4": 120, "nut-m4": 80, "washer-m4": 200})
	if err := s.Reserve("bolt-m4", 20); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Print(s.Report())
}
`,
}

// claudeTurn is one prompt of the session and what the scripted model does
// for it: its tool calls, one per request, then its answer.
type claudeTurn struct {
	prompt string
	steps  []agentstate.ToolCall
	answer string
}

// claudeSession is the session Claude Code runs through the proxy: three
// prompts in one conversation (claude -p, then claude -p --continue), each a
// few steps with real tools: Bash running go build, go vet and go test,
// Read, Edit and Write.
func claudeSession(ws string) []claudeTurn {
	bash := func(cmd, desc string) agentstate.ToolCall {
		return agentstate.ToolCall{Name: "Bash", ArgumentsJSON: string(mustJSON(map[string]string{"command": cmd, "description": desc}))}
	}
	read := func(path string) agentstate.ToolCall {
		return agentstate.ToolCall{Name: "Read", ArgumentsJSON: string(mustJSON(map[string]string{"file_path": filepath.Join(ws, path)}))}
	}
	return []claudeTurn{
		{
			prompt: "Run the tests of this Go module and fix what fails. Don't change the tests: the fix belongs in stock/stock.go.",
			steps: []agentstate.ToolCall{
				bash("go build ./... && go test ./... 2>&1", "Build and test the module"),
				read("stock/stock.go"),
				read("stock/stock_test.go"),
				{Name: "Edit", ArgumentsJSON: string(mustJSON(map[string]string{"file_path": filepath.Join(ws, "stock/stock.go"),
					"old_string": "\ts.items[sku] += n\n\treturn nil", "new_string": "\ts.items[sku] -= n\n\treturn nil"}))},
				bash("go test -v ./... 2>&1", "Run the tests verbosely"),
			},
			answer: "Fixed: Reserve added the reserved items to the stock instead of taking them out (stock/stock.go). go test ./... passes.",
		},
		{
			prompt: "Add a test that reserving exactly what is in stock leaves zero, then run go vet and the tests.",
			steps: []agentstate.ToolCall{
				{Name: "Write", ArgumentsJSON: string(mustJSON(map[string]string{"file_path": filepath.Join(ws, "stock/exact_test.go"),
					"content": "package stock\n\nimport \"testing\"\n\nfunc TestReserveAll(t *testing.T) {\n\ts := New(map[string]int{\"washer-m4\": 7})\n\tif err := s.Reserve(\"washer-m4\", 7); err != nil {\n\t\tt.Fatal(err)\n\t}\n\tif got := s.Count(\"washer-m4\"); got != 0 {\n\t\tt.Fatalf(\"got %d, want 0\", got)\n\t}\n}\n"}))},
				bash("go vet ./... && go test -v -count=1 ./... 2>&1", "Vet and test"),
			},
			answer: "Added TestReserveAll in stock/exact_test.go; go vet is clean and all four tests pass.",
		},
		{
			prompt: "Build the inventory command and run it to show the report.",
			steps: []agentstate.ToolCall{
				read("cmd/inventory/main.go"),
				bash("go build -o inventory-demo ./cmd/inventory && ./inventory-demo", "Build and run the command"),
			},
			answer: "The command reports bolt-m4 100, nut-m4 80 and washer-m4 200: the reservation of 20 bolts came out of the stock.",
		},
	}
}

// claudeModel is the scripted model of the Claude Code session. A request
// with Claude Code's tools is the agent's loop: the current turn (after the
// last user message) says which prompt it works on and how many of its
// steps are done, so it answers with the next one, or the turn's answer.
// Any other request (a title, a summary of the session) gets a short text.
func claudeModel(turns []claudeTurn) modelScript {
	return func(req upstreamRequest) modelTurn {
		conv := req.Conversation
		if conv == nil || !slices.ContainsFunc(conv.Tools, func(td agentstate.ToolDefinition) bool { return td.Name == "Bash" }) {
			return modelTurn{Text: "Inventory fixes"}
		}
		// The current turn starts at the last user message holding a
		// prompt (Claude Code adds reminders of its own to others; after a
		// compaction the first prompt, the summary and the next prompt may
		// be one message: the prompt written last is the turn's).
		for i := len(conv.Messages) - 1; i >= 0; i-- {
			m := conv.Messages[i]
			if m.Role != agentstate.RoleUser {
				continue
			}
			latest, at := -1, -1
			for k, turn := range turns {
				if p := strings.LastIndex(m.Text(), turn.prompt); p > at {
					latest, at = k, p
				}
			}
			if latest >= 0 {
				turn := turns[latest]
				done := 0
				for _, later := range conv.Messages[i+1:] {
					for _, p := range later.Parts {
						if p.Kind == agentstate.PartToolCall {
							done++
						}
					}
				}
				if done < len(turn.steps) {
					return modelTurn{Calls: []agentstate.ToolCall{turn.steps[done]}}
				}
				return modelTurn{Text: turn.answer}
			}
		}
		return modelTurn{Text: "I see no task I know."}
	}
}

// claudeWindow is the window the session runs in (X-Ctxc-Max-Context-Tokens):
// Claude Code's system prompt, tools and environment take about 12,900
// tokens and the first prompt's steps about 3,000 more, so the second
// prompt starts past budget-aware's trigger (0.8 of the window less its
// quarter reserved for output: 15,600 tokens) and the first is compacted.
const claudeWindow = 26000

// TestProxyClaudeCode runs Claude Code from npm (its native binary, headless
// claude -p) through the proxy against the scripted model, in a scratch Go
// module: three prompts of one session with real tools (Bash running go
// build, go vet and go test; Read; Edit; Write) in a window small enough that
// the session is compacted before it ends. Claude Code finishes every task
// (the module's tests pass after it), every request the upstream received is
// valid Anthropic Messages (tool calls and results paired, roles
// alternating), the calls past the trigger were rewritten and compacted, and
// the key stays between Claude Code and the upstream. With -update it keeps
// the session's transcript and the upstream's request bodies under
// examples/transcripts.
func TestProxyClaudeCode(t *testing.T) {
	dir := needProxyClients(t)
	claude := filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-code-linux-x64", "claude")
	if _, err := os.Stat(claude); err != nil {
		t.Fatalf("Claude Code's native binary is not installed at %s: run `cd integration/%s && npm ci` on linux/amd64 (`make test` does)", claude, proxyClients)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("go is not on PATH: the session's Bash tool runs go build and go test")
	}
	ws, home := t.TempDir(), t.TempDir()
	for name, content := range inventoryModule {
		path := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	turns := claudeSession(ws)
	up := newScriptedUpstream(t, claudeModel(turns))
	s, base := startProxyServer(t, map[string]string{"anthropic": up.URL})

	cache, _ := exec.Command(goBin, "env", "GOCACHE").Output()
	env := []string{
		"HOME=" + home, "ANTHROPIC_BASE_URL=" + base, "ANTHROPIC_API_KEY=" + plantedKey,
		"ANTHROPIC_CUSTOM_HEADERS=X-Ctxc-Max-Context-Tokens: " + strconv.Itoa(claudeWindow),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		"PATH=" + filepath.Dir(goBin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		// make test's build cache and its flags: the module's builds reuse
		// the standard library make build compiled, rather than compile it
		// again with cgo on a cold machine.
		"GOCACHE=" + strings.TrimSpace(string(cache)), "GOTOOLCHAIN=local", "CGO_ENABLED=0", "GOFLAGS=-trimpath",
	}
	for i, turn := range turns {
		args := []string{"-p", turn.prompt, "--output-format", "json", "--allowedTools", "Bash,Read,Edit,Write"}
		if i > 0 {
			args = append(args, "--continue")
		}
		var result struct {
			Result  string `json:"result"`
			IsError bool   `json:"is_error"`
		}
		runClaude(t, claude, ws, env, args, &result)
		if result.IsError || result.Result != turn.answer {
			t.Fatalf("prompt %d: %+v, want the answer %q", i+1, result, turn.answer)
		}
	}

	// The work is done: the module's tests pass, the new test among them.
	test := exec.Command(goBin, "test", "-count=1", "-v", "./...")
	test.Dir, test.Env = ws, append(os.Environ(), "GOTOOLCHAIN=local")
	out, err := test.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestReserveAll") || !strings.Contains(string(out), "--- PASS: TestReserve ") {
		t.Fatalf("the module's tests after the session: %v\n%s", err, out)
	}

	reqs := up.requests()
	loop := checkClaudeRequests(t, reqs)
	checkClaudeCompaction(t, s, loop)
	checkKeyStaysPut(t, s, nil)
	keepClaudeExamples(t, home, reqs)
}

// runClaude runs Claude Code once and decodes its JSON result.
func runClaude(t *testing.T, claude, ws string, env, args []string, out any) {
	t.Helper()
	cmd := exec.Command(claude, args...)
	cmd.Dir, cmd.Env = ws, append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("claude %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
	case <-time.After(4 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("claude %s did not finish\nstderr:\n%s", strings.Join(args, " "), stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("claude printed %q: %v\nstderr:\n%s", stdout.String(), err, stderr.String())
	}
}

// checkClaudeRequests checks every request the upstream received: valid for
// Anthropic (the validator: tool calls and results paired, roles
// alternating, blocks as the API documents them), with the fields Claude
// Code sends beside the conversation passed through. It returns how many
// were the agent's loop (requests with its tools).
func checkClaudeRequests(t *testing.T, reqs []upstreamRequest) int {
	t.Helper()
	loop := 0
	for i, r := range reqs {
		if r.Invalid != "" {
			t.Errorf("request %d (%s) is invalid: %s", i, r.Endpoint, r.Invalid)
		}
		if r.Endpoint != "messages" || !bytes.Contains(r.Body, []byte(`"name":"Bash"`)) {
			continue
		}
		loop++
		var body map[string]json.RawMessage
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		for _, field := range []string{"model", "system", "tools", "messages", "metadata", "max_tokens", "thinking", "stream"} {
			if body[field] == nil {
				t.Errorf("request %d lost the field %q Claude Code sends", i, field)
			}
		}
		if r.Query != "beta=true" {
			t.Errorf("request %d: query %q, want Claude Code's beta=true", i, r.Query)
		}
	}
	if loop < 12 {
		t.Errorf("the agent's loop made %d requests; the session has 12 steps and 3 answers", loop)
	}
	return loop
}

// proxied is the server's log line of one proxied call.
type proxied struct {
	Endpoint     string `json:"endpoint"`
	Outcome      string `json:"outcome"`
	Status       int    `json:"status"`
	Reason       string `json:"reason,omitempty"`
	TokensBefore int    `json:"tokens_before"`
	TokensAfter  int    `json:"tokens_after"`
	Compacted    bool   `json:"compacted"`
}

// proxiedCalls are the server's "proxied" log lines.
func proxiedCalls(t *testing.T, s *server) []proxied {
	t.Helper()
	var out []proxied
	sc := bufio.NewScanner(strings.NewReader(s.logs.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg string `json:"msg"`
			proxied
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "proxied" {
			out = append(out, line.proxied)
		}
	}
	return out
}

// checkClaudeCompaction: the calls whose context reached budget-aware's
// trigger went upstream rewritten and compacted, smaller and within the
// usable window; those below it went as Claude Code sent them.
func checkClaudeCompaction(t *testing.T, s *server, loop int) {
	t.Helper()
	usable := claudeWindow - claudeWindow/4
	trigger := int(0.8 * float64(usable))
	compacted := 0
	for i, c := range proxiedCalls(t, s) {
		if c.Endpoint != "messages" {
			continue
		}
		switch {
		case c.TokensBefore >= trigger && (c.Outcome != "rewritten" || !c.Compacted || c.TokensAfter >= c.TokensBefore):
			t.Errorf("call %d reached the trigger (%d tokens of %d) but went %s, compacted %v, %d tokens", i, c.TokensBefore, trigger, c.Outcome, c.Compacted, c.TokensAfter)
		case c.TokensBefore < trigger && c.Outcome != "unchanged":
			t.Errorf("call %d was below the trigger (%d tokens) but went %s", i, c.TokensBefore, c.Outcome)
		}
		if c.TokensAfter > usable {
			t.Errorf("call %d sent %d tokens, over the usable window of %d", i, c.TokensAfter, usable)
		}
		if c.Compacted {
			compacted++
		}
	}
	if compacted == 0 {
		t.Errorf("no call of the session's %d was compacted: the window (%d) is too large for it: %+v", loop, claudeWindow, proxiedCalls(t, s))
	}
}

// The examples the session leaves (examples/transcripts): Claude Code's own
// transcript of it and the request bodies the upstream received, one a line.
var (
	claudeTranscript = filepath.Join("examples", "transcripts", "proxy-claude-code-session.jsonl")
	claudeRequests   = filepath.Join("examples", "transcripts", "proxy-claude-code-requests.jsonl")
)

// keepClaudeExamples writes the session's transcript and request bodies
// under examples/transcripts with -update; without it, checks the committed
// ones: a transcript of the session's prompts and a list of valid requests.
func keepClaudeExamples(t *testing.T, home string, reqs []upstreamRequest) {
	t.Helper()
	if *update {
		transcripts, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", "*.jsonl"))
		if len(transcripts) != 1 {
			t.Fatalf("Claude Code left %d transcripts in %s, want the session's one", len(transcripts), home)
		}
		data, err := os.ReadFile(transcripts[0])
		if err != nil {
			t.Fatal(err)
		}
		var lines bytes.Buffer
		for _, r := range reqs {
			var compact bytes.Buffer
			if err := json.Compact(&compact, r.Body); err != nil {
				t.Fatal(err)
			}
			lines.Write(compact.Bytes())
			lines.WriteByte('\n')
		}
		for path, content := range map[string][]byte{claudeTranscript: data, claudeRequests: lines.Bytes()} {
			full := filepath.Join(repoRoot, path)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	transcript, err := os.ReadFile(filepath.Join(repoRoot, claudeTranscript))
	if err != nil {
		t.Fatalf("%v: run this test with -update to keep the session's transcript", err)
	}
	for _, turn := range claudeSession("") {
		if !bytes.Contains(transcript, []byte(turn.prompt)) {
			t.Errorf("%s does not hold the prompt %q", claudeTranscript, turn.prompt)
		}
	}
	requests, err := os.ReadFile(filepath.Join(repoRoot, claudeRequests))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range bytes.Split(bytes.TrimSpace(requests), []byte("\n")) {
		n++
		if bytes.Contains(line, []byte(`"messages"`)) && bytes.Contains(line, []byte(`"max_tokens"`)) {
			if err := providers.ValidateAnthropic(line); err != nil {
				t.Errorf("%s line %d: %v", claudeRequests, n, err)
			}
		}
	}
	if n < 12 {
		t.Errorf("%s holds %d requests", claudeRequests, n)
	}
}
