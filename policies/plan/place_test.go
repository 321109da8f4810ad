package plan_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
	"github.com/contextcompiler/ctxc/policies/plan"
)

// manual is a 400-line document about the export; one line, about the
// archive bucket, answers only the goal below, never the question.
func manual() string {
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "Line %d of the operations manual: routine maintenance notes.\n", i)
		if i == 300 {
			b.WriteString("Archive bucket retention is 30 days; expired exports are purged nightly.\n")
		}
	}
	return b.String()
}

// TestPlaceAttachments: "place_attachments" places only the request's
// attachments, by the deterministic plan, without a planner: whole when they
// fit, as an extract chosen by the latest user turn and the goal when they do
// not, left out with a warning when not even an extract fits. Tool results
// stay as they are, and the placed message is pinned, so compaction keeps it.
func TestPlaceAttachments(t *testing.T) {
	goal := &agentstate.Goal{Description: "Find out how long the archive bucket keeps exports", SuccessCriteria: []string{"retention period named"}}
	tests := []struct {
		name        string
		attachment  agentstate.Attachment
		budget      int // tokens left for attachments under the soft threshold
		goal        *agentstate.Goal
		wantIDs     []string
		wantUsage   string // strategy of the attachment
		wantIn      string // text the placed message holds
		wantOut     string // text it must not hold
		wantWarning string // the start of the one warning, "" for none
	}{
		{
			name:       "fits: placed whole before the latest turn",
			attachment: agentstate.Attachment{ID: "runbook", Title: "Export runbook", Content: "Check the disk quota of /var/data first."},
			budget:     5000,
			wantIDs:    []string{"m1", "m2", "m3", "m4", plan.AttachmentsMessageID, "m5"},
			wantUsage:  "include", wantIn: `<attachment id="runbook" type="document" title="Export runbook">` + "\nCheck the disk quota",
		},
		{
			name:       "too large: an extract that answers the goal",
			attachment: agentstate.Attachment{ID: "manual", Content: manual()},
			budget:     3400, goal: goal,
			wantIDs:   []string{"m1", "m2", "m3", "m4", plan.AttachmentsMessageID, "m5"},
			wantUsage: "extract", wantIn: "Archive bucket retention is 30 days", wantWarning: `place_attachments: attachment "manual" cut to an extract of `,
		},
		{
			name:       "too large without a goal: the extract follows the question alone",
			attachment: agentstate.Attachment{ID: "manual", Content: manual()},
			budget:     3400,
			wantIDs:    []string{"m1", "m2", "m3", "m4", plan.AttachmentsMessageID, "m5"},
			wantUsage:  "extract", wantOut: "Archive bucket retention", wantWarning: `place_attachments: attachment "manual" cut to an extract of `,
		},
		{
			name:       "no room at all: left out, with a warning",
			attachment: agentstate.Attachment{ID: "manual", Content: manual()},
			budget:     100,
			wantIDs:    []string{"m1", "m2", "m3", "m4", "m5"},
			wantUsage:  "exclude", wantWarning: `place_attachments: attachment "manual" left out: did not fit the budget; no budget left for an extract`,
		},
	}
	f := plan.NewPlacementFactory()
	if f.Type() != "place_attachments" || f.Stage() != policies.StagePlan {
		t.Fatalf("factory %s/%s", f.Type(), f.Stage())
	}
	p, err := f.Create(f.CreateDefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := statetest.Work(session(), statetest.RecentTurns(1), func(in *policies.Input) {
				in.Attachments, in.Options.Goal = []agentstate.Attachment{tt.attachment}, tt.goal
			})
			statetest.Recount(w.Entries, w.Counter())
			w.Budget = &agentstate.Budget{ContextWindow: 128000, Used: w.UsedTokens(), SoftThreshold: w.UsedTokens() + tt.budget}
			before := toolContent(w)
			if err := p.Apply(context.Background(), w); err != nil {
				t.Fatal(err)
			}
			statetest.Recount(w.Entries, w.Counter())
			if diff := cmp.Diff(tt.wantIDs, ids(w)); diff != "" {
				t.Errorf("view (-want +got):\n%s", diff)
			}
			if toolContent(w) != before || w.Notes().Degraded || w.Report().PlanningUsed {
				t.Errorf("tool result changed %v, degraded %q, planning used %v", toolContent(w) != before, w.Notes().DegradedReason, w.Report().PlanningUsed)
			}
			if len(w.Report().Artifacts) != 1 || w.Report().Artifacts[0].ArtifactID != tt.attachment.ID || w.Report().Artifacts[0].Strategy != tt.wantUsage {
				t.Errorf("artifacts %+v, want %s for %s alone", w.Report().Artifacts, tt.wantUsage, tt.attachment.ID)
			}
			if (tt.wantWarning == "") != (len(w.Report().Warnings) == 0) || (tt.wantWarning != "" && (len(w.Report().Warnings) != 1 || !strings.HasPrefix(w.Report().Warnings[0], tt.wantWarning))) {
				t.Errorf("warnings %q, want one starting %q", w.Report().Warnings, tt.wantWarning)
			}
			placed := placedAttachments(w)
			if placed == nil {
				return
			}
			if !placed.Pinned || !strings.Contains(placed.Text(), tt.wantIn) || (tt.wantOut != "" && strings.Contains(placed.Text(), tt.wantOut)) {
				t.Errorf("placed message (pinned %v) does not hold %q (or holds %q):\n%.600s", placed.Pinned, tt.wantIn, tt.wantOut, placed.Text())
			}
			if problems := statetest.Check(w); len(problems) > 0 {
				t.Errorf("view problems: %v", problems)
			}
		})
	}
}

func placedAttachments(w *policies.Work) *agentstate.Message {
	for i := range w.Entries {
		if w.Entries[i].Message.ID == plan.AttachmentsMessageID {
			return &w.Entries[i].Message
		}
	}
	return nil
}
