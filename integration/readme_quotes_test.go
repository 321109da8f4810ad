//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"gopkg.in/yaml.v3"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/adapter"
	"github.com/contextcompiler/ctxc/internal/adapter/stateref"
	"github.com/contextcompiler/ctxc/internal/compiler"
	"github.com/contextcompiler/ctxc/internal/summarycache"
	"github.com/contextcompiler/ctxc/policies/compaction"
)

// readmeQuote is a passage of the README's text that quotes numbers, and
// where the true numbers come from. In passage, # stands for a number in
// digits (1,135 or 0.8), @ for one in words (ten), and any run of white space
// for any other (the text wraps); the rest is literal. numbers returns the
// true numbers in the passage's order, from the answers of the README's own
// commands wherever one shows them, else from the code or files that define
// them; it may also report claims of the passage that are not numbers.
//
// When behaviour changes, the test names the passage, the number quoted and
// the number now answered: update the README's text, not this list. Only a
// reworded passage needs its entry here changed.
type readmeQuote struct {
	passage string
	numbers func(t *testing.T, a *readmeAnswers) []any
}

func readmeQuotes() []readmeQuote {
	return []readmeQuote{
		{"with its default `min_importance_threshold` of # it drops reasoning-only output and messages given an explicit `importance` under # first, and " +
			"never the newest # messages (`keep_recent_messages`)", func(t *testing.T, a *readmeAnswers) []any {
			return []any{compaction.DefaultMinImportanceThreshold, compaction.DefaultMinImportanceThreshold, compaction.DefaultKeepRecentMessages}
		}},
		{"What you need: Go # (the version in `go.mod`)", func(t *testing.T, a *readmeAnswers) []any {
			return []any{goVersion(t)}
		}},
		{"call and a #K-token tool output", func(t *testing.T, a *readmeAnswers) []any {
			return []any{thousands(messageTokens(t, a.budget(t, "Budget < examples/coding-agent.json"), "t3"))}
		}},
		{"Uncompacted, the coding agent comes back whole (# omitted, none returned); in an #-token window " +
			"`budget-aware` masks the first tool output, so the system prompt, `u1` and `a1` are omitted and the @ messages from `t1` on are returned",
			func(t *testing.T, a *readmeAnswers) []any {
				whole, masked := a.omitted(t, "jq '. + {omitStablePrefix: true}'"), a.omitted(t, `omitStablePrefix: true, profile: "budget-aware"`)
				if len(whole.Returned) != 0 {
					t.Errorf("uncompacted, Compile returned %v; the README says none", whole.Returned)
				}
				// The system prompt counts as one omitted message.
				if masked.Omitted != 3 || len(masked.Returned) == 0 || masked.Returned[0] != "t1" {
					t.Errorf("budget-aware omitted %d and returned %v; the README says the system prompt, u1 and a1 omitted, from t1 on returned", masked.Omitted, masked.Returned)
				}
				return []any{whole.Omitted, commandNumber(t, a.command(t, `omitStablePrefix: true, profile: "budget-aware"`), "maxContextTokenCount"), len(masked.Returned)}
			}},
		{"For `gpt-4o` it reads: window #; # reserved for output; used # tokens, `ANCHORED`: the # tokens the provider reported " +
			"for the exchange up to the assistant answer `a1` (input plus output, counted once), plus the event `e1` (#) and the new question `u2` (#) " +
			"counted exactly; remaining # − # − # = #; compaction would start at #% of the usable window, # × # = #.",
			func(t *testing.T, a *readmeAnswers) []any {
				b := a.budget(t, `jq '.state.model = {name: "gpt-4o"}' examples/chat.json | ./bin/grpcurl`)
				bud := b.GetBudget()
				if bud.GetProvenance() != ctxcv1.TokenCountProvenance_TOKEN_COUNT_PROVENANCE_ANCHORED {
					t.Errorf("provenance %v; the README says ANCHORED", bud.GetProvenance())
				}
				reported := exchangeUsage(t, "chat.json", "a1")
				e1, u2 := messageTokens(t, b, "e1"), messageTokens(t, b, "u2")
				if got := reported + e1 + u2; got != int(bud.GetUsedTokenCount()) {
					t.Errorf("used %d is not %d reported + %d + %d, as the README adds it", bud.GetUsedTokenCount(), reported, e1, u2)
				}
				window, used, reserved := int(bud.GetContextWindowTokenCount()), int(bud.GetUsedTokenCount()), int(bud.GetReservedOutputTokenCount())
				usable, soft := window-reserved, int(bud.GetSoftThresholdTokenCount())
				ratio := math.Round(float64(soft)/float64(usable)*100) / 100
				return []any{window, reserved, used, reported, e1, u2, window, used, reserved, int(bud.GetRemainingTokenCount()),
					int(math.Round(ratio * 100)), ratio, usable, soft}
			}},
		{"and `Budget` counts the context ANCHORED on the provider's # reported tokens", func(t *testing.T, a *readmeAnswers) []any {
			b := a.budget(t, "jq '{state}' /tmp/ctxc-session-2.json")
			if b.GetBudget().GetProvenance() != ctxcv1.TokenCountProvenance_TOKEN_COUNT_PROVENANCE_ANCHORED {
				t.Errorf("provenance %v; the README says ANCHORED", b.GetBudget().GetProvenance())
			}
			var step struct {
				Step struct {
					Usage struct{ InputTokenCount, OutputTokenCount int }
				}
			}
			readJSON(t, filepath.Join(repoRoot, "examples", "session", "2-tool-step.json"), &step)
			return []any{step.Step.Usage.InputTokenCount + step.Step.Usage.OutputTokenCount}
		}},
		{"On the coding-agent example with a #-token window, `policy-driven` masks the @ old tool outputs (the #K-token grep among them)", func(t *testing.T, a *readmeAnswers) []any {
			masked := 0
			for _, m := range a.compacted(t).GetState().GetContext().GetMessages() {
				if m.GetMask() != nil {
					masked++
				}
			}
			maskOf(t, a, "t3") // the grep is among them
			grep := messageTokens(t, a.budget(t, "Budget < examples/coding-agent.json"), "t3")
			return []any{commandNumber(t, a.command(t, "ContextCompilerService/Compact"), "maxContextTokenCount"), masked, thousands(grep)}
		}},
		{"the summary in place of the @ messages it covers, # tokens down to #:", func(t *testing.T, a *readmeAnswers) []any {
			var compiled struct {
				Used     int
				Messages []struct{ ID, Kind string }
			}
			a.decode(t, "/tmp/ctxc-session-compacted.json | ./bin/grpcurl", &compiled)
			sum := summary(t, a)
			shown := map[string]bool{}
			for _, m := range compiled.Messages {
				shown[m.ID] = true
			}
			for _, id := range sum.GetCoversMessageIds() {
				if shown[id] {
					t.Errorf("the compile of the compacted state shows %s, which the summary covers", id)
				}
			}
			if !shown[sum.GetId()] {
				t.Errorf("the compile of the compacted state does not show the summary %s: %v", sum.GetId(), compiled.Messages)
			}
			return []any{len(sum.GetCoversMessageIds()), int(a.compacted(t).GetBudgetBefore().GetUsedTokenCount()), compiled.Used}
		}},
		{"followed by the output's first and last # characters", func(t *testing.T, a *readmeAnswers) []any {
			original := toolOutput(t, "coding-agent.json", "t3")
			placeholder := maskOf(t, a, "t3").GetPlaceholder()
			_, rest, _ := strings.Cut(placeholder, "\nhead: ")
			head, tail, ok := strings.Cut(rest, "\n…\ntail: ")
			if !ok || !strings.HasPrefix(original, head) || !strings.HasSuffix(original, tail) || len([]rune(head)) != len([]rune(tail)) {
				t.Errorf("the placeholder does not hold as many first and last characters of the output:\n%s", placeholder)
			}
			return []any{len([]rune(head))}
		}},
		{"`GET /healthz` answers # `{\"status\":\"SERVING\"}` when the server is ready and # otherwise.", func(t *testing.T, a *readmeAnswers) []any {
			var health struct{ Status string }
			a.decode(t, "/healthz", &health)
			if health.Status != "SERVING" {
				t.Errorf("/healthz answered %+v", health)
			}
			// The gateway's health endpoint answers a status other than
			// SERVING with UNAVAILABLE, mapped like any other gRPC code.
			return []any{a.httpStatus(t, http.MethodGet, "/healthz", nil), runtime.HTTPStatusFromCode(codes.Unavailable)}
		}},
		{"answers HTTP # with (indented here)", func(t *testing.T, a *readmeAnswers) []any {
			ans := a.answer(t, "# fails with HTTP 400")
			want := a.r.blockAfter(t, "answers HTTP 400 with (indented here)")
			var got, quoted any
			if err := json.Unmarshal(ans.stdout, &got); err != nil {
				t.Fatalf("the failing curl printed %s: %v", ans.stdout, err)
			}
			if err := json.Unmarshal([]byte(strings.Join(want.lines, "\n")), &quoted); err != nil {
				t.Fatalf("%s: the quoted answer is not JSON: %v", a.r.doc.Where(want.line), err)
			}
			if diff := cmp.Diff(quoted, got); diff != "" {
				t.Errorf("%s quotes an answer the server does not give (-quoted +answered):\n%s", a.r.doc.Where(want.line), diff)
			}
			return []any{runtime.HTTPStatusFromCode(codes.Code(got.(map[string]any)["code"].(float64)))}
		}},
		{"value it cannot read is HTTP # naming the field and the values it takes", func(t *testing.T, a *readmeAnswers) []any {
			return []any{a.httpStatus(t, http.MethodPost, rpcPath("Compile"), []byte(`{"state": {"context": {"messages": [{"id": "u1", "role": "usr"}]}}}`))}
		}},
		{"| `INVALID_ARGUMENT` (bad state, unknown profile or model, malformed JSON, unknown field), `FAILED_PRECONDITION` (`PROVIDER_MISMATCH`) | # |", func(t *testing.T, a *readmeAnswers) []any {
			return []any{sameStatus(t, codes.InvalidArgument, codes.FailedPrecondition)}
		}},
		{"| `UNAUTHENTICATED` (no or a wrong bearer token) | # |", func(t *testing.T, a *readmeAnswers) []any {
			return []any{runtime.HTTPStatusFromCode(codes.Unauthenticated)}
		}},
		{"| `RESOURCE_EXHAUSTED` (`CONTEXT_IRREDUCIBLE`, `LIMIT_EXCEEDED`; `OVERLOADED` with a `Retry-After` header) | # |", func(t *testing.T, a *readmeAnswers) []any {
			return []any{runtime.HTTPStatusFromCode(codes.ResourceExhausted)}
		}},
		{"| a POST whose `Content-Type` is not `application/json` / a `Host` outside `http_allowed_hosts` | # / # |", func(t *testing.T, a *readmeAnswers) []any {
			req, err := http.NewRequest(http.MethodPost, "http://"+a.httpAddr+rpcPath("ListProfiles"), strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "text/plain")
			textPlain, _ := do(t, req)
			// The README's server allows any Host; integration's
			// TestHTTPBrowserRulesAndClientAddress answers a foreign one.
			return []any{textPlain, http.StatusForbidden}
		}},
		{"| a body larger than `max_message_bytes` (`RESOURCE_EXHAUSTED`, `LIMIT_EXCEEDED`, refused before it is decoded) | # |", func(t *testing.T, a *readmeAnswers) []any {
			return []any{a.oversizedStatus(t)}
		}},
		{"| `DEADLINE_EXCEEDED` / `CANCELED` / `UNAVAILABLE` / `INTERNAL` | # / # / # / # |", func(t *testing.T, a *readmeAnswers) []any {
			var out []any
			for _, c := range []codes.Code{codes.DeadlineExceeded, codes.Canceled, codes.Unavailable, codes.Internal} {
				out = append(out, runtime.HTTPStatusFromCode(c))
			}
			return out
		}},
		{"| an unknown path / another method than POST | # / # |", func(t *testing.T, a *readmeAnswers) []any {
			return []any{a.httpStatus(t, http.MethodPost, "/ctxc.v1.ContextCompilerService/NoSuchMethod", []byte("{}")),
				a.httpStatus(t, http.MethodGet, "/ctxc.v1.ContextCompilerService/Compile", nil)}
		}},
		{"larger requests get `RESOURCE_EXHAUSTED` (HTTP #)", func(t *testing.T, a *readmeAnswers) []any {
			return []any{a.oversizedStatus(t)}
		}},
		{"| | | `summary_cache` | in memory, # entries, #h |", func(t *testing.T, a *readmeAnswers) []any {
			def := summarycache.DefaultConfig()
			if def.TTL%time.Hour != 0 {
				t.Errorf("the default ttl %v is not whole hours", def.TTL)
			}
			return []any{def.MaxEntries, int(def.TTL / time.Hour)}
		}},
		{"| | | `state_refs` | in memory, # MiB, #h |", func(t *testing.T, a *readmeAnswers) []any {
			def := stateref.DefaultConfig()
			return []any{int(def.MaxBytes >> 20), int(def.TTL / time.Hour)}
		}},
		{"`state_refs.ttl`, default # h after it was last given or used", func(t *testing.T, a *readmeAnswers) []any {
			return []any{int(stateref.DefaultConfig().TTL / time.Hour)}
		}},
		{"returning a whole state of up to # KiB", func(t *testing.T, a *readmeAnswers) []any {
			return []any{stateref.SyncWholeBytes >> 10}
		}},
		{"`state_refs.max_bytes` of states in memory, default # MiB, counted as their size on the wire plus # bytes a message", func(t *testing.T, a *readmeAnswers) []any {
			return []any{int(stateref.DefaultConfig().MaxBytes >> 20), stateref.MessageOverheadBytes}
		}},
		{"at about # bytes a message and # a part", func(t *testing.T, a *readmeAnswers) []any {
			about := func(n int64) int { return int((n + 5) / 10 * 10) }
			return []any{about(adapter.DecodedBytesPerMessage), about(adapter.DecodedBytesPerPart)}
		}},
		{"budgets the chat in a #-token window with # tokens reserved for output, counted by `cl100k_base*1.10`.", func(t *testing.T, a *readmeAnswers) []any {
			b := a.budget(t, `name: "acme-coder"`).GetBudget()
			if b.GetCounter() != "cl100k_base*1.10" {
				t.Errorf("counter %q", b.GetCounter())
			}
			return []any{int(b.GetContextWindowTokenCount()), int(b.GetReservedOutputTokenCount())}
		}},
		{"through the proxy in a scratch Go module: @ prompts of one session with real tools (Bash running `go build`, `go vet` and `go test`; Read; Edit; " +
			"Write) in a #-token window. It finishes every task (the module's tests pass after it), all # requests the upstream received",
			func(t *testing.T, a *readmeAnswers) []any {
				return []any{len(claudeSession("")), claudeWindow, lines(t, claudeRequests)}
			}},
		{"A #-turn coding session sent as an agent sends it, twice a turn (# calls), in every provider's format, in a #-token window: " +
			"the first # to # calls went upstream as the client's bytes, the other # to # rewritten, each exactly what `Compile` renders into the same body, " +
			"so with the facts it keeps (the last call kept # to # of the # facts the session had sent); over the session the conversation forwarded " +
			"repeated the one before it for # to # of what an append-only forwarder would",
			func(t *testing.T, a *readmeAnswers) []any {
				var f sessionFigures
				readJSON(t, filepath.Join(repoRoot, "integration", sessionFiguresFile), &f)
				var unchanged, rewritten, kept, sent []int
				var ratios []string
				for _, ff := range f.Formats {
					unchanged, rewritten = append(unchanged, ff.Unchanged), append(rewritten, ff.Rewritten)
					kept, sent, ratios = append(kept, ff.FactsKept), append(sent, ff.FactsSent), append(ratios, ff.PrefixBound)
				}
				if slices.Min(sent) != slices.Max(sent) {
					t.Errorf("the formats' clients sent %v facts; the README quotes one figure", sent)
				}
				return []any{f.Turns, f.Calls, f.Window, slices.Min(unchanged), slices.Max(unchanged), slices.Min(rewritten), slices.Max(rewritten),
					slices.Min(kept), slices.Max(kept), sent[0], slices.Min(ratios), slices.Max(ratios)}
			}},
		{"a #-message conversation (OpenAI Chat Completions), made side by side straight to the scripted upstream and through the proxy " +
			"(the real binary, both on loopback), took # ms at the median straight and # ms through the proxy when the context stayed below the trigger: " +
			"# ms more (target # ms: met), where ctxc's part is reading the body (a one-pass import of the whole conversation), compiling it " +
			"and the extra hop; compacted in an #-token window it took # ms, # ms more (target # ms: met). A streamed answer's first byte came # ms " +
			"later through the proxy, less than the # ms a `Compile` of the same body takes over gRPC.",
			func(t *testing.T, a *readmeAnswers) []any {
				var f struct {
					Messages, Window int
					Figures          map[string]benchFigures
				}
				readJSON(t, filepath.Join(repoRoot, "integration", benchFiguresFile), &f)
				u, c, fb := f.Figures["unchanged"], f.Figures["compacted"], f.Figures["first_byte"]
				// The targets, and what the text says of them.
				const unchangedTarget, compactedTarget = 2, 5
				if !(number(t, u.Added) <= unchangedTarget && number(t, c.Added) <= compactedTarget && number(t, fb.Added) < number(t, fb.Compile)) {
					t.Errorf("the README says %s ms is within %d, %s ms within %d, and %s ms less than the compile's %s ms", u.Added, unchangedTarget, c.Added, compactedTarget, fb.Added, fb.Compile)
				}
				return []any{f.Messages, u.Direct, u.Proxy, u.Added, unchangedTarget, f.Window, c.Proxy, c.Added, compactedTarget, fb.Added, fb.Compile}
			}},
		{"Request limits: # messages per state, # parts per message, # tools;", func(t *testing.T, a *readmeAnswers) []any {
			l := compiler.DefaultLimits()
			return []any{l.MaxMessages, l.MaxPartsPerMessage, l.MaxTools}
		}},
		{"A phase silent for # s gets a line saying it is still running, with its time and CPU so far, so a cold run never goes # s without a line",
			func(t *testing.T, a *readmeAnswers) []any {
				return []any{scriptNumber(t, "scripts/phase.sh", `every=\$\{PHASE_PROGRESS_SECONDS:-([0-9]+)\}`),
					scriptNumber(t, "scripts/test-fresh.sh", `silence-watch\.sh ([0-9]+) make test`)}
			}},
	}
}

