//go:build integration

package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// chromiumPath is Debian's Chromium (scripts/deps.sh installs it), or
// CTXC_CHROMIUM. A test that needs it fails without it: it never skips.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CTXC_CHROMIUM"); p != "" {
		return p
	}
	return needProgram(t, "chromium", "make deps")
}

// artifactDir is where the browser tests leave their screenshots:
// CTXC_TEST_ARTIFACTS, else bin/test-artifacts (not committed).
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CTXC_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(repoRoot, "bin", "test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser is a headless Chromium tab that records every request it makes and
// every error the page reports (exceptions, console errors, CSP violations).
type browser struct {
	ctx context.Context

	mu       sync.Mutex
	requests []string
	problems []string
}

// newBrowser starts Chromium with the flags a closed network needs (no
// background connections to Google's hosts) and a fresh profile; headers go
// on every request it sends.
func newBrowser(t *testing.T, headers map[string]any) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless,
		chromedp.NoSandbox, // tests run as root in CI
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1500, 1100),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	if headers == nil {
		headers = map[string]any{}
	}
	b := &browser{}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithListener(b.record))
	b.ctx = ctx
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	setHeaders := func(ctx context.Context, tab *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tab, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers(headers)})
		return chromedp.Void{}, err
	}
	// The first action starts the browser, on a context without a deadline
	// (a deadline there would end the browser with it).
	if err := chromedp.Do(ctx, setHeaders); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return b
}

// record runs in the tab's event loop: it only appends.
func (b *browser) record(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		b.requests = append(b.requests, ev.Request.URL)
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		text := d.Text
		if d.Exception != nil {
			text += " " + d.Exception.Description
		}
		b.problems = append(b.problems, "exception: "+text)
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			b.problems = append(b.problems, "console.error: "+strings.Join(args, " "))
		}
	case *cdplog.EventEntryAdded:
		if ev.Entry.Level == cdplog.EntryLevelError {
			b.problems = append(b.problems, fmt.Sprintf("%s: %s (%s)", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
		}
	}
}

// run runs actions within a minute.
func (b *browser) run(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v\npage problems: %v", what, err, b.pageProblems())
	}
}

// eval evaluates a JavaScript expression into a T.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %.80s: %v\npage problems: %v", expr, err, b.pageProblems())
	}
	return v
}

func (b *browser) pageProblems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.problems...)
}

// checkOnlyServer fails the test for any request the page made to another
// origin than the server's, and for any error the page reported.
func (b *browser) checkOnlyServer(t *testing.T, origin string) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.requests) == 0 {
		t.Error("the browser recorded no requests at all")
	}
	for _, u := range b.requests {
		if !strings.HasPrefix(u, origin+"/") {
			t.Errorf("the page requested %s, outside the server %s", u, origin)
		}
	}
	for _, p := range b.problems {
		t.Errorf("the page reported %s", p)
	}
}

// setField sets an input, textarea or select as a user would, so that the
// page's handlers see the change.
func setField(selector, value string) chromedp.Action[chromedp.Void] {
	js := fmt.Sprintf(`(() => {
		const el = document.querySelector(%q);
		if (!el) throw new Error("no element " + %q);
		el.value = %s;
		el.dispatchEvent(new Event(el.tagName === "SELECT" ? "change" : "input", { bubbles: true }));
	})()`, selector, selector, jsString(value))
	return chromedp.Evaluate[chromedp.Void](js)
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// waitForJS polls a JavaScript condition until it is true.
func waitForJS(expr string) chromedp.Action[chromedp.Void] {
	poll := chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(30*time.Second))
	return func(ctx context.Context, tab *chromedp.Target) (chromedp.Void, error) {
		_, err := poll(ctx, tab)
		return chromedp.Void{}, err
	}
}

func click(selector string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(chromedp.CSS(selector))
}

