//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/testing/protocmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

var update = flag.Bool("update", false, "rewrite generated example files and the README's inspector screenshot (docs/inspector.png)")

// codingAgentRequest builds examples/coding-agent.json: a coding agent two
// executions in, with parallel tool calls, a failed call, and one ~30K-token
// tool output. Everything is derived from fixed seeds, so it never changes
// unless this code does.
func codingAgentRequest() *ctxcv1.CompileRequest {
	text := func(s string) *ctxcv1.Part { return &ctxcv1.Part{Content: &ctxcv1.Part_Text{Text: s}} }
	call := func(id, name, args string) *ctxcv1.Part {
		return &ctxcv1.Part{Content: &ctxcv1.Part_ToolCall{ToolCall: &ctxcv1.ToolCall{Id: id, Name: name, ArgumentsJson: args}}}
	}
	result := func(id, name, content string, failed bool) *ctxcv1.Part {
		return &ctxcv1.Part{Content: &ctxcv1.Part_ToolResult{ToolResult: &ctxcv1.ToolResult{ToolCallId: id, Name: name, Content: content, IsError: failed}}}
	}
	msg := func(id string, role ctxcv1.Role, exec string, parts ...*ctxcv1.Part) *ctxcv1.Message {
		return &ctxcv1.Message{Id: id, Role: role, ExecutionId: exec, Parts: parts}
	}
	const user, assistant, tool = ctxcv1.Role_ROLE_USER, ctxcv1.Role_ROLE_ASSISTANT, ctxcv1.Role_ROLE_TOOL
	withUsage := func(m *ctxcv1.Message, in, out uint32) *ctxcv1.Message {
		m.Usage = &ctxcv1.Usage{InputTokenCount: in, OutputTokenCount: out}
		return m
	}
	return &ctxcv1.CompileRequest{
		Profile: "pragmatic",
		State: &ctxcv1.AgentState{
			SchemaVersion: 1,
			AgentId:       "coder-7",
			Model:         &ctxcv1.ModelSpec{Name: "gpt-4o", Provider: "openai"},
			Execution:     &ctxcv1.Execution{Id: "exec-2", StepIndex: 1, Status: ctxcv1.ExecutionStatus_EXECUTION_STATUS_RUNNING},
			Context: &ctxcv1.AgentContext{
				SystemPrompt: "You are a senior Go engineer working in the repository at /src/inventory. " +
					"Use the tools to inspect code and run tests. Make the smallest change that fixes the problem, " +
					"and explain what you changed.",
				Tools: []*ctxcv1.ToolDefinition{
					{Name: "read_file", Description: "Read a file of the repository.", ParametersJson: `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`},
					{Name: "run_tests", Description: "Run go test on a package pattern and return the output.", ParametersJson: `{"type":"object","properties":{"packages":{"type":"string"}},"required":["packages"]}`},
					{Name: "grep", Description: "Search the repository and the CI logs for a regular expression.", ParametersJson: `{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"}},"required":["pattern"]}`},
					{Name: "write_file", Description: "Replace a file's content.", ParametersJson: `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`},
				},
				Metadata: map[string]string{"repository": "inventory", "ci_run": "8812"},
				Messages: []*ctxcv1.Message{
					msg("u1", user, "exec-1", text("CI run 8812 failed on TestReserveStock. Find out why and fix it.")),
					withUsage(msg("a1", assistant, "exec-1",
						text("I'll read the test and run the package's tests at the same time."),
						call("call_read_1", "read_file", `{"path":"internal/stock/reserve_test.go"}`),
						call("call_test_1", "run_tests", `{"packages":"./internal/stock/..."}`),
					), 252, 49),
					msg("t1", tool, "exec-1", result("call_read_1", "read_file", reserveTestSource, false)),
					msg("t2", tool, "exec-1", result("call_test_1", "run_tests", failedTestOutput, true)),
					withUsage(msg("a2", assistant, "exec-1",
						text("The test times out waiting for the reservation lock. Let me search the CI log for lock contention."),
						call("call_grep_1", "grep", `{"pattern":"stock\\.lock|reserve","path":"ci/8812/service.log"}`),
					), 612, 46),
					msg("t3", tool, "exec-1", result("call_grep_1", "grep", bigServiceLog(), false)),
					withUsage(msg("a3", assistant, "exec-1",
						text("Every slow reservation waits on the warehouse-wide lock. Reserve should lock only the SKU's row. I'll fix that."),
						call("call_write_1", "write_file", `{"path":"internal/stock/reserve.go","content":"package stock\n\n// Reserve locks only the SKU's row.\n"}`),
					), 30941, 59),
					msg("t4", tool, "exec-1", result("call_write_1", "write_file", "wrote 1 file (internal/stock/reserve.go, 2.1 KB)", false)),
					withUsage(msg("a4", assistant, "exec-1",
						call("call_test_2", "run_tests", `{"packages":"./internal/stock/..."}`),
					), 31026, 18),
					msg("t5", tool, "exec-1", result("call_test_2", "run_tests", "ok  \tinventory/internal/stock\t0.412s", false)),
					withUsage(msg("a5", assistant, "exec-1",
						text("Fixed: Reserve took the warehouse-wide lock, so concurrent reservations serialized and TestReserveStock timed out under -race. It now locks only the SKU's row; the package's tests pass."),
					), 31063, 42),
					msg("u2", user, "exec-2", text("Thanks. Add a test for reserving a SKU that is out of stock.")),
					withUsage(msg("a6", assistant, "exec-2",
						call("call_read_2", "read_file", `{"path":"internal/stock/reserve.go"}`),
					), 31125, 19),
					msg("t6", tool, "exec-2", result("call_read_2", "read_file", reserveSource, false)),
				},
			},
		},
	}
}

