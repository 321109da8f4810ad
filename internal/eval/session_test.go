package eval

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
)

const (
	okHeader = `{"session": {"id": "s", "model": {"name": "gpt-4o"}, "facts": [{"id": "f1", "kind": "constraint", "text": "keep it", "turn": 1}]}}`
	okTurn   = `{"route": {"userTurn": {"messages": [{"role": "ROLE_USER", "parts": [{"text": "please keep it"}]}]}}}`
)

func TestLoadRejects(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"empty file", "", "line 1: session: missing"},
		{"only blank lines", "\n\n", "line 1: session: missing"},
		{"not JSON", "{nope", "line 1: not a header object"},
		{"a route first", okTurn, `line 1: session: the first line must hold only the header`},
		{"no lines after the header", okHeader + "\n", "line 2: the session has no route or state lines after its header"},
		{"unknown header field", `{"session": {"id": "s", "model": {"name": "m"}, "modle": 1}}` + "\n" + okTurn, `line 1: session: json: unknown field "modle"`},
		{"no id", `{"session": {"model": {"name": "m"}}}` + "\n" + okTurn, "line 1: session.id: required"},
		{"no model", `{"session": {"id": "s"}}` + "\n" + okTurn, "line 1: session.model: required"},
		{"bad model", `{"session": {"id": "s", "model": {"name": "m", "window": 3}}}` + "\n" + okTurn, "line 1: session.model: not a ctxc.v1.ModelSpec"},
		{"model without a name", `{"session": {"id": "s", "model": {"provider": "openai"}}}` + "\n" + okTurn, "line 1: session.model.name: required"},
		{"tool without a name", `{"session": {"id": "s", "model": {"name": "m"}, "tools": [{"description": "x"}]}}` + "\n" + okTurn, "line 1: session.tools[0].name: required"},
		{"fact kind", `{"session": {"id": "s", "model": {"name": "m"}, "facts": [{"id": "f", "kind": "rule", "text": "x", "turn": 1}]}}` + "\n" + okTurn, `line 1: session.facts[0].kind: "rule" is not one of constraint, decision, error_code, pinned, first_task, other`},
		{"fact turn", `{"session": {"id": "s", "model": {"name": "m"}, "facts": [{"id": "f", "kind": "other", "text": "x", "turn": 0}]}}` + "\n" + okTurn, "line 1: session.facts[0].turn: 0"},
		{"fact text", `{"session": {"id": "s", "model": {"name": "m"}, "facts": [{"id": "f", "kind": "other", "text": " ", "turn": 1}]}}` + "\n" + okTurn, "line 1: session.facts[0].text: required"},
		{"duplicate fact id", `{"session": {"id": "s", "model": {"name": "m"}, "facts": [{"id": "f", "kind": "other", "text": "please", "turn": 1}, {"id": "f", "kind": "other", "text": "keep", "turn": 1}]}}` + "\n" + okTurn, `line 1: session.facts[1].id: "f" is also the id of session.facts[0]`},
		{"fact nowhere in the session", `{"session": {"id": "s", "model": {"name": "m"}, "facts": [{"id": "f", "kind": "other", "text": "never said", "turn": 1}]}}` + "\n" + okTurn, `line 1: session.facts[0].text: "never said" occurs in no message of the session`},
		{"both route and state", okHeader + "\n" + `{"route": {"event": {"text": "x"}}, "state": {}}`, `line 2: exactly one of "route" and "state" is required`},
		{"neither", okHeader + "\n" + `{}`, `line 2: exactly one of "route" and "state" is required`},
		{"a second header", okHeader + "\n" + okHeader, "line 2: session: only the first line may be the header"},
		{"unknown route field", okHeader + "\n\n" + `{"route": {"userTurn": {"messages": []}, "colour": 1}}`, "line 3: route: not a ctxc.v1.RouteRequest"},
		{"route with a state", okHeader + "\n" + `{"route": {"state": {}, "event": {"text": "x"}}}`, "line 2: route.state: not allowed"},
		{"route with a profile", okHeader + "\n" + `{"route": {"profile": "p", "event": {"text": "x"}}}`, "line 2: route.profile: not allowed"},
		{"route without input", okHeader + "\n" + `{"route": {}}`, "line 2: route: one of user_turn, step or event is required"},
		{"turn on a route", okHeader + "\n" + `{"route": {"event": {"text": "x"}}, "turn": 2}`, "line 2: turn: only a state line has a turn"},
		{"bad state", okHeader + "\n" + `{"state": {"context": {"messages": [{"role": "ROLE_NOBODY"}]}}}`, "line 2: state: not a ctxc.v1.AgentState"},
		{"two values on a line", okHeader + "\n" + okTurn + " {}", "line 2: not a {\"route\": ...} or {\"state\": ...} object: more than one JSON value on the line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(strings.NewReader(tt.input), "x.jsonl")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestLoadRefusesLongLines(t *testing.T) {
	header := `{"session": {"id": "s", "model": {"name": "gpt-4o"}}}`
	line := `{"route": {"event": {"text": "` + strings.Repeat("x", 2000) + `"}}}`
	if _, err := load(strings.NewReader(header+"\n"+line), "x", len(line)); err != nil {
		t.Errorf("a line of exactly the limit: %v", err)
	}
	_, err := load(strings.NewReader(header+"\n"+line), "x", len(line)-1)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("line 2: longer than %d bytes", len(line)-1)) {
		t.Errorf("got %v, want line 2 refused as too long", err)
	}
}

