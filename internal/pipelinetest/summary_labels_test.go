package pipelinetest

import (
	"context"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/eval/synth"
)

// summaryLabel is the label a compaction summary opens with.
var summaryLabel = regexp.MustCompile(`^Summary of (\d+) earlier messages(?: \((\S+) to (\S+)\))?`)

// TestSummaryLabelsNameWhatTheyCover replays a 40-turn session, each turn
// routed into the state and compiled into 8K, where summaries stack and
// merge: every summary a compile returns counts the messages it covers
// (the log's summaries among them aside) and names the first and the last.
// A merged summary once named only the span it added ("Summary of 18
// earlier messages (in-97 to in-98)" for in-81 to in-98), as this replay's
// did from its 44th line on.
func TestSummaryLabelsNameWhatTheyCover(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a 40-turn session; make test runs it")
	}
	svc := testService(t)
	s, err := synth.Generate(synth.Options{Seed: 23, Turns: 40})
	if err != nil {
		t.Fatal(err)
	}
	type label struct {
		Count       int
		First, Last string
	}
	ctx := context.Background()
	for _, profile := range []string{"budget-aware", "policy-driven"} {
		t.Run(profile, func(t *testing.T) {
			st := &ctxcv1.AgentState{SchemaVersion: 1, Model: s.Header.Model, Context: &ctxcv1.AgentContext{SystemPrompt: s.Header.SystemPrompt, Tools: s.Header.Tools}}
			// grown counts the summaries that cover all that one of the
			// previous compile's did and more: merges, mostly.
			checked, grown := 0, 0
			var before [][]string
			for i, l := range s.Lines {
				req := proto.CloneOf(l.Route)
				req.State, req.Profile = st, "pragmatic"
				routed, err := svc.Route(ctx, req)
				if err != nil {
					t.Fatalf("line %d: Route: %v", i+2, err)
				}
				st = routed.GetState()
				if l.Route.GetUserTurn() == nil {
					continue
				}
				window := uint32(8_000)
				out, err := svc.Compile(ctx, &ctxcv1.CompileRequest{State: st, Profile: profile, Options: &ctxcv1.CompileOptions{MaxContextTokenCount: &window}})
				if err != nil {
					t.Fatalf("line %d: Compile: %v", i+2, err)
				}
				logSummaries := map[string]bool{}
				for _, m := range st.GetContext().GetMessages() {
					if m.GetKind() == ctxcv1.MessageKind_MESSAGE_KIND_SUMMARY {
						logSummaries[m.GetId()] = true
					}
				}
				var now [][]string
				for _, m := range out.GetMessages() {
					if m.GetKind() != ctxcv1.MessageKind_MESSAGE_KIND_SUMMARY || len(m.GetParts()) == 0 {
						continue
					}
					covers := m.GetCoversMessageIds()
					now = append(now, covers)
					for _, b := range before {
						if len(covers) > len(b) && containsAll(covers, b) {
							grown++
							break
						}
					}
					text := m.GetParts()[0].GetText()
					got := summaryLabel.FindStringSubmatch(text)
					if got == nil {
						t.Fatalf("line %d: summary %s has no label: %.80q", i+2, m.GetId(), text)
					}
					var want label
					for _, id := range covers {
						if logSummaries[id] {
							continue
						}
						if want.Count == 0 {
							want.First = id
						}
						want.Last = id
						want.Count++
					}
					n, _ := strconv.Atoi(got[1])
					if diff := cmp.Diff(want, label{Count: n, First: got[2], Last: got[3]}); diff != "" {
						t.Fatalf("line %d: the label of %s does not say what it covers (-covers +label):\n%s", i+2, m.GetId(), diff)
					}
					checked++
				}
				before = now
			}
			if checked == 0 || grown == 0 {
				t.Fatalf("%d summaries checked, %d grew over an earlier one: the replay no longer merges summaries", checked, grown)
			}
		})
	}
}

// containsAll reports whether every id of sub is in ids.
func containsAll(ids, sub []string) bool {
	in := make(map[string]bool, len(ids))
	for _, id := range ids {
		in[id] = true
	}
	for _, id := range sub {
		if !in[id] {
			return false
		}
	}
	return true
}