// scriptNumber is the number a script sets, the first group of pattern.
func scriptNumber(t *testing.T, path, pattern string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(pattern).FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s: no match for %s", path, pattern)
		return ""
	}
	return string(m[1])
}

// checkReadmeQuotes checks every passage of readmeQuotes against the answers,
// then that no number of the README's text is left outside them.
func checkReadmeQuotes(t *testing.T, r *readme, answers map[string]*readmeAnswer, httpAddr, scratch string) {
	a := &readmeAnswers{r: r, answers: answers, httpAddr: httpAddr, scratch: scratch}
	var covered [][2]int
	for _, q := range readmeQuotes() {
		re := passageRegexp(q.passage)
		found := re.FindAllStringSubmatchIndex(r.prose, -1)
		if len(found) != 1 {
			t.Errorf("the documentation has %d passages matching %q, want one: reword this check with the text", len(found), q.passage)
			continue
		}
		m := found[0]
		covered = append(covered, [2]int{m[0], m[1]})
		want := q.numbers(t, a)
		var quoted []string
		for g := 1; 2*g < len(m); g++ {
			quoted = append(quoted, r.prose[m[2*g]:m[2*g+1]])
		}
		if len(want) != len(quoted) {
			t.Errorf("passage %q quotes %d numbers; its check gives %d", q.passage, len(quoted), len(want))
			continue
		}
		line := r.proseLines[strings.Count(r.prose[:m[0]], "\n")]
		for i := range quoted {
			if got, answered := numberValue(quoted[i]), fmt.Sprint(want[i]); got != answered {
				t.Errorf("%s quotes %s where the answer is %s, in %q", r.doc.Where(line), quoted[i], answered, q.passage)
			}
		}
	}

	// Every number of the text must be inside a checked passage.
	masked := maskInlineCode(r.prose)
	for _, loc := range proseNumber.FindAllStringIndex(masked, -1) {
		start := loc[0]
		if start > 0 && strings.ContainsRune(identifierChars, rune(masked[start-1])) {
			continue // part of a name: gpt-4o, o200k_base, 2.5-pro
		}
		lineStart := strings.LastIndexByte(masked[:start], '\n') + 1
		if strings.TrimSpace(masked[lineStart:start]) == "" && strings.HasPrefix(masked[loc[1]:], ". ") {
			continue // a numbered list's marker
		}
		inside := false
		for _, c := range covered {
			inside = inside || c[0] <= start && start < c[1]
		}
		if !inside {
			line := r.proseLines[strings.Count(r.prose[:start], "\n")]
			t.Errorf("%s quotes %q, which no check covers: add its passage to readmeQuotes", r.doc.Where(line), masked[loc[0]:loc[1]])
		}
	}

	checkQuotedOutputs(t, a)
	checkPrerequisites(t, r)
	checkBinarySize(t, r)
}