func screenshot(t *testing.T, b *browser, name string) []byte {
	t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(artifactDir(t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return png
}

// domSide is what the page shows for one side of a compile, read from the DOM.
type domSide struct {
	Profile      string
	Rows         [][2]string // id, disposition
	RowColors    map[string]string
	BarColors    map[string]string
	Segments     map[string]int
	Soft, Window int
	SoftLeft     string
	Boundary     int
	StableBefore int
	BoundaryTop  int
	// FirstUnstable is the index of the first compiled row drawn after the
	// boundary (-1 when every row is before it).
	FirstUnstable int
	Compiled      []string
	Stages        int
	Rendered      string
}

const readSide = `((side) => {
	const root = document.querySelector('.result[data-side="' + side + '"]');
	if (!root) return null;
	const rows = [...root.querySelectorAll('.log .row')];
	const rowColors = {}, barColors = {};
	for (const r of rows) {
		rowColors[r.dataset.disposition] = getComputedStyle(r).borderLeftColor;
		barColors[r.dataset.disposition] = getComputedStyle(r.querySelector('.bar-sent')).backgroundColor;
	}
	const segments = {};
	for (const s of root.querySelectorAll('.budget-bar .seg')) segments[s.dataset.key] = Number(s.dataset.tokens);
	const soft = root.querySelector('.marker-soft');
	const boundary = root.querySelector('.compiled .cache-boundary');
	const list = root.querySelector('.compiled .rows');
	const rendered = root.querySelector('.rendered pre');
	return {
		Profile: root.dataset.profile,
		Rows: rows.map((r) => [r.dataset.id, r.dataset.disposition]),
		RowColors: rowColors,
		BarColors: barColors,
		Segments: segments,
		Soft: soft ? Number(soft.dataset.tokens) : 0,
		SoftLeft: soft ? soft.style.left : "",
		Window: Number(root.querySelector('.marker-window').dataset.tokens),
		Boundary: boundary ? Number(boundary.dataset.index) : -1,
		StableBefore: root.querySelectorAll('.compiled .crow.stable').length,
		BoundaryTop: boundary ? boundary.offsetTop : -1,
		FirstUnstable: Number(root.querySelector('.compiled .crow:not(.stable)')?.dataset.index ?? -1),
		Compiled: [...list.querySelectorAll('.crow')].map((r) => r.dataset.id),
		Stages: root.querySelectorAll('.timeline tr.stage').length,
		Rendered: rendered ? rendered.textContent : "",
	};
})`

// rowHeight is the height of a row in the page's lists (ui/src/virtual.jsx).
const rowHeight = 20

// dispositionColors are the page's colours (ui/src/style.css), as the
// browser computes them.
var dispositionColors = map[string]string{
	"kept":       "rgb(22, 163, 74)",
	"masked":     "rgb(217, 119, 6)",
	"summarized": "rgb(124, 58, 237)",
	"dropped":    "rgb(220, 38, 38)",
	"truncated":  "rgb(234, 88, 12)",
	"repaired":   "rgb(37, 99, 235)",
}

func dispositionName(d ctxcv1.Disposition) string {
	return strings.ToLower(strings.TrimPrefix(d.String(), "DISPOSITION_"))
}

// checkSide compares what the page shows with the server's own answer to
// the same request over gRPC.
func checkSide(t *testing.T, side string, got domSide, want *ctxcv1.CompileResponse) {
	t.Helper()
	var wantRows [][2]string
	for _, m := range want.GetReport().GetMessages() {
		wantRows = append(wantRows, [2]string{m.GetMessageId(), dispositionName(m.GetDisposition())})
	}
	if diff := cmp.Diff(wantRows, got.Rows); diff != "" {
		t.Errorf("side %s: log rows (id, disposition) differ from the Compile response (-want +got):\n%s", side, diff)
	}
	for d, c := range got.RowColors {
		if want, ok := dispositionColors[d]; !ok || c != want || got.BarColors[d] != want {
			t.Errorf("side %s: %s rows are coloured %s (bar %s), want %s", side, d, c, got.BarColors[d], want)
		}
	}
	b := want.GetBudget()
	br := b.GetBreakdown()
	wantSeg := map[string]int{
		"system":       int(br.GetSystemPromptTokenCount() + br.GetToolsTokenCount()),
		"conversation": int(br.GetConversationTokenCount() + br.GetPinnedTokenCount()),
		"trace":        int(br.GetToolTraceTokenCount()),
		"summary":      int(br.GetSummariesTokenCount()),
		"reserved":     int(b.GetReservedOutputTokenCount()),
		"free":         int(b.GetContextWindowTokenCount()) - int(b.GetUsedTokenCount()) - int(b.GetReservedOutputTokenCount()),
	}
	counted := 0
	for k, v := range wantSeg {
		if v <= 0 {
			delete(wantSeg, k)
		} else if k != "reserved" && k != "free" {
			counted += v
		}
	}
	if other := int(b.GetUsedTokenCount()) - counted; other > 0 {
		wantSeg["other"] = other
	}
	if diff := cmp.Diff(wantSeg, got.Segments); diff != "" {
		t.Errorf("side %s: budget bar segments (tokens) differ from the budget (-want +got):\n%s", side, diff)
	}
	if got.Soft != int(b.GetSoftThresholdTokenCount()) || got.Window != int(b.GetContextWindowTokenCount()) {
		t.Errorf("side %s: markers at soft %d, window %d; the budget says %d, %d", side, got.Soft, got.Window, b.GetSoftThresholdTokenCount(), b.GetContextWindowTokenCount())
	}
	total := max(int(b.GetContextWindowTokenCount()), int(b.GetUsedTokenCount()+b.GetReservedOutputTokenCount()))
	left, err := strconv.ParseFloat(strings.TrimSuffix(got.SoftLeft, "%"), 64)
	if wantLeft := 100 * float64(b.GetSoftThresholdTokenCount()) / float64(total); err != nil || math.Abs(left-wantLeft) > 0.001 {
		t.Errorf("side %s: soft threshold marker at %q, want %.3f%%", side, got.SoftLeft, wantLeft)
	}
	var wantCompiled []string
	for _, m := range want.GetMessages() {
		wantCompiled = append(wantCompiled, m.GetId())
	}
	if diff := cmp.Diff(wantCompiled, got.Compiled); diff != "" {
		t.Errorf("side %s: compiled messages differ (-want +got):\n%s", side, diff)
	}
	first := int(want.GetReport().GetFirstChangedIndex())
	wantUnstable := first
	if first >= len(want.GetMessages()) {
		wantUnstable = -1
	}
	if got.Boundary != first || got.StableBefore != first || got.FirstUnstable != wantUnstable || got.BoundaryTop != first*rowHeight {
		t.Errorf("side %s: cache boundary for index %d drawn %dpx down, with %d compiled messages above it and the first below it at %d; first_changed_index is %d (%dpx down)",
			side, got.Boundary, got.BoundaryTop, got.StableBefore, got.FirstUnstable, first, first*rowHeight)
	}
	if got.Stages != len(want.GetReport().GetStages()) {
		t.Errorf("side %s: %d stage rows, the report has %d stages", side, got.Stages, len(want.GetReport().GetStages()))
	}
	if !json.Valid([]byte(got.Rendered)) || !strings.Contains(got.Rendered, `"messages"`) {
		t.Errorf("side %s: rendered body is not an OpenAI body: %.200s", side, got.Rendered)
	}
}

// TestInspectorInBrowser drives the inspector page in headless Chromium
// against the real binary: the coding-agent example compiled by two
// profiles side by side, a 2,000-message state, and the replay of a
// `ctxc eval --json` run; the page must make no request outside the server
// and report no error (a CSP violation among them).
func TestInspectorInBrowser(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--config", "examples/profiles.yaml", "--http-listen", "127.0.0.1:0")
	origin := "http://" + s.httpAddr(t)
	b := newBrowser(t, nil)

	b.run(t, "open the page",
		chromedp.Navigate(origin+"/ui/"),
		waitForJS(`document.querySelectorAll('select[name="profile-A"] option').length >= 4`),
		chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{filepath.Join(repoRoot, "examples", "coding-agent.json")}),
		waitForJS(`document.querySelector('#input').value.includes('"coding-agent"') || document.querySelector('#input').value.length > 1000`),
		setField(`select[name="profile-A"]`, "policy-driven"),
		setField(`input[name="window-A"]`, "2000"),
		click("#compare"),
		waitForJS(`!!document.querySelector('select[name="profile-B"]')`),
		setField(`select[name="profile-B"]`, "pragmatic"),
		click("#run"),
		waitForJS(`document.querySelectorAll('.result').length === 2 && document.querySelector('#timing')?.dataset.drawnMs !== ""`),
	)

	// Clicking a masked row shows its text and the reason.
	b.run(t, "open a masked row",
		click(`.result[data-side="a"] .row.disp-masked`),
		waitForJS(`!!document.querySelector('.result[data-side="a"] .log .details')`),
	)
	details := eval[string](t, b, `document.querySelector('.result[data-side="a"] .log .details').textContent`)
	if !strings.Contains(details, "replaced by a placeholder") {
		t.Errorf("a masked row's details do not say why: %.300s", details)
	}
	png := screenshot(t, b, "inspector-coding-agent.png")
	if *update {
		if err := os.WriteFile(filepath.Join(repoRoot, "docs", "inspector.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	b.run(t, "open the rendered bodies",
		click(`.result[data-side="a"] .rendered summary`),
		click(`.result[data-side="b"] .rendered summary`),
		waitForJS(`document.querySelectorAll('.rendered pre').length === 2`),
	)

	// The same requests over gRPC: what the page must show.
	example := readExample(t, "coding-agent.json")
	compile := func(profile string, window uint32) *ctxcv1.CompileResponse {
		req := proto.Clone(example).(*ctxcv1.CompileRequest)
		req.Profile = profile
		req.Options = &ctxcv1.CompileOptions{Render: ctxcv1.RenderFormat_RENDER_FORMAT_OPENAI}
		if window > 0 {
			req.Options.MaxContextTokenCount = proto.Uint32(window)
		}
		resp, err := s.client().Compile(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for _, side := range []struct {
		name, profile string
		window        uint32
	}{{"a", "policy-driven", 2000}, {"b", "pragmatic", 0}} {
		got := eval[domSide](t, b, readSide+"("+jsString(side.name)+")")
		if got.Profile != side.profile {
			t.Fatalf("side %s shows profile %q, want %q", side.name, got.Profile, side.profile)
		}
		checkSide(t, side.name, got, compile(side.profile, side.window))
	}
	masked := eval[int](t, b, `document.querySelectorAll('.result[data-side="a"] .row.disp-masked').length`)
	if masked == 0 {
		t.Error("policy-driven in a 2,000-token window masked nothing on the page; the example's large tool outputs should be masked")
	}

	t.Run("2,000 messages", func(t *testing.T) {
		long := filepath.Join(t.TempDir(), "long-2000.json")
		if err := os.WriteFile(long, []byte(longState(2000)), 0o644); err != nil {
			t.Fatal(err)
		}
		b.run(t, "compile 2,000 messages",
			click("#compare"),
			waitForJS(`!document.querySelector('select[name="profile-B"]')`),
			chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{long}),
			waitForJS(`document.querySelector('#loaded')?.textContent.includes('long-2000.json')`),
			setField(`select[name="profile-A"]`, "budget-aware"),
			setField(`input[name="window-A"]`, ""),
			click("#run"),
			waitForJS(`document.querySelector('#timing')?.dataset.drawnMs && document.querySelector('#timing').dataset.messages === "2000"`),
		)
		timing := eval[struct {
			Fetch, Built, Drawn string
			Rows                int
		}](t, b, `({Fetch: document.querySelector('#timing').dataset.fetchMs, Drawn: document.querySelector('#timing').dataset.drawnMs,
			Built: document.querySelector('#timing').dataset.builtMs,
			Rows: Number(document.querySelector('.result[data-side="a"] .rows[data-list="log"]').dataset.count)})`)
		if timing.Rows != 2000 {
			t.Errorf("the log list holds %d rows, want 2000", timing.Rows)
		}
		fetch, _ := strconv.ParseFloat(timing.Fetch, 64)
		built, _ := strconv.ParseFloat(timing.Built, 64)
		drawn, _ := strconv.ParseFloat(timing.Drawn, 64)
		// Reported, not asserted: a timing is a measurement, not a test.
		t.Logf("2,000-message state: Compile and Budget answered in %.0f ms; the page built the DOM in %.0f ms and had it on screen in %.0f ms", fetch, built, drawn)
		// Scrolled to its end, the list shows the last message.
		b.run(t, "scroll to the last message",
			chromedp.Evaluate[chromedp.Void](`(() => { const l = document.querySelector('.result[data-side="a"] .rows[data-list="log"]'); l.scrollTop = l.scrollHeight; l.dispatchEvent(new Event('scroll')); })()`),
			waitForJS(`!!document.querySelector('.result[data-side="a"] .log .row[data-id="r499"]')`),
		)
		screenshot(t, b, "inspector-2000-messages.png")
	})

	t.Run("provider body", func(t *testing.T) {
		body := `{"model": "claude-sonnet-4-5", "max_tokens": 1024, "system": "Be brief.", "messages": [
			{"role": "user", "content": "List the files."},
			{"role": "assistant", "content": [{"type": "tool_use", "id": "tu1", "name": "ls", "input": {"path": "."}}]},
			{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu1", "content": "go.mod\nmain.go"}]}]}`
		b.run(t, "compile an Anthropic body",
			setField("#input", body),
			waitForJS(`document.querySelector('#kind').selectedOptions[0].textContent.includes('Anthropic')`),
			setField(`select[name="profile-A"]`, "pragmatic"),
			click("#run"),
			waitForJS(`document.querySelector('#timing')?.dataset.messages === "3" && document.querySelector('#timing').dataset.drawnMs !== ""`),
		)
		got := eval[[]string](t, b, `[...document.querySelectorAll('.result[data-side="a"] .log .row')].map((r) => r.dataset.disposition)`)
		if diff := cmp.Diff([]string{"kept", "kept", "kept"}, got); diff != "" {
			t.Errorf("an Anthropic body's rows (-want +got):\n%s", diff)
		}
	})

	t.Run("session replay", func(t *testing.T) {
		out, err := exec.Command(ctxcBinary, "eval", "--json", "--config", filepath.Join(repoRoot, "examples", "profiles.yaml"),
			"--profiles", "budget-aware,pragmatic", "--windows", "8000", filepath.Join(repoRoot, "examples", "sessions", "long-coding-40.jsonl")).Output()
		if err != nil {
			t.Fatalf("ctxc eval: %v", err)
		}
		var evalOut struct {
			Compiles []struct {
				Profile string `json:"profile"`
			} `json:"compiles"`
		}
		if err := json.Unmarshal(out, &evalOut); err != nil {
			t.Fatal(err)
		}
		b.run(t, "show the replay",
			setField("#input", string(out)),
			waitForJS(`document.querySelector('#run').textContent.includes('replay')`),
			click("#run"),
			waitForJS(`document.querySelectorAll('.chart canvas').length >= 4`),
		)
		got := eval[struct {
			Charts  []string
			Legends []string
			Rows    int
		}](t, b, `({Charts: [...document.querySelectorAll('.chart')].map((c) => c.dataset.chart),
			Legends: [...new Set([...document.querySelectorAll('.chart[data-chart="sent"] .u-legend .u-series th')].map((e) => e.textContent.trim()))],
			Rows: document.querySelectorAll('table.eval-rows tbody tr').length})`)
		if diff := cmp.Diff([]string{"sent", "window", "prefix", "facts"}, got.Charts); diff != "" {
			t.Errorf("replay charts (-want +got):\n%s", diff)
		}
		for _, p := range []string{"budget-aware @ 8000", "pragmatic @ 8000"} {
			if !strings.Contains(strings.Join(got.Legends, "|"), p) {
				t.Errorf("the tokens-sent chart has no line %q: %q", p, got.Legends)
			}
		}
		if got.Rows != 2 {
			t.Errorf("%d rows in the eval table, want 2 (one per profile and window)", got.Rows)
		}
		screenshot(t, b, "inspector-replay.png")
	})

	b.checkOnlyServer(t, origin)
}

// longState is an AgentState of n log messages: turns of a user question, a
// tool call, its output and an answer.
func longState(n int) string {
	st := &ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: "gpt-4o"}, Context: &ctxcv1.AgentContext{SystemPrompt: "You are a coding agent working in a Go repository."}}
	add := func(m *ctxcv1.Message) { st.Context.Messages = append(st.Context.Messages, m) }
	for turn := 0; len(st.Context.Messages) < n; turn++ {
		call := fmt.Sprintf("call_%d", turn)
		add(&ctxcv1.Message{Id: fmt.Sprintf("u%d", turn), Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: fmt.Sprintf("Step %d: look at package p%d and fix the failing test.", turn, turn)}}}})
		add(&ctxcv1.Message{Id: fmt.Sprintf("a%d", turn), Role: ctxcv1.Role_ROLE_ASSISTANT, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_ToolCall{ToolCall: &ctxcv1.ToolCall{Id: call, Name: "read_file", ArgumentsJson: fmt.Sprintf(`{"path":"p%d/p.go"}`, turn)}}}}})
		add(&ctxcv1.Message{Id: fmt.Sprintf("t%d", turn), Role: ctxcv1.Role_ROLE_TOOL, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_ToolResult{ToolResult: &ctxcv1.ToolResult{ToolCallId: call, Name: "read_file",
			Content: strings.Repeat(fmt.Sprintf("func f%d(x int) int { return x * %d } // line of p%d\n", turn, turn, turn), 10+turn%40)}}}}})
		add(&ctxcv1.Message{Id: fmt.Sprintf("r%d", turn), Role: ctxcv1.Role_ROLE_ASSISTANT, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: fmt.Sprintf("Fixed p%d: the multiplier was off by one.", turn)}}}})
	}
	st.Context.Messages = st.Context.Messages[:n]
	out, err := protojson.Marshal(st)
	if err != nil {
		panic(err)
	}
	return string(out)
}