const reserveTestSource = `package stock

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestReserveStock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s := newTestStore(t, map[string]int{"sku-1": 100, "sku-2": 100})
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sku := []string{"sku-1", "sku-2"}[i%2]
			if err := s.Reserve(ctx, sku, 1); err != nil {
				t.Errorf("reserve %s: %v", sku, err)
			}
		}(i)
	}
	wg.Wait()
	if got := s.Available("sku-1"); got != 0 {
		t.Errorf("sku-1 available = %d, want 0", got)
	}
}
`

const reserveSource = `package stock

import (
	"context"
	"fmt"
)

// Reserve takes n units of sku out of the available stock.
func (s *Store) Reserve(ctx context.Context, sku string, n int) error {
	row := s.rows.lock(sku)
	defer row.unlock()
	if row.available < n {
		return fmt.Errorf("reserve %s: %d available, %d asked: %w", sku, row.available, n, ErrOutOfStock)
	}
	row.available -= n
	return s.journal.append(ctx, entry{sku: sku, delta: -n})
}
`

const failedTestOutput = `--- FAIL: TestReserveStock (2.00s)
    reserve_test.go:22: reserve sku-2: context deadline exceeded
    reserve_test.go:22: reserve sku-1: context deadline exceeded
    reserve_test.go:27: sku-1 available = 61, want 0
FAIL
FAIL	inventory/internal/stock	2.417s
FAIL
exit status 1`

// bigServiceLog is a deterministic service log of about 30K tokens, the kind
// of tool output that dominates a coding agent's context.
func bigServiceLog() string {
	var b strings.Builder
	seed := uint32(8812)
	next := func(n int) int {
		seed = seed*1664525 + 1013904223 // a fixed LCG: same output on every platform
		return int(seed>>8) % n
	}
	skus := []string{"sku-1", "sku-2", "sku-17", "sku-204", "sku-9001"}
	events := []string{
		"reserve start sku=%s qty=%d request_id=%08x",
		"stock.lock acquire scope=warehouse wait_ms=%d holder=worker-%d",
		"stock.lock release scope=warehouse held_ms=%d",
		"reserve done sku=%s qty=%d available=%d latency_ms=%d",
		"journal append sku=%s delta=-%d offset=%d",
		"reserve timeout sku=%s after_ms=%d err=\"context deadline exceeded\"",
	}
	for i := 0; i < 640; i++ {
		sec, ms := 40+i/50, next(1000)
		prefix := fmt.Sprintf("2025-04-29T14:%02d:%02d.%03dZ ", sec/60%60, sec%60, ms)
		worker := next(16)
		var line string
		switch k := next(len(events)); k {
		case 0:
			line = fmt.Sprintf(events[k], skus[next(len(skus))], 1+next(3), next(1<<30))
		case 1:
			line = fmt.Sprintf(events[k], next(1900), next(16))
		case 2:
			line = fmt.Sprintf(events[k], next(400))
		case 3:
			line = fmt.Sprintf(events[k], skus[next(len(skus))], 1+next(3), next(100), next(2000))
		case 4:
			line = fmt.Sprintf(events[k], skus[next(len(skus))], 1+next(3), 100000+i*3)
		default:
			line = fmt.Sprintf(events[k], skus[next(len(skus))], 2000)
		}
		level := "INFO "
		if strings.Contains(line, "timeout") {
			level = "WARN "
		}
		fmt.Fprintf(&b, "ci/8812/service.log:%d:%s%s[worker-%02d] %s\n", 1000+i, prefix, level, worker, line)
	}
	return b.String()
}

// formatJSON is protojson with stable white space (protojson randomizes it on purpose).
func formatJSON(t *testing.T, m *ctxcv1.CompileRequest) []byte {
	t.Helper()
	raw, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

func TestGeneratedExamplesAreUpToDate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(repoRoot, "examples", "coding-agent.json")
	want := codingAgentRequest()
	if *update {
		if err := os.WriteFile(path, formatJSON(t, want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := readExample(t, "coding-agent.json")
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("examples/coding-agent.json is stale; run go test -tags integration ./integration -run TestGeneratedExamples -update (-want +got):\n%s", diff)
	}
}

func readExample(t testing.TB, name string) *ctxcv1.CompileRequest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	req := &ctxcv1.CompileRequest{}
	if err := protojson.Unmarshal(data, req); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return req
}