// lines is the number of lines of a file under the repository.
func lines(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(data, []byte("\n"))
}

// number reads a recorded figure.
func number(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("figure %q: %v", s, err)
	}
	return v
}

// identifierChars may precede a digit inside a name (gpt-4o, v1, o200k_base).
const identifierChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:"

// proseNumber is a number of the README's text: digits, with thousands
// separators or a decimal point.
var proseNumber = regexp.MustCompile(`[0-9][0-9,.]*[0-9]|[0-9]`)

var numberWords = map[string]int{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
	"nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
	"seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20}

// passageRegexp turns a passage into a regular expression: # and @ capture a
// number, white space matches any white space.
func passageRegexp(passage string) *regexp.Regexp {
	var b strings.Builder
	for _, field := range strings.Fields(passage) {
		if b.Len() > 0 {
			b.WriteString(`\s+`)
		}
		for _, c := range field {
			switch c {
			case '#':
				b.WriteString(`([0-9][0-9,.]*[0-9]|[0-9])`)
			case '@':
				b.WriteString(`([a-z]+)`)
			default:
				b.WriteString(regexp.QuoteMeta(string(c)))
			}
		}
	}
	return regexp.MustCompile(b.String())
}

// numberValue is a quoted number as fmt.Sprint prints the true one: without
// thousands separators, words as digits.
func numberValue(quoted string) string {
	if n, ok := numberWords[quoted]; ok {
		return strconv.Itoa(n)
	}
	return strings.ReplaceAll(quoted, ",", "")
}

// maskInlineCode blanks `code` spans: names and values, not quoted numbers.
func maskInlineCode(text string) string {
	out := []byte(text)
	in := false
	for i, c := range out {
		if c == '`' {
			in = !in
		}
		if in || c == '`' {
			out[i] = ' '
		}
	}
	return string(out)
}

// checkQuotedOutputs compares the outputs the README quotes whole with the
// real ones: the summary Compact writes, the masked observation's first line,
// and the model_registry entry of examples/profiles.yaml.
func checkQuotedOutputs(t *testing.T, a *readmeAnswers) {
	quoted := a.r.blockAfter(t, "The summary, written without a model")
	got := strings.TrimRight(summary(t, a).GetParts()[0].GetText(), "\n")
	if diff := cmp.Diff(strings.Join(quoted.lines, "\n"), got); diff != "" {
		t.Errorf("%s quotes a summary Compact does not write (-quoted +written):\n%s", a.r.doc.Where(quoted.line), diff)
	}

	mask := regexp.MustCompile("a masked observation reads `([^`]*)`").FindStringSubmatch(strings.ReplaceAll(a.r.prose, "\n", " "))
	if first, _, _ := strings.Cut(maskOf(t, a, "t3").GetPlaceholder(), "\n"); len(mask) < 2 || mask[1] != first {
		t.Errorf("the README quotes the masked observation as %q; Compact writes %q", mask, first)
	}

	block := a.r.blockAfter(t, "`examples/profiles.yaml` holds this entry")
	var readmeEntry, exampleEntry struct {
		ModelRegistry []map[string]any `yaml:"model_registry"`
	}
	if err := yaml.Unmarshal([]byte(strings.Join(block.lines, "\n")), &readmeEntry); err != nil {
		t.Fatalf("%s: %v", a.r.doc.Where(block.line), err)
	}
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples", "profiles.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &exampleEntry); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(exampleEntry, readmeEntry); diff != "" || len(readmeEntry.ModelRegistry) == 0 {
		t.Errorf("%s: the model_registry entry differs from examples/profiles.yaml's (-example +README):\n%s", a.r.doc.Where(block.line), diff)
	}
}

