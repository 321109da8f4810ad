package project

import (
	"context"
	"flag"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
	"github.com/contextcompiler/ctxc/policies/normalize"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestGolden(t *testing.T) {
	for _, tt := range []struct {
		file   string
		view   agentstate.View
		golden string
	}{
		{"summaries", agentstate.ViewReasoning, "summaries"},
		{"conversation", agentstate.ViewConversation, "conversation"},
		{"conversation", agentstate.ViewReasoning, "conversation_as_reasoning"},
		{"masks", agentstate.ViewReasoning, "masks"},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			st := statetest.LoadJSON(t, filepath.Join("testdata", tt.file+".json"))
			w := statetest.Work(st)
			Project(w, tt.view)
			statetest.Golden(t, filepath.Join("testdata", tt.golden+".golden"), statetest.Format(w), *update)
			if p := append(statetest.Check(w), statetest.CheckPreserved(st, w)...); len(p) > 0 {
				t.Errorf("broken view:\n%s", strings.Join(p, "\n"))
			}
		})
	}
}

func ids(w *policies.Work) []string {
	var out []string
	for _, e := range w.Entries {
		out = append(out, e.Message.ID)
	}
	return out
}

func m(id string, role agentstate.Role, parts ...agentstate.Part) agentstate.Message {
	return agentstate.Message{ID: id, Role: role, Parts: parts}
}

var text = agentstate.TextPart

func call(id string) agentstate.Part {
	return agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: id, Name: "ls"}}
}

func result(id string) agentstate.Part {
	return agentstate.Part{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: id, Name: "ls", Content: "x"}}
}

func summary(id string, covers ...string) agentstate.Message {
	s := m(id, agentstate.RoleUser, text("summary"))
	s.Kind = agentstate.KindSummary
	s.CoversMessageIDs = covers
	return s
}

