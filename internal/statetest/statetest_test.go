package statetest

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

func TestGenerateIsValid(t *testing.T) {
	features := map[string]int{}
	for seed := int64(0); seed < 300; seed++ {
		st := Generate(rand.New(rand.NewSource(seed)), DefaultOptions())
		w := Work(st)
		if problems := Check(w); len(problems) > 0 {
			t.Fatalf("seed %d: %s", seed, strings.Join(problems, "\n"))
		}
		if problems := CheckPreserved(st, w); len(problems) > 0 {
			t.Fatalf("seed %d: identity view: %s", seed, strings.Join(problems, "\n"))
		}
		index := map[string]int{}
		for i, m := range st.Context.Messages {
			index[m.ID] = i
		}
		for i, m := range st.Context.Messages {
			for _, id := range m.CoversMessageIDs {
				if j, ok := index[id]; !ok || j >= i {
					t.Fatalf("seed %d: %s covers %s which is not earlier", seed, m.ID, id)
				}
			}
			running := st.Execution.Running() && m.ExecutionID == st.Execution.ID
			if m.Mask != nil && (m.Pinned || running) {
				t.Fatalf("seed %d: %s is masked but pinned or running", seed, m.ID)
			}
			switch {
			case m.Kind == agentstate.KindSummary:
				features["summary"]++
			case m.Kind == agentstate.KindEvent:
				features["event"]++
			case m.Mask != nil:
				features["mask"]++
			case m.Pinned:
				features["pinned"]++
			}
			for _, p := range m.Parts {
				if p.Kind == agentstate.PartToolResult && p.ToolResult.IsError {
					features["error"]++
				}
				if p.Kind == agentstate.PartReasoning && len(p.Reasoning.Signature) > 0 {
					features["signature"]++
				}
				if p.Kind == agentstate.PartToolResult && len(p.ToolResult.Content) >= 6000 {
					features["large"]++
				}
			}
		}
		if st.Execution.Running() {
			features["running"]++
		}
		if len(policies.UnresolvedFailures(w.Entries)) > 0 {
			features["unresolved"]++
		}
	}
	for _, f := range []string{"summary", "event", "mask", "pinned", "error", "signature", "large", "running", "unresolved"} {
		if features[f] == 0 {
			t.Errorf("no generated state has a %s", f)
		}
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	a := Generate(rand.New(rand.NewSource(7)), DefaultOptions())
	b := Generate(rand.New(rand.NewSource(7)), DefaultOptions())
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave different states")
	}
}

func TestDamageBreaksStructure(t *testing.T) {
	opts := DefaultOptions()
	opts.Damage = 0.3
	broken := 0
	for seed := int64(0); seed < 100; seed++ {
		if len(Check(Work(Generate(rand.New(rand.NewSource(seed)), opts)))) > 0 {
			broken++
		}
	}
	if broken < 50 {
		t.Fatalf("only %d of 100 damaged states are broken", broken)
	}
}

func TestFakeCounter(t *testing.T) {
	c := FakeCounter{}
	tests := []struct {
		name string
		msg  agentstate.Message
		want int
	}{
		{"empty", agentstate.Message{}, 3},
		{"five bytes round up", agentstate.Message{Parts: []agentstate.Part{agentstate.TextPart("hello")}}, 2 + 3},
		{"call", agentstate.Message{Parts: []agentstate.Part{{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: "c1", Name: "ls", ArgumentsJSON: "{}"}}}}, 2 + 3},
		{"mask counts placeholder", agentstate.Message{Parts: []agentstate.Part{agentstate.TextPart(strings.Repeat("x", 400))}, Mask: &agentstate.Mask{Placeholder: "12345678"}}, 2 + 3},
		{"image", agentstate.Message{Parts: []agentstate.Part{{Kind: agentstate.PartImage}}}, 85 + 3},
	}
	for _, tt := range tests {
		if got, _ := c.CountMessage(&tt.msg); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
	if got := c.CountText("123456789"); got != 3 {
		t.Errorf("CountText: got %d, want 3", got)
	}
}

func TestCheckFindsProblems(t *testing.T) {
	st, err := ParseJSON([]byte(`{"execution":{"id":"e2","status":"running"},"messages":[
		{"id":"m1","role":"user","text":"task"},
		{"id":"m2","role":"tool","parts":[{"result":{"id":"c9","name":"x","content":"?"}}]},
		{"id":"m3","role":"assistant","exec":"e1","parts":[{"call":{"id":"c1","name":"ls","args":"{}"}}]},
		{"id":"m3","role":"assistant","exec":"e2","parts":[{"call":{"id":"c2","name":"ls","args":"{}"}}]},
		{"id":"m5","role":"user","parts":[]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`entry 3: duplicate id m3`,
		`m5: no parts`,
		`m2: orphan tool message (no calling assistant message before it)`,
		`m3: call "c1" of a finished execution has no result`,
	}
	if diff := cmp.Diff(want, Check(Work(st))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCheckPreservedFindsProblems(t *testing.T) {
	st, err := ParseJSON([]byte(`{"messages":[
		{"id":"m1","role":"user","text":"task"},
		{"id":"m2","role":"assistant","pinned":true,"text":"keep"},
		{"id":"m3","role":"assistant","parts":[{"reasoning":{"text":"r","signature":"0102"}}]},
		{"id":"m4","role":"user","text":"gone"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	w := Work(st)
	w.Entries[0].Message.Parts = []agentstate.Part{agentstate.TextPart("changed")}
	w.Entries[1].Message.Pinned = false
	w.Entries[2].Message.Parts = []agentstate.Part{{Kind: agentstate.PartReasoning, Reasoning: agentstate.Reasoning{Text: "r", Signature: []byte{1}}}}
	w.Entries = w.Entries[:3]
	want := []string{
		"first task m1 is changed",
		"m1 is changed and has neither disposition nor repair",
		"m2 is changed and has neither disposition nor repair",
		"m3 is changed and has neither disposition nor repair",
		"m3: reasoning part not byte-identical to its source",
		"m4 is not shown and has no disposition",
		"pinned m2 is changed",
	}
	if diff := cmp.Diff(want, CheckPreserved(st, w)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseJSONRejects(t *testing.T) {
	for _, in := range []string{
		`{"messages":[{"id":"m1","role":"robot"}]}`,
		`{"messages":[{"id":"m1","role":"user","kind":"odd"}]}`,
		`{"messages":[{"id":"m1","role":"user","parts":[{}]}]}`,
		`{"messages":[{"id":"m1","role":"user","parts":[{"reasoning":{"signature":"zz"}}]}]}`,
		`{"execution":{"status":"paused"}}`,
		`{"unknown":1}`,
	} {
		if _, err := ParseJSON([]byte(in)); err == nil {
			t.Errorf("ParseJSON(%s) succeeded", in)
		}
	}
}

func FuzzFromBytes(f *testing.F) {
	f.Add([]byte{0, 1, 4, 3, 5, 3, 7, 0, 3, 8, 9, 1})
	f.Add([]byte("arbitrary bytes"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st := FromBytes(data)
		w := Work(st)
		_ = Check(w)
		_ = CheckPreserved(st, w)
		_ = Format(w)
	})
}