func TestWriteLoadRoundTrip(t *testing.T) {
	s := loadTiny(t)
	var buf bytes.Buffer
	if err := Write(&buf, s); err != nil {
		t.Fatal(err)
	}
	written := buf.String()
	again, err := Load(&buf, "tiny.jsonl")
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	// Written files have no blank lines, so line numbers are renumbered.
	for i := range s.Lines {
		s.Lines[i].Number = i + 2
	}
	if diff := cmp.Diff(s, again, protocmp.Transform()); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if n := strings.Count(written, "\n"); n != len(s.Lines)+1 {
		t.Errorf("%d lines written, want %d", n, len(s.Lines)+1)
	}
}

// TestUseFacts: a facts file replaces what a session lists or would be
// found in it, and is refused, naming the fact, when one could never be
// measured; a refused file leaves the session's own facts.
func TestUseFacts(t *testing.T) {
	tests := []struct {
		name, file, want string
	}{
		{"kept", `{"facts": [{"id": "a", "kind": "constraint", "text": "please keep", "turn": 1}]}`, ""},
		{"not JSON", `{"facts": [`, "not a facts file"},
		{"unknown field", `{"facts": [], "fatcs": 1}`, `unknown field "fatcs"`},
		{"empty", `{"facts": []}`, "facts: at least one fact is required"},
		{"no id", `{"facts": [{"kind": "other", "text": "keep", "turn": 1}]}`, "facts[0].id: required"},
		{"kind", `{"facts": [{"id": "a", "kind": "rule", "text": "keep", "turn": 1}]}`, `facts[0].kind: "rule" is not one of`},
		{"duplicate id", `{"facts": [{"id": "a", "kind": "other", "text": "keep", "turn": 1}, {"id": "a", "kind": "other", "text": "it", "turn": 1}]}`, `facts[1].id: "a" is also the id of facts[0]`},
		{"past the last turn", `{"facts": [{"id": "a", "kind": "other", "text": "keep", "turn": 2}]}`, "facts[0].turn: 2 is past the session's last turn, 1"},
		{"said nowhere", `{"facts": [{"id": "a", "kind": "other", "text": "never said", "turn": 1}]}`, `facts[0].text: "never said" occurs in no message of the session`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load(strings.NewReader(okHeader+"\n"+okTurn), "s.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			own := s.Header.Facts
			facts, err := ReadFacts(strings.NewReader(tt.file))
			if err == nil {
				err = s.UseFacts(facts, "f.json")
			}
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want == "":
				if diff := cmp.Diff(facts, s.Header.Facts); diff != "" || s.FactsFrom != "f.json" {
					t.Errorf("facts measured (-want +got):\n%s, from %q", diff, s.FactsFrom)
				}
			case err == nil || !strings.Contains(err.Error(), tt.want):
				t.Errorf("got %v, want an error holding %q", err, tt.want)
			default:
				if diff := cmp.Diff(own, s.Header.Facts); diff != "" || s.FactsFrom != "" {
					t.Errorf("a refused file changed the session's facts (-want +got):\n%s", diff)
				}
			}
		})
	}
}
