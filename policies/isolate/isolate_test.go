package isolate

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
	"github.com/contextcompiler/ctxc/policies/normalize"
	"github.com/contextcompiler/ctxc/policies/project"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestGolden(t *testing.T) {
	maskCfg := &MaskingConfig{PreviewChars: 20, ProtectRecentTokens: 420, MinPrunableTokens: 100, ExemptTools: []string{"list_dir"}}
	for _, tt := range []struct {
		file, golden string
		apply        func(w *policies.Work)
	}{
		{"boundary", "boundary", func(w *policies.Work) { Boundary(w, &BoundaryConfig{MaxRecordCalls: 50}, nil) }},
		{"boundary", "boundary_finished", func(w *policies.Work) {
			w.State().Execution.Status = agentstate.ExecutionCompleted
			Boundary(w, &BoundaryConfig{MaxRecordCalls: 2}, nil)
		}},
		{"masking", "masking", func(w *policies.Work) { MaskObservations(w, maskCfg, MaskRun{}) }},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			st := statetest.LoadJSON(t, filepath.Join("testdata", tt.file+".json"))
			w := statetest.Work(st)
			tt.apply(w)
			statetest.Golden(t, filepath.Join("testdata", tt.golden+".golden"), statetest.Format(w), *update)
			if p := append(statetest.Check(w), statetest.CheckPreserved(st, w)...); len(p) > 0 {
				t.Errorf("broken view:\n%s", strings.Join(p, "\n"))
			}
		})
	}
}

func toolMsg(id, exec, name, content string) agentstate.Message {
	return agentstate.Message{ID: id, Role: agentstate.RoleTool, ExecutionID: exec, Parts: []agentstate.Part{{Kind: agentstate.PartToolResult,
		ToolResult: agentstate.ToolResult{ToolCallID: "c" + id, Name: name, Content: content}}}}
}

func callMsg(id, exec, name string) agentstate.Message {
	return agentstate.Message{ID: id, Role: agentstate.RoleAssistant, ExecutionID: exec, Parts: []agentstate.Part{{Kind: agentstate.PartToolCall,
		ToolCall: agentstate.ToolCall{ID: "c" + id, Name: name}}}}
}

// outputs builds a log of n tool units of size bytes each, in execution e1 (finished).
func outputs(n, size int) *agentstate.State {
	st := &agentstate.State{Execution: agentstate.Execution{ID: "e9", Status: agentstate.ExecutionRunning}}
	st.Context.Messages = append(st.Context.Messages, agentstate.Message{ID: "u", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart("task")}})
	for i := 0; i < n; i++ {
		id := string(rune('a' + i))
		st.Context.Messages = append(st.Context.Messages, callMsg("a"+id, "e1", "read"), toolMsg("r"+id, "e1", "read", strings.Repeat("x", size)))
	}
	return st
}

func maskedIDs(w *policies.Work) []string {
	var out []string
	for _, e := range w.Entries {
		if _, ok := w.Masks[e.SourceID]; ok {
			out = append(out, e.SourceID)
		}
	}
	return out
}

