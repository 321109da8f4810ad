package normalize

import (
	"context"
	"flag"
	"math/rand"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestGolden(t *testing.T) {
	configs := map[string]Config{
		"tool_units":    {},
		"empty_parts":   {},
		"old_reasoning": {DropOldReasoning: true},
	}
	for name, cfg := range configs {
		t.Run(name, func(t *testing.T) {
			st := statetest.LoadJSON(t, filepath.Join("testdata", name+".json"))
			w := statetest.Work(st)
			Normalize(w, &cfg)
			statetest.Golden(t, filepath.Join("testdata", name+".golden"), statetest.Format(w), *update)
			if p := statetest.Check(w); len(p) > 0 {
				t.Errorf("invalid view:\n%s", strings.Join(p, "\n"))
			}
		})
	}
}

func msg(id string, role agentstate.Role, exec string, parts ...agentstate.Part) agentstate.Message {
	return agentstate.Message{ID: id, Role: role, ExecutionID: exec, Parts: parts}
}

func call(id, name string) agentstate.Part {
	return agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: id, Name: name, ArgumentsJSON: "{}"}}
}

func result(id, name string) agentstate.Part {
	return agentstate.Part{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: id, Name: name, Content: "out " + id}}
}

// layout renders entries as "id:role" plus, for tool messages, the call ids answered.
func layout(w *policies.Work) []string {
	var out []string
	for _, e := range w.Entries {
		s := e.Message.ID + ":" + e.Message.Role.String()
		for _, p := range e.Message.Parts {
			if p.Kind == agentstate.PartToolResult {
				s += ":" + p.ToolResult.ToolCallID
			}
		}
		out = append(out, s)
	}
	return out
}

func repairKinds(w *policies.Work) []string {
	var out []string
	for _, r := range w.Report().Repairs {
		out = append(out, r.Kind+" "+r.MessageID)
	}
	return out
}