// checkPrerequisites: the README names the Debian packages scripts/deps.sh
// installs, all of them.
func checkPrerequisites(t *testing.T, r *readme) {
	out, err := exec.Command(filepath.Join(repoRoot, "scripts", "deps.sh"), "--list").Output()
	if err != nil {
		t.Fatalf("scripts/deps.sh --list: %v", err)
	}
	want := strings.Join(strings.Fields(string(out)), ", ")
	m := regexp.MustCompile(`with these packages: ([a-z0-9, .\n-]+)\.`).FindStringSubmatch(r.prose)
	if m == nil {
		t.Fatal("README.md does not say `with these packages: ...`")
	}
	if got := strings.Join(strings.Fields(strings.ReplaceAll(m[1], ",", " ")), ", "); got != want {
		t.Errorf("README.md names the packages %s; scripts/deps.sh installs %s", got, want)
	}
}

// checkBinarySize compares the README's binary size with what
// scripts/measure.sh reports for the binary `make build` makes, within 5%
// (the size moves a little with the Go version and the version string; a new
// dependency moves it more). Start-up time is a wall-clock figure: the README
// quotes it, no test asserts it.
func checkBinarySize(t *testing.T, r *readme) {
	out, err := exec.Command(filepath.Join(repoRoot, "scripts", "measure.sh"), "--runs", "0", ctxcBinary).CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/measure.sh: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`size: ([0-9]+) bytes`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("scripts/measure.sh printed no size:\n%s", out)
	}
	measured, _ := strconv.ParseFloat(string(m[1]), 64)
	row := regexp.MustCompile("\\| Binary size, `make build`[^|]*\\| ([0-9.]+) MB").FindStringSubmatch(r.performance)
	if row == nil {
		t.Fatal("the README's Performance table has no row `| Binary size, `make build` ... | N MB`")
	}
	quoted, _ := strconv.ParseFloat(row[1], 64)
	if math.Abs(quoted*1e6-measured)/measured > 0.05 {
		t.Errorf("the README quotes a %s MB binary; scripts/measure.sh measures %.1f MB", row[1], measured/1e6)
	}
}