func TestMaskObservationsRules(t *testing.T) {
	// Each output is 400 bytes = 100 tokens with FakeCounter.
	tests := []struct {
		name   string
		cfg    MaskingConfig
		target int
		want   []string
	}{
		{"protect window covers the newest two", MaskingConfig{ProtectRecentTokens: 200}, 0, []string{"ra", "rb"}},
		{"window ends at the first output over it", MaskingConfig{ProtectRecentTokens: 150}, 0, []string{"ra", "rb", "rc"}},
		{"minimum saving not reached", MaskingConfig{ProtectRecentTokens: 200, MinPrunableTokens: 1000}, 0, nil},
		{"exempt tool", MaskingConfig{ExemptTools: []string{"read"}}, 0, nil},
		{"no window masks every output", MaskingConfig{}, 0, []string{"ra", "rb", "rc", "rd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := statetest.Work(outputs(4, 400))
			got := MaskObservations(w, &tt.cfg, MaskRun{TargetTokens: tt.target})
			if got != len(tt.want) {
				t.Errorf("masked %d, want %d", got, len(tt.want))
			}
			if diff := cmp.Diff(tt.want, maskedIDs(w)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMaskObservationsTarget(t *testing.T) {
	w := statetest.Work(outputs(4, 400))
	before := w.UsedTokens()
	// Masking one output saves a bit under 100 tokens; ask for 150 fewer: two.
	n := MaskObservations(w, &MaskingConfig{}, MaskRun{TargetTokens: before - 150})
	if n != 2 {
		t.Fatalf("masked %d, want 2", n)
	}
	if diff := cmp.Diff([]string{"ra", "rb"}, maskedIDs(w)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if w.UsedTokens() > before-150 {
		t.Errorf("used %d, want <= %d", w.UsedTokens(), before-150)
	}
	for i, e := range w.Entries {
		if !e.Counted {
			t.Errorf("entry %d not recounted", i)
		}
		if want, _ := (statetest.FakeCounter{}).CountMessage(&e.Message); e.Tokens != want {
			t.Errorf("entry %d: tokens %d, want %d", i, e.Tokens, want)
		}
	}
	// Masking is idempotent: nothing is masked twice.
	if n := MaskObservations(w, &MaskingConfig{}, MaskRun{}); n != 2 {
		t.Errorf("second run masked %d, want the remaining 2", n)
	}
	if n := MaskObservations(w, &MaskingConfig{}, MaskRun{}); n != 0 {
		t.Errorf("third run masked %d, want 0", n)
	}
}

func TestPlaceholderIsRuneSafe(t *testing.T) {
	content := strings.Repeat("日本語", 100) + "\xff"
	w := statetest.Work(&agentstate.State{})
	ph := placeholder(w.Counter(), "m1", &agentstate.ToolResult{ToolCallID: "c1", Name: "read", Content: content}, 7, nil)
	if !utf8.ValidString(ph) {
		t.Fatalf("invalid UTF-8: %q", ph)
	}
	for _, want := range []string{"message m1", "tool read", "call c1", "head: 日本語日本語日\n", "tail: 日本語日本語\uFFFD"} {
		if !strings.Contains(ph, want) {
			t.Errorf("placeholder lacks %q:\n%s", want, ph)
		}
	}
}

func TestArgsSummary(t *testing.T) {
	for in, want := range map[string]string{
		``:                            ``,
		`{}`:                          ``,
		`{"path":"main.go","line":3}`: `line=3, path=main.go`,
		`{"q":{"nested":1},"b":true}`: `b=true, q=…`,
		`not json`:                    `not json`,
		`{"s":"` + strings.Repeat("é", 50) + `"}`: `s=` + strings.Repeat("é", 40) + `…`,
	} {
		if got := argsSummary(in); got != want {
			t.Errorf("argsSummary(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConfigs(t *testing.T) {
	if err := (&MaskingConfig{PreviewChars: -1, ProtectRecentTokens: -1, MinPrunableTokens: -1, ExemptTools: []string{""}}).Validate(); err == nil ||
		strings.Count(err.Error(), "\n") != 3 {
		t.Errorf("want 4 joined problems, got %v", err)
	}
	if err := (&BoundaryConfig{}).Validate(); err == nil {
		t.Error("max_record_calls 0 accepted")
	}
	for _, tt := range []struct {
		f   policies.Factory
		typ string
		def policies.Config
	}{
		{NewTransparentFactory(), "transparent", &TransparentConfig{}},
		{NewBoundaryFactory(Deps{}), "boundary", &BoundaryConfig{MaxRecordCalls: 50}},
		{NewObservationMaskingFactory(Deps{}), "observation_masking", &MaskingConfig{PreviewChars: 200, ProtectRecentTokens: 8000, MinPrunableTokens: 2000}},
	} {
		if tt.f.Type() != tt.typ || tt.f.Stage() != policies.StageIsolate {
			t.Errorf("%s: type %q stage %s", tt.typ, tt.f.Type(), tt.f.Stage())
		}
		if diff := cmp.Diff(tt.def, tt.f.CreateDefaultConfig()); diff != "" {
			t.Errorf("%s defaults (-want +got):\n%s", tt.typ, diff)
		}
		p, err := tt.f.Create(tt.f.CreateDefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Apply(context.Background(), statetest.Work(outputs(2, 10))); err != nil {
			t.Error(err)
		}
		if _, err := tt.f.Create(&normalize.Config{}); err == nil {
			t.Errorf("%s accepted a foreign config", tt.typ)
		}
	}
}

func TestProperties(t *testing.T) {
	opts := statetest.DefaultOptions()
	opts.LargeOutputBytes = 3000
	small := &MaskingConfig{PreviewChars: 30, ProtectRecentTokens: 500, MinPrunableTokens: 200}
	for seed := int64(0); seed < 250; seed++ {
		r := rand.New(rand.NewSource(seed))
		opts.Turns = 1 + r.Intn(8)
		opts.Damage = []float64{0, 0.2}[seed%2]
		st := statetest.Generate(r, opts)
		for name, apply := range map[string]func(w *policies.Work){
			"boundary": func(w *policies.Work) { Boundary(w, &BoundaryConfig{MaxRecordCalls: 50}, nil) },
			"masking":  func(w *policies.Work) { MaskObservations(w, small, MaskRun{}) },
			"target":   func(w *policies.Work) { MaskObservations(w, small, MaskRun{TargetTokens: w.UsedTokens() / 2}) },
		} {
			w := statetest.Work(st)
			normalize.Normalize(w, &normalize.Config{})
			project.Project(w, agentstate.ViewReasoning)
			statetest.Recount(w.Entries, w.Counter())
			unresolved := map[string]bool{}
			for _, i := range policies.UnresolvedFailures(w.Entries) {
				unresolved[w.Entries[i].Message.ID] = true
			}
			apply(w)
			p := append(statetest.Check(w), statetest.CheckPreserved(st, w)...)
			shown := map[string]*agentstate.Message{}
			for i := range w.Entries {
				shown[w.Entries[i].Message.ID] = &w.Entries[i].Message
			}
			for id := range unresolved {
				if _, ok := shown[id]; !ok {
					p = append(p, id+": unresolved failure hidden")
				} else if _, masked := w.Masks[id]; masked {
					p = append(p, id+": unresolved failure masked")
				}
			}
			if st.Execution.Running() {
				for _, m := range st.Context.Messages {
					if m.ExecutionID == st.Execution.ID && policies.IsToolTrace(&m) {
						if _, masked := w.Masks[m.ID]; masked {
							p = append(p, m.ID+": running execution masked")
						}
					}
				}
			}
			if len(p) > 0 {
				t.Fatalf("seed %d %s:\n%s\n%s", seed, name, strings.Join(p, "\n"), statetest.Format(w))
			}
		}
	}
}

func FuzzIsolation(f *testing.F) {
	f.Add([]byte{0, 1, 4, 3, 5, 3, 7, 0, 3, 8, 9, 1})
	f.Add([]byte{10, 1, 0, 4, 0, 5, 0, 5, 0x21, 3, 10, 2, 4, 1, 6, 1, 2, 14, 0x12})
	f.Add([]byte{10, 3, 4, 2, 5, 2, 9, 5, 4, 3, 5, 3, 15, 1, 14, 0x13, 4, 7, 6, 7, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		st := statetest.FromBytes(data)
		for _, apply := range []func(w *policies.Work){
			func(w *policies.Work) { Boundary(w, &BoundaryConfig{MaxRecordCalls: 3}, nil) },
			func(w *policies.Work) { MaskObservations(w, &MaskingConfig{PreviewChars: 3}, MaskRun{}) },
			func(w *policies.Work) {
				MaskObservations(w, &MaskingConfig{PreviewChars: 3}, MaskRun{TargetTokens: 10})
			},
		} {
			w := statetest.Work(st)
			normalize.Normalize(w, &normalize.Config{})
			apply(w)
			for _, p := range statetest.Check(w) {
				if !strings.Contains(p, "duplicate id") {
					t.Fatalf("%s\n%s", p, statetest.Format(w))
				}
			}
		}
	})
}

// An output an earlier stage already shortened is described by its log
// original: the model learns how big the output really was.
func TestPlaceholderDescribesTheLogOriginal(t *testing.T) {
	st := outputs(1, 0)
	out := strings.Repeat("compiling package ok\n", 400) + "pkg/store/lock.go:88: error: deadlock detected on mutex storeMu\n"
	st.Context.Messages[2] = toolMsg("ra", "e1", "read", out)
	w := statetest.Work(st)
	e := &w.Entries[len(w.Entries)-1]
	// Entries share their parts with the log; a stage changes a copy.
	clamped := e.Message.Parts[0]
	clamped.ToolResult.Content = strings.Repeat("compiling package ok\n", 100) + "[clamped]"
	e.Message.Parts = []agentstate.Part{clamped}
	w.Touch(len(w.Entries) - 1)
	if n := MaskObservations(w, &MaskingConfig{}, MaskRun{}); n != 1 {
		t.Fatalf("masked %d outputs, want 1", n)
	}
	got := w.Entries[len(w.Entries)-1].Message.Parts[0].ToolResult.Content
	want := fmt.Sprintf("%d tokens", countText(w.Counter(), out))
	if !strings.Contains(got, want) {
		t.Errorf("placeholder lacks %q:\n%s", want, got)
	}
}

// A boundary record keeps what the trace said that matters later: a failure
// by the line that names its error, and what the assistant decided between
// its calls.
func TestBoundaryRecordKeepsErrorsAndDecisions(t *testing.T) {
	result := func(id, call, content string, isErr bool) agentstate.Message {
		m := toolMsg(id, "e1", "read", content)
		m.Parts[0].ToolResult.ToolCallID, m.Parts[0].ToolResult.IsError = call, isErr
		return m
	}
	call := callMsg("aa", "e1", "read")
	call.Parts = append([]agentstate.Part{agentstate.TextPart("Let me read the file. Root cause: the worker reads the row before taking the lock.")}, call.Parts...)
	st := &agentstate.State{Execution: agentstate.Execution{ID: "e9", Status: agentstate.ExecutionRunning}}
	st.Context.Messages = []agentstate.Message{
		{ID: "u", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart("task")}},
		call, result("ra", "caa", "running migrations\napplying 0042_add_index\nERROR: deadlock detected (SQLSTATE 40P01)\n", true),
		// A later success of the same tool resolves the failure, so its unit may go.
		callMsg("ab", "e1", "read"), result("rb", "cab", "ok", false),
	}
	w := statetest.Work(st)
	Boundary(w, &BoundaryConfig{MaxRecordCalls: 50}, nil)
	var record string
	for _, e := range w.Entries {
		if strings.HasPrefix(e.Message.ID, "ctxc-trace-") {
			record = e.Message.Text()
		}
	}
	for _, want := range []string{"ERROR: deadlock detected (SQLSTATE 40P01)", "Root cause: the worker reads the row before taking the lock."} {
		if !strings.Contains(record, want) {
			t.Errorf("boundary record lacks %q:\n%s", want, record)
		}
	}
	if strings.Contains(record, "Let me read the file") {
		t.Errorf("boundary record keeps narration:\n%s", record)
	}
}