// TestInspectorBehindTokens: with bearer tokens the page needs one too (as an
// HTTP Basic password, which a browser asks for), and its API calls carry it
// to the gRPC server's check.
func TestInspectorBehindTokens(t *testing.T) {
	t.Parallel()
	const token = "0123456789abcdef0123"
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("inspector-user "+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "--auth-token-file", tokens, "--http-listen", "127.0.0.1:0")
	origin := "http://" + s.httpAddr(t)
	basic := func(password string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte("me:"+password))
	}
	for _, tc := range []struct {
		name, method, path, auth string
		want                     int
	}{
		{"page without a token", http.MethodGet, "/ui/", "", http.StatusUnauthorized},
		{"page with a wrong token", http.MethodGet, "/ui/", basic("0123456789abcdef0124"), http.StatusUnauthorized},
		{"page with the token", http.MethodGet, "/ui/", basic(token), http.StatusOK},
		{"script with the token as bearer", http.MethodGet, "/ui/inspector.js", "Bearer " + token, http.StatusOK},
		{"API below the page without a token", http.MethodPost, "/ui/api/ctxc.v1.ContextCompilerService/ListProfiles", "", http.StatusUnauthorized},
		{"API below the page with a wrong token", http.MethodPost, "/ui/api/ctxc.v1.ContextCompilerService/ListProfiles", basic("0123456789abcdef0124"), http.StatusUnauthorized},
		{"API below the page with the token", http.MethodPost, "/ui/api/ctxc.v1.ContextCompilerService/ListProfiles", basic(token), http.StatusOK},
	} {
		req, _ := http.NewRequest(tc.method, origin+tc.path, strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		code, body := do(t, req)
		if code != tc.want {
			t.Errorf("%s: HTTP %d, want %d: %.200s", tc.name, code, tc.want, body)
		}
	}
	// The page in a browser that has the credentials, as after the login prompt.
	b := newBrowser(t, map[string]any{"Authorization": basic(token)})
	b.run(t, "open the page behind tokens",
		chromedp.Navigate(origin+"/ui/"),
		waitForJS(`document.querySelectorAll('select[name="profile-A"] option').length >= 1`),
	)
	if eval[int](t, b, `document.querySelectorAll('.error').length`) != 0 {
		t.Error("the page shows an error behind tokens")
	}
	b.checkOnlyServer(t, origin)
}

// TestInspectorOnlyWhereAsked: the page is served on a loopback
// HTTP port unless turned off, and not on another address unless turned on.
func TestInspectorOnlyWhereAsked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"loopback, default", nil, http.StatusOK},
		{"loopback, off", []string{"--http-ui", "off"}, http.StatusNotFound},
	} {
		s := startServer(t, append([]string{"--http-listen", "127.0.0.1:0"}, tc.args...)...)
		req, _ := http.NewRequest(http.MethodGet, "http://"+s.httpAddr(t)+"/ui/", nil)
		if code, _ := do(t, req); code != tc.want {
			t.Errorf("%s: GET /ui/ is %d, want %d", tc.name, code, tc.want)
		}
	}
}