// readmeAnswers are the answers of the README's commands.
type readmeAnswers struct {
	r        *readme
	answers  map[string]*readmeAnswer
	httpAddr string
	// scratch holds the files the commands write (/tmp/ctxc-session-* in the README).
	scratch string
}

// command is the one README command that contains substr.
func (a *readmeAnswers) command(t *testing.T, substr string) string {
	return a.answer(t, substr).command
}

func (a *readmeAnswers) answer(t *testing.T, substr string) *readmeAnswer {
	t.Helper()
	var found []*readmeAnswer
	for cmd, ans := range a.answers {
		if strings.Contains(cmd, substr) {
			found = append(found, ans)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d README commands contain %q, want one", len(found), substr)
	}
	return found[0]
}

// decode decodes the JSON a command printed into v.
func (a *readmeAnswers) decode(t *testing.T, substr string, v any) {
	t.Helper()
	if err := json.Unmarshal(a.answer(t, substr).stdout, v); err != nil {
		t.Fatalf("the answer of the README command containing %q: %v", substr, err)
	}
}

// message decodes the protojson a command printed.
func (a *readmeAnswers) message(t *testing.T, substr string, m proto.Message) {
	t.Helper()
	if err := protojson.Unmarshal(a.answer(t, substr).stdout, m); err != nil {
		t.Fatalf("the answer of the README command containing %q: %v", substr, err)
	}
}

func (a *readmeAnswers) budget(t *testing.T, substr string) *ctxcv1.BudgetResponse {
	t.Helper()
	b := &ctxcv1.BudgetResponse{}
	a.message(t, substr, b)
	return b
}

type omitAnswer struct {
	Omitted  int
	Returned []string
}

func (a *readmeAnswers) omitted(t *testing.T, substr string) omitAnswer {
	t.Helper()
	var o omitAnswer
	a.decode(t, substr, &o)
	return o
}

// compacted is the whole CompactResponse the README's Compact command saves
// with tee (it prints only a jq summary of it).
func (a *readmeAnswers) compacted(t *testing.T) *ctxcv1.CompactResponse {
	t.Helper()
	a.answer(t, "ContextCompilerService/Compact") // it ran
	data, err := os.ReadFile(filepath.Join(a.scratch, "ctxc-session-compacted.json"))
	if err != nil {
		t.Fatalf("the README's Compact command saved no state: %v", err)
	}
	resp := &ctxcv1.CompactResponse{}
	if err := protojson.Unmarshal(data, resp); err != nil {
		t.Fatalf("the state the README's Compact command saved: %v", err)
	}
	return resp
}

// httpStatus is the status the README's server answers a request with.
func (a *readmeAnswers) httpStatus(t *testing.T, method, path string, body []byte) int {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+a.httpAddr+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	code, _ := do(t, req)
	return code
}

// oversizedStatus is the status of a body one byte over the README server's
// max_message_bytes, streamed without a length so the server must count it.
func (a *readmeAnswers) oversizedStatus(t *testing.T) int {
	t.Helper()
	body := io.MultiReader(strings.NewReader(`{"state": {"context": {"systemPrompt": "`), io.LimitReader(zeros{}, compiler.DefaultMaxMessageBytes))
	req, err := http.NewRequest(http.MethodPost, "http://"+a.httpAddr+rpcPath("Compile"), body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	code, _ := do(t, req)
	return code
}

// zeros reads as an endless run of '0'.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}

// summary is the summary message Compact appended.
func summary(t *testing.T, a *readmeAnswers) *ctxcv1.Message {
	t.Helper()
	for _, m := range a.compacted(t).GetState().GetContext().GetMessages() {
		if m.GetKind() == ctxcv1.MessageKind_MESSAGE_KIND_SUMMARY {
			return m
		}
	}
	t.Fatal("Compact appended no summary")
	return nil
}

func maskOf(t *testing.T, a *readmeAnswers, id string) *ctxcv1.Mask {
	t.Helper()
	for _, m := range a.compacted(t).GetState().GetContext().GetMessages() {
		if m.GetId() == id && m.GetMask() != nil {
			return m.GetMask()
		}
	}
	t.Fatalf("Compact masked no message %s", id)
	return nil
}

// messageTokens is a message's count in a Budget answer.
func messageTokens(t *testing.T, b *ctxcv1.BudgetResponse, id string) int {
	t.Helper()
	for _, m := range b.GetMessages() {
		if m.GetMessageId() == id {
			return int(m.GetTokenCount())
		}
	}
	t.Fatalf("the Budget answer counts no message %s", id)
	return 0
}

// exchangeUsage is the input plus output tokens an example's message reports.
func exchangeUsage(t *testing.T, example, id string) int {
	t.Helper()
	for _, m := range readExample(t, example).GetState().GetContext().GetMessages() {
		if m.GetId() == id {
			return int(m.GetUsage().GetInputTokenCount() + m.GetUsage().GetOutputTokenCount())
		}
	}
	t.Fatalf("examples/%s has no message %s", example, id)
	return 0
}

// toolOutput is the content of an example's tool result message.
func toolOutput(t *testing.T, example, id string) string {
	t.Helper()
	for _, m := range readExample(t, example).GetState().GetContext().GetMessages() {
		if m.GetId() == id {
			return m.GetParts()[0].GetToolResult().GetContent()
		}
	}
	t.Fatalf("examples/%s has no message %s", example, id)
	return ""
}

// commandNumber is the number a README command sets a JSON key to.
func commandNumber(t *testing.T, command, key string) int {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(key) + `:\s*([0-9]+)`).FindStringSubmatch(command)
	if m == nil {
		t.Fatalf("the README command %q sets no %s", command, key)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// thousands rounds a count to thousands, as "30K" quotes it.
func thousands(n int) int { return int(math.Round(float64(n) / 1000)) }

// sameStatus is the HTTP status of codes that must share one.
func sameStatus(t *testing.T, cs ...codes.Code) int {
	t.Helper()
	status := runtime.HTTPStatusFromCode(cs[0])
	for _, c := range cs[1:] {
		if s := runtime.HTTPStatusFromCode(c); s != status {
			t.Errorf("%v maps to HTTP %d, %v to %d; the README gives them one row", cs[0], status, c, s)
		}
	}
	return status
}

// goVersion is the go directive of go.mod.
func goVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go ([0-9.]+)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	return string(m[1])
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