func TestSummaryEdgeCases(t *testing.T) {
	u, a, tl := agentstate.RoleUser, agentstate.RoleAssistant, agentstate.RoleTool
	tests := []struct {
		name string
		msgs []agentstate.Message
		want []string
	}{
		{"summary covering nothing known stays in place",
			[]agentstate.Message{m("m1", u, text("t")), summary("s", "zz")}, []string{"m1", "s"}},
		{"summary covering itself is ignored",
			[]agentstate.Message{m("m1", u, text("t")), summary("s", "s")}, []string{"m1", "s"}},
		{"covering a result covers its call",
			[]agentstate.Message{m("m1", u, text("t")), m("m2", a, call("c1")), m("m3", tl, result("c1")), m("m4", a, text("ok")), summary("s", "m3")},
			[]string{"m1", "s", "m4"}},
		{"summary covering later messages moves forward",
			[]agentstate.Message{m("m1", u, text("t")), summary("s", "m3"), m("m2", u, text("a")), m("m3", a, text("b"))},
			[]string{"m1", "m2", "s"}},
		{"summaries covering each other both go",
			[]agentstate.Message{m("m1", u, text("t")), summary("s1", "s2"), summary("s2", "s1")},
			[]string{"m1"}},
		{"two summaries keep their order",
			[]agentstate.Message{m("m1", u, text("t")), m("m2", u, text("a")), m("m3", u, text("b")), summary("s1", "m2"), summary("s2", "m3")},
			[]string{"m1", "s1", "s2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &agentstate.State{Context: agentstate.Context{Messages: tt.msgs}}
			w := statetest.Work(st)
			Project(w, agentstate.ViewReasoning)
			if diff := cmp.Diff(tt.want, ids(w)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if p := statetest.CheckPreserved(st, w); len(p) > 0 {
				t.Errorf("%s", strings.Join(p, "\n"))
			}
		})
	}
}

func TestOptionsOverrideConfig(t *testing.T) {
	st := &agentstate.State{Context: agentstate.Context{Messages: []agentstate.Message{
		m("m1", agentstate.RoleUser, text("t")), m("m2", agentstate.RoleAssistant, call("c1")), m("m3", agentstate.RoleTool, result("c1")),
	}}}
	f := NewFactory()
	for _, tt := range []struct {
		cfg, option agentstate.View
		want        []string
	}{
		{agentstate.ViewReasoning, agentstate.ViewUnspecified, []string{"m1", "m2", "m3"}},
		{agentstate.ViewConversation, agentstate.ViewUnspecified, []string{"m1"}},
		{agentstate.ViewConversation, agentstate.ViewReasoning, []string{"m1", "m2", "m3"}},
		{agentstate.ViewReasoning, agentstate.ViewConversation, []string{"m1"}},
	} {
		cfg := f.CreateDefaultConfig().(*Config)
		if tt.cfg == agentstate.ViewConversation {
			cfg.View = ViewConversation
		}
		p, err := f.Create(cfg)
		if err != nil {
			t.Fatal(err)
		}
		w := statetest.Work(st, func(in *policies.Input) { in.Options.View = tt.option })
		if err := p.Apply(context.Background(), w); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, ids(w)); diff != "" {
			t.Errorf("config %v option %v (-want +got):\n%s", tt.cfg, tt.option, diff)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (&Config{View: "reasoning"}).Validate(); err != nil {
		t.Error(err)
	}
	for _, v := range []string{"", "Reasoning", "trace"} {
		if err := (&Config{View: v}).Validate(); err == nil {
			t.Errorf("view %q accepted", v)
		}
	}
	if diff := cmp.Diff(&Config{View: "reasoning"}, NewFactory().CreateDefaultConfig()); diff != "" {
		t.Error(diff)
	}
}

func TestProperties(t *testing.T) {
	opts := statetest.DefaultOptions()
	for seed := int64(0); seed < 300; seed++ {
		r := rand.New(rand.NewSource(seed))
		opts.Turns = 1 + r.Intn(8)
		opts.Damage = []float64{0, 0.2}[seed%2]
		st := statetest.Generate(r, opts)
		for _, view := range []agentstate.View{agentstate.ViewReasoning, agentstate.ViewConversation} {
			w := statetest.Work(st)
			normalize.Normalize(w, &normalize.Config{})
			Project(w, view)
			p := append(statetest.Check(w), statetest.CheckPreserved(st, w)...)
			for i := range w.Entries {
				e := &w.Entries[i]
				if view == agentstate.ViewConversation && policies.IsToolTrace(&e.Message) && !unitPinned(w, i) {
					p = append(p, e.Message.ID+": tool trace in the conversation view")
				}
				if e.Message.Mask != nil && !e.Message.Pinned && e.Message.Text() != e.Message.Mask.Placeholder && e.Message.Role != agentstate.RoleTool && i != policies.FirstTask(w.Entries) {
					p = append(p, e.Message.ID+": masked message not shown as its placeholder")
				}
			}
			if len(p) > 0 {
				t.Fatalf("seed %d view %d:\n%s\n%s", seed, view, strings.Join(p, "\n"), statetest.Format(w))
			}
		}
	}
}

func unitPinned(w *policies.Work, i int) bool {
	for _, u := range policies.Units(w.Entries) {
		if i >= u.Start && i < u.End {
			for j := u.Start; j < u.End; j++ {
				if w.Entries[j].Message.Pinned {
					return true
				}
			}
		}
	}
	return false
}

func FuzzProject(f *testing.F) {
	f.Add([]byte{0, 1, 4, 3, 5, 3, 7, 0, 3, 8, 9, 1})
	f.Add([]byte{0, 4, 0, 5, 0, 7, 0, 3, 7, 3, 9, 1, 7, 1, 2, 14, 0x11})
	f.Add([]byte{4, 1, 6, 1, 2, 7, 1, 4, 7, 5, 3, 9, 2, 8, 12, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		st := statetest.FromBytes(data)
		for _, view := range []agentstate.View{agentstate.ViewReasoning, agentstate.ViewConversation} {
			w := statetest.Work(st)
			normalize.Normalize(w, &normalize.Config{})
			Project(w, view)
			for _, p := range statetest.Check(w) {
				if !strings.Contains(p, "duplicate id") {
					t.Fatalf("%s\n%s", p, statetest.Format(w))
				}
			}
		}
	})
}
