//go:build integration

package integration

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// TestBudgetAndTriggerAgree: the budget's should_compact is what the
// profile's decide stage decides, at the soft threshold's exact boundary
// (reached at used == threshold), below it when too little headroom remains,
// and for a trigger that counts messages; Budget and Compile say the same.
func TestBudgetAndTriggerAgree(t *testing.T) {
	t.Parallel()
	config := writeConfig(t, `
profiles:
  - name: headroom
    stages:
      - policy: normalize
      - policy: project
      - policy: estimate
      - policy: token_budget
        settings: {min_headroom_tokens: 2000}
      - policy: threshold
      - policy: summarize
      - policy: truncate
      - policy: repair
  - name: counted
    stages:
      - policy: normalize
      - policy: project
      - policy: estimate
      - policy: token_budget
      - policy: message_count
        settings: {max_messages: 3}
      - policy: summarize
      - policy: truncate
      - policy: repair
`)
	s := startServer(t, "--config", config)
	client := s.client()
	ctx := context.Background()
	// The chat ends with a user turn (a compaction point); without provider
	// usage its budget is ctxc's own count, which triggers decide on.
	st := readExample(t, "chat.json").GetState()
	for _, m := range st.GetContext().GetMessages() {
		m.Usage = nil
	}
	measure := func(profile string, window uint32, ratio float64) (budget *ctxcv1.TokenBudget, fired bool) {
		t.Helper()
		opts := &ctxcv1.CompileOptions{MaxContextTokenCount: proto.Uint32(window), ReservedOutputTokenCount: proto.Uint32(0), SoftThresholdRatio: proto.Float64(ratio)}
		b, err := client.Budget(ctx, &ctxcv1.BudgetRequest{State: st, Profile: profile, Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		c, err := client.Compile(ctx, &ctxcv1.CompileRequest{State: st, Profile: profile, Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		return b.GetBudget(), c.GetReport().GetCompaction().GetTriggerFired()
	}
	whole, _ := measure("pragmatic", 1_000_000, 1)
	used := whole.GetUsedTokenCount()
	if whole.GetProvenance() == ctxcv1.TokenCountProvenance_TOKEN_COUNT_PROVENANCE_ANCHORED || used < 50 || used > 4000 {
		t.Fatalf("chat budget %v: want ctxc's own count of a small context", whole)
	}

	for _, tt := range []struct {
		name          string
		profile       string
		window        uint32
		ratio         float64
		over, compact bool
	}{
		// Ratio 1 and nothing reserved: the soft threshold is the window.
		{"at the soft threshold", "budget-aware", used, 1, true, true},
		{"one token under the soft threshold", "budget-aware", used + 1, 1, false, false},
		// 1,999 tokens remain of the 2,000 the headroom asks for, far under the 0.8 soft threshold.
		{"headroom one token short", "headroom", used + 1999, 0.8, false, true},
		{"headroom met", "headroom", used + 2000, 0.8, false, false},
		// Four messages, more than the three the trigger allows, in a roomy window.
		{"message count over", "counted", 1_000_000, 0.8, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, fired := measure(tt.profile, tt.window, tt.ratio)
			if b.GetUsedTokenCount() != used {
				t.Fatalf("used %d, want %d", b.GetUsedTokenCount(), used)
			}
			if b.GetOverSoftThreshold() != tt.over || b.GetShouldCompact() != tt.compact || fired != tt.compact {
				t.Errorf("used %d, soft threshold %d, %d remaining: over_soft_threshold %v, should_compact %v, Compile's trigger fired %v; want %v, %v, %v",
					used, b.GetSoftThresholdTokenCount(), b.GetRemainingTokenCount(), b.GetOverSoftThreshold(), b.GetShouldCompact(), fired, tt.over, tt.compact, tt.compact)
			}
		})
	}
}

// TestImportanceDefaults: drop_low_importance with its defaults (threshold
// 30, the newest 10 messages kept) keeps tool rounds and messages scoring 30
// or more, and drops what scores less only outside the newest 10 messages;
// policy-driven shows those settings.
func TestImportanceDefaults(t *testing.T) {
	t.Parallel()
	config := writeConfig(t, `
profiles:
  - name: importance
    stages:
      - policy: normalize
      - policy: project
      - policy: estimate
      - policy: token_budget
      - policy: threshold
      - policy: drop_low_importance
      - policy: repair
`)
	s := startServer(t, "--config", config)
	client := s.client()
	ctx := context.Background()

	list, err := client.ListProfiles(ctx, &ctxcv1.ListProfilesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, p := range list.GetProfiles() {
		for _, st := range p.GetStages() {
			if st.GetPolicy() == "drop_low_importance" {
				settings[p.GetName()] = st.GetSettingsJson()
			}
		}
	}
	want := `{"min_importance_threshold":30,"keep_recent_messages":10}`
	if diff := cmp.Diff(map[string]string{"importance": want, "policy-driven": want}, settings); diff != "" {
		t.Errorf("drop_low_importance settings (-want +got):\n%s", diff)
	}

	filler := strings.Repeat("The inventory service keeps its stock counts in Postgres. ", 12)
	msg := func(id string, role ctxcv1.Role, importance uint32, parts ...*ctxcv1.Part) *ctxcv1.Message {
		return &ctxcv1.Message{Id: id, Role: role, Importance: importance, Parts: parts}
	}
	user := func(id string) *ctxcv1.Message { return msg(id, ctxcv1.Role_ROLE_USER, 0, text(id+": "+filler)) }
	answer := func(id string, importance uint32) *ctxcv1.Message {
		return msg(id, ctxcv1.Role_ROLE_ASSISTANT, importance, text(id+": "+filler))
	}
	st := &ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: "gpt-4o"}, Context: &ctxcv1.AgentContext{Messages: []*ctxcv1.Message{
		user("u1"),
		answer("low", 20),
		answer("middling", 40),
		msg("call", ctxcv1.Role_ROLE_ASSISTANT, 0, call("c1", "read_file", `{"path":"stock.go"}`)),
		msg("result", ctxcv1.Role_ROLE_TOOL, 0, result("c1", "read_file", filler, false)),
		user("u2"), answer("a2", 0),
		// The newest 10 messages start here.
		user("u3"), answer("recent-low", 20),
		user("u4"), answer("a4", 0), user("u5"), answer("a5", 0), user("u6"), answer("a6", 0), user("u7"),
	}}}
	b, err := client.Budget(ctx, &ctxcv1.BudgetRequest{State: st, Profile: "importance"})
	if err != nil {
		t.Fatal(err)
	}
	// A soft threshold of a tenth of the window fires and aims far below
	// what can be dropped: everything drop_low_importance may drop goes.
	window := b.GetBudget().GetUsedTokenCount() * 10 / 9
	opts := &ctxcv1.CompileOptions{MaxContextTokenCount: proto.Uint32(window), ReservedOutputTokenCount: proto.Uint32(0), SoftThresholdRatio: proto.Float64(0.1)}
	resp, err := client.Compile(ctx, &ctxcv1.CompileRequest{State: st, Profile: "importance", Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.GetReport().GetCompaction().GetTriggerFired() {
		t.Fatalf("trigger did not fire: %v", resp.GetReport().GetCompaction())
	}
	dropped := map[string]string{}
	for _, m := range resp.GetReport().GetMessages() {
		if m.GetDisposition() == ctxcv1.Disposition_DISPOSITION_DROPPED {
			dropped[m.GetMessageId()] = m.GetPolicy() + ": " + m.GetReason()
		}
	}
	if diff := cmp.Diff(map[string]string{"low": "drop_low_importance: importance 20 below 30"}, dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
}