func TestEdgeCases(t *testing.T) {
	user := agentstate.RoleUser
	asst := agentstate.RoleAssistant
	tool := agentstate.RoleTool
	tests := []struct {
		name        string
		exec        agentstate.Execution
		msgs        []agentstate.Message
		wantLayout  []string
		wantRepairs []string
	}{
		{
			name:        "no state execution: every call is finished",
			msgs:        []agentstate.Message{msg("m1", user, "", agentstate.TextPart("hi")), msg("m2", asst, "", call("c1", "ls"))},
			wantLayout:  []string{"m1:user", "m2:assistant", "ctxc-missing-result-c1:tool:c1"},
			wantRepairs: []string{"MISSING_RESULT_SYNTHESIZED m2"},
		},
		{
			name:       "running execution with unspecified status keeps pending calls",
			exec:       agentstate.Execution{ID: "e1"},
			msgs:       []agentstate.Message{msg("m1", user, "e1", agentstate.TextPart("hi")), msg("m2", asst, "e1", call("c1", "ls"))},
			wantLayout: []string{"m1:user", "m2:assistant"},
		},
		{
			name:        "message of another execution is finished although the state runs",
			exec:        agentstate.Execution{ID: "e2", Status: agentstate.ExecutionRunning},
			msgs:        []agentstate.Message{msg("m1", asst, "e1", call("c1", "ls"), call("c2", "cat")), msg("m2", tool, "e1", result("c2", "cat"))},
			wantLayout:  []string{"m1:assistant", "m2:tool:c2", "ctxc-missing-result-c1:tool:c1"},
			wantRepairs: []string{"MISSING_RESULT_SYNTHESIZED m1"},
		},
		{
			name: "one tool message answering two units is split",
			exec: agentstate.Execution{ID: "e1", Status: agentstate.ExecutionCompleted},
			msgs: []agentstate.Message{
				msg("m1", asst, "e1", call("c1", "ls")),
				msg("m2", asst, "e1", call("c2", "cat")),
				msg("m3", tool, "e1", result("c2", "cat"), result("c1", "ls")),
			},
			wantLayout:  []string{"m1:assistant", "ctxc-split-m3-1:tool:c1", "m2:assistant", "m3:tool:c2"},
			wantRepairs: []string{"ROLE_ORDER_FIXED m3", "ROLE_ORDER_FIXED ctxc-split-m3-1"},
		},
		{
			name: "reused call id: the result answers the latest call",
			msgs: []agentstate.Message{
				msg("m1", asst, "", call("c1", "ls")),
				msg("m2", asst, "", call("c1", "ls")),
				msg("m3", tool, "", result("c1", "ls")),
			},
			wantLayout:  []string{"m1:assistant", "ctxc-missing-result-c1:tool:c1", "m2:assistant", "m3:tool:c1"},
			wantRepairs: []string{"MISSING_RESULT_SYNTHESIZED m1"},
		},
		{
			name: "synthesized id does not collide with a log id",
			msgs: []agentstate.Message{
				msg("ctxc-missing-result-c1", user, "", agentstate.TextPart("odd id")),
				msg("m2", asst, "", call("c1", "ls")),
			},
			wantLayout:  []string{"ctxc-missing-result-c1:user", "m2:assistant", "ctxc-missing-result-c1-2:tool:c1"},
			wantRepairs: []string{"MISSING_RESULT_SYNTHESIZED m2"},
		},
		{
			name:        "result before its call is an orphan",
			msgs:        []agentstate.Message{msg("m1", tool, "", result("c1", "ls")), msg("m2", asst, "", call("c1", "ls")), msg("m3", tool, "", result("c1", "ls"))},
			wantLayout:  []string{"m2:assistant", "m3:tool:c1"},
			wantRepairs: []string{"ORPHAN_RESULT_DROPPED m1"},
		},
		{
			name:       "nothing to do",
			msgs:       []agentstate.Message{msg("m1", user, "", agentstate.TextPart("hi")), msg("m2", asst, "", agentstate.TextPart("hello"))},
			wantLayout: []string{"m1:user", "m2:assistant"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &agentstate.State{Execution: tt.exec, Context: agentstate.Context{Messages: tt.msgs}}
			w := statetest.Work(st)
			Normalize(w, &Config{})
			if diff := cmp.Diff(tt.wantLayout, layout(w)); diff != "" {
				t.Errorf("layout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantRepairs, repairKinds(w)); diff != "" {
				t.Errorf("repairs (-want +got):\n%s", diff)
			}
			if p := statetest.Check(w); len(p) > 0 {
				t.Errorf("invalid view:\n%s", strings.Join(p, "\n"))
			}
		})
	}
}

func TestSynthesizedResult(t *testing.T) {
	st := &agentstate.State{Context: agentstate.Context{Messages: []agentstate.Message{msg("m1", agentstate.RoleAssistant, "e1", call("c1", "ls"))}}}
	w := statetest.Work(st)
	Normalize(w, &Config{})
	want := agentstate.Entry{Message: agentstate.Message{
		ID: "ctxc-missing-result-c1", Role: agentstate.RoleTool, Kind: agentstate.KindRepair, ExecutionID: "e1",
		Parts: []agentstate.Part{{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: "c1", Name: "ls", Content: MissingResultContent, IsError: true}}},
	}, Changed: true}
	if diff := cmp.Diff(want, w.Entries[1]); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestLogIsNotModified(t *testing.T) {
	opts := statetest.DefaultOptions()
	opts.Damage = 0.3
	for seed := int64(0); seed < 50; seed++ {
		st := statetest.Generate(rand.New(rand.NewSource(seed)), opts)
		before := statetest.Generate(rand.New(rand.NewSource(seed)), opts)
		Normalize(statetest.Work(st), &Config{DropOldReasoning: true})
		if !reflect.DeepEqual(st, before) {
			t.Fatalf("seed %d: Normalize modified the state", seed)
		}
	}
}

func TestProperties(t *testing.T) {
	for _, damage := range []float64{0, 0.1, 0.3} {
		opts := statetest.DefaultOptions()
		opts.Damage = damage
		for seed := int64(0); seed < 200; seed++ {
			r := rand.New(rand.NewSource(seed))
			opts.Turns = 1 + r.Intn(8)
			st := statetest.Generate(r, opts)
			for _, cfg := range []Config{{}, {DropOldReasoning: true}} {
				w := statetest.Work(st)
				Normalize(w, &cfg)
				statetest.Recount(w.Entries, w.Counter())
				if p := append(statetest.Check(w), statetest.CheckPreserved(st, w)...); len(p) > 0 {
					t.Fatalf("damage %v seed %d cfg %+v:\n%s\n%s", damage, seed, cfg, strings.Join(p, "\n"), statetest.Format(w))
				}
				if damage == 0 && !cfg.DropOldReasoning && len(w.Report().Repairs) > 0 {
					t.Fatalf("seed %d: repairs on a valid state: %v", seed, w.Report().Repairs)
				}
				again := *w
				again.Entries = append([]agentstate.Entry(nil), w.Entries...)
				first := len(again.Report().Repairs)
				Normalize(&again, &cfg)
				if again := again.Report().Repairs[first:]; len(again) > 0 {
					t.Fatalf("damage %v seed %d: second pass repaired again: %v", damage, seed, again)
				}
			}
		}
	}
}

func TestFactories(t *testing.T) {
	for _, tt := range []struct {
		f      policies.Factory
		typ    string
		stage  policies.Stage
		repair bool
	}{
		{NewFactory(), "normalize", policies.StageNormalize, false},
		{NewRepairFactory(), "repair", policies.StageCompact, true},
	} {
		if tt.f.Type() != tt.typ || tt.f.Stage() != tt.stage {
			t.Errorf("%s: got type %q stage %s", tt.typ, tt.f.Type(), tt.f.Stage())
		}
		cfg := tt.f.CreateDefaultConfig()
		if diff := cmp.Diff(&Config{}, cfg); diff != "" {
			t.Errorf("%s default config (-want +got):\n%s", tt.typ, diff)
		}
		p, err := tt.f.Create(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.(policies.RepairPass); ok != tt.repair {
			t.Errorf("%s: RepairPass = %v, want %v", tt.typ, ok, tt.repair)
		}
		st := &agentstate.State{Context: agentstate.Context{Messages: []agentstate.Message{msg("m1", agentstate.RoleTool, "", result("c1", "ls"))}}}
		w := statetest.Work(st)
		if err := p.Apply(context.Background(), w); err != nil {
			t.Fatal(err)
		}
		if d, _ := w.Disposition("m1"); len(w.Entries) != 0 || d.Policy != tt.typ {
			t.Errorf("%s: orphan not dropped by this policy: %+v", tt.typ, w.Dispositions())
		}
		if _, err := tt.f.Create(nil); err == nil {
			t.Errorf("%s: Create(nil) succeeded", tt.typ)
		}
	}
}

func FuzzNormalize(f *testing.F) {
	f.Add([]byte{0, 1, 4, 3, 5, 3, 7, 0, 3, 8, 9, 1})
	f.Add([]byte{4, 0, 5, 1, 5, 0, 2, 6, 1, 14, 0x13, 11, 13, 2})
	f.Add([]byte{10, 1, 0, 9, 4, 7, 14, 0x11, 5, 7, 6, 0x22, 12, 3, 15, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		st := statetest.FromBytes(data)
		w := statetest.Work(st)
		Normalize(w, &Config{DropOldReasoning: len(data)%2 == 0})
		for _, p := range statetest.Check(w) {
			if !strings.Contains(p, "duplicate id") {
				t.Fatalf("%s\n%s", p, statetest.Format(w))
			}
		}
	})
}

// FuzzBlank: blank's shortcut for texts that open with printable ASCII
// agrees with strings.TrimSpace on every string.
func FuzzBlank(f *testing.F) {
	for _, s := range []string{"", " ", "\t\n", "a", " a", "\x7f", "\u00a0", "\u0085x", "\u3000", "\v\f\r", "!", "~ ", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := blank(s), strings.TrimSpace(s) == ""; got != want {
			t.Errorf("blank(%q) = %v, want %v", s, got, want)
		}
	})
}
