package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

func text(id string, role agentstate.Role, s string) agentstate.Message {
	return agentstate.Message{ID: id, Role: role, Parts: []agentstate.Part{agentstate.TextPart(s)}}
}

// chatState is a finished four-turn chat with a pinned rule. By the fake
// counter: system prompt 2 tokens, u1 30, rule 9, the six others 28 each: 209.
func chatState() *agentstate.State {
	long := strings.Repeat("word ", 20)
	pinned := text("rule", agentstate.RoleUser, "always answer in French")
	pinned.Pinned = true
	return &agentstate.State{
		Model: agentstate.ModelSpec{Name: "fake"},
		Context: agentstate.Context{SystemPrompt: "be brief", Messages: []agentstate.Message{
			text("u1", agentstate.RoleUser, "task: "+long),
			text("a1", agentstate.RoleAssistant, long),
			pinned,
			text("u2", agentstate.RoleUser, long),
			text("a2", agentstate.RoleAssistant, long),
			text("u3", agentstate.RoleUser, long),
			text("a3", agentstate.RoleAssistant, long),
			text("u4", agentstate.RoleUser, long),
		}},
	}
}

func catalogWith(t *testing.T, tp *sdktrace.TracerProvider, window int, profileYAML string) *Catalog {
	t.Helper()
	cfg := Config{}
	if profileYAML != "" {
		cfg.Profiles = profilesFromYAML(t, profileYAML)
		cfg.DefaultProfile = cfg.Profiles[0].Name
	}
	var c *Catalog
	var err error
	if tp == nil {
		c, err = NewCatalog(fakeRegistry(), fakeResolver{window: window, output: 10}, noop.NewTracerProvider(), cfg)
	} else {
		c, err = NewCatalog(fakeRegistry(), fakeResolver{window: window, output: 10}, tp, cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOneSpanPerExecutedStageWithAttributes(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	c := catalogWith(t, tp, 100000, "")
	ctx, parent := tp.Tracer("test").Start(t.Context(), "rpc")
	if _, err := c.Run(ctx, Request{State: chatState()}); err != nil {
		t.Fatal(err)
	}
	parent.End()
	type span struct {
		Name  string
		Attrs map[string]string
	}
	var got []span
	for _, s := range rec.Ended() {
		if s.Name() == "rpc" {
			continue
		}
		if s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("span %s is not a child of the RPC span", s.Name())
		}
		attrs := map[string]string{}
		for _, kv := range s.Attributes() {
			attrs[string(kv.Key)] = kv.Value.Emit()
		}
		got = append(got, span{s.Name(), attrs})
	}
	// pragmatic on a state that fits: truncate and repair are not executed;
	// render runs (it renders only when the request asks).
	stage := func(stage, policy, in, out, tin, tout string) span {
		return span{"ctxc.stage." + stage, map[string]string{
			"ctxc.profile": "pragmatic", "ctxc.stage": stage, "ctxc.policy": policy,
			"ctxc.messages_in": in, "ctxc.messages_out": out, "ctxc.tokens_in": tin, "ctxc.tokens_out": tout, "ctxc.degraded": "false",
		}}
	}
	want := []span{
		stage("normalize", "normalize", "8", "8", "0", "0"),
		stage("project", "project", "8", "8", "0", "0"),
		stage("estimate", "estimate", "8", "8", "0", "209"),
		stage("budget", "token_budget", "8", "8", "209", "209"),
		stage("render", "render", "8", "8", "209", "209"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
}

func TestPragmaticTruncatesOnlyOverTheHardWindow(t *testing.T) {
	profile := `
- name: fit
  stages:
    - policy: normalize
    - policy: estimate
    - policy: token_budget
    - policy: truncate
      settings: {drop: true}
    - policy: repair
`
	// 209 tokens used; window 300 - 10 reserved: fits, nothing compacted.
	res, err := catalogWith(t, nil, 300, profile).Run(t.Context(), Request{State: chatState()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Compacted || len(res.Work.Entries) != 8 || len(res.Report.Warnings) != 0 {
		t.Errorf("compacted=%v entries=%d warnings=%v", res.Report.Compacted, len(res.Work.Entries), res.Report.Warnings)
	}
	if got := res.Report.Stages[3]; !got.Skipped || got.Policy != "truncate" {
		t.Errorf("truncate stage = %+v, want skipped", got)
	}
	// Window 200 - 10: over by 19 tokens; one drop of an unprotected unit (a1, 28) fits it.
	res, err = catalogWith(t, nil, 200, profile).Run(t.Context(), Request{State: chatState()})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Report.Compacted {
		t.Error("not compacted")
	}
	if len(res.Report.Warnings) != 1 || !strings.Contains(res.Report.Warnings[0], "exceeds the usable window of 190 tokens") {
		t.Errorf("warnings = %q", res.Report.Warnings)
	}
	if res.Work.Budget.Used > 190 {
		t.Errorf("used %d after compaction, want <= 190", res.Work.Budget.Used)
	}
	var dropped []string
	for _, m := range res.Report.Messages {
		if m.Disposition == policies.DispositionDropped {
			dropped = append(dropped, m.MessageID)
		}
	}
	if diff := cmp.Diff([]string{"a1"}, dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
	if res.Report.VerbatimPrefix != 2 {
		t.Errorf("verbatim prefix = %d, want 2 (system, u1, then a1 is gone)", res.Report.VerbatimPrefix)
	}
	// The drop was made at a compaction point (the log ends with a user
	// turn): later compiles repeat it, so the whole output is stable.
	if res.Report.FirstChangedIndex != 8 {
		t.Errorf("first changed index = %d, want 8 (all of the system prompt and 7 messages)", res.Report.FirstChangedIndex)
	}
}

func TestTransformThatDoesNotShrinkIsReverted(t *testing.T) {
	profile := `
- name: grow
  recent_turns: 1
  stages:
    - policy: normalize
    - policy: estimate
    - policy: token_budget
    - policy: threshold
      settings: {request: true}
    - policy: clamp
      settings: {grow: true}
    - policy: truncate
      settings: {drop: true}
`
	// Window 300: soft threshold 232, target 174, so both transforms are attempted.
	res, err := catalogWith(t, nil, 300, profile).Run(t.Context(), Request{State: chatState()})
	if err != nil {
		t.Fatal(err)
	}
	clamp := res.Report.Stages[4]
	if !clamp.Degraded || !strings.Contains(clamp.DegradedReason, "did not shrink") || clamp.TokensOut != clamp.TokensIn {
		t.Errorf("clamp stage = %+v, want reverted", clamp)
	}
	for _, e := range res.Work.Entries {
		if strings.Contains(e.Message.Text(), "more more") {
			t.Errorf("entry %s keeps the reverted change", e.Message.ID)
		}
	}
	if trunc := res.Report.Stages[5]; trunc.Skipped || trunc.MessagesOut >= trunc.MessagesIn {
		t.Errorf("truncate stage = %+v, want it to run and drop", trunc)
	}
}

// A reverted transform leaves the view as it was before it: the read-only
// stages after it must see that view as checked, not the reverted one.
func TestReadOnlyStageAfterARevertedTransform(t *testing.T) {
	profile := `
- name: grow-only
  recent_turns: 1
  stages:
    - policy: normalize
    - policy: estimate
    - policy: token_budget
    - policy: threshold
      settings: {request: true}
    - policy: clamp
      settings: {grow: true}
    - policy: render
`
	res, err := catalogWith(t, nil, 300, profile).Run(t.Context(), Request{State: chatState()})
	if err != nil {
		t.Fatal(err)
	}
	if clamp := res.Report.Stages[4]; !clamp.Degraded || !strings.Contains(clamp.DegradedReason, "did not shrink") {
		t.Errorf("clamp stage = %+v, want reverted", clamp)
	}
	if render := res.Report.Stages[len(res.Report.Stages)-1]; render.Policy != "render" || render.Skipped {
		t.Errorf("last stage = %+v, want render run", render)
	}
}

func TestInvariantViolationIsAnErrorNotOutput(t *testing.T) {
	profile := `
- name: buggy
  stages:
    - policy: normalize
    - policy: project
      settings: {drop_pinned: true}
`
	_, err := catalogWith(t, nil, 100000, profile).Run(t.Context(), Request{State: chatState()})
	if !errors.Is(err, agentstate.ErrInvariant) {
		t.Fatalf("err = %v, want ErrInvariant", err)
	}
	if !strings.HasPrefix(err.Error(), "stage project: invariant violated after project: pinned message \"rule\"") {
		t.Errorf("err = %q", err)
	}
}

// The checks find a view's messages by log position, not by id: a message
// shown twice, a synthesized message that takes a log message's id, and a
// first task rewritten are all still caught.
func TestInvariantViolationsFoundByPosition(t *testing.T) {
	for _, tc := range []struct{ settings, want string }{
		{"{duplicate: true}", `stage project: invariant violated after project: message id "u2" appears twice`},
		{"{impostor: true}", `stage project: invariant violated after project: message id "u2" appears twice`},
		{"{rewrite_first: true}", `stage project: invariant violated after project: the first task "u1" was not preserved verbatim`},
	} {
		checkInvariantError(t, []string{"normalize", "project"}, tc.settings, tc.want)
	}
}

// After a read-only stage the view is not checked in full, but a policy that
// drops or rewrites a message there is still caught.
func TestReadOnlyStageThatChangesMessagesIsAnInvariantError(t *testing.T) {
	for _, tc := range []struct{ settings, want string }{
		{"{drop: true}", `stage estimate: invariant violated after estimate: the estimate stage changed the messages it may only read`},
		{"{grow: true}", `stage estimate: invariant violated after estimate: the estimate stage changed the messages it may only read`},
	} {
		checkInvariantError(t, []string{"normalize", "project", "estimate"}, tc.settings, tc.want)
	}
}

// checkInvariantError runs chatState through a profile of chain, its last
// policy with settings, and checks that the run fails with the invariant
// error want.
func checkInvariantError(t *testing.T, chain []string, settings, want string) {
	t.Helper()
	profile := "\n- name: buggy\n  stages:\n"
	for _, p := range chain {
		profile += "    - policy: " + p + "\n"
	}
	profile += "      settings: " + settings + "\n"
	_, err := catalogWith(t, nil, 100000, profile).Run(t.Context(), Request{State: chatState()})
	if !errors.Is(err, agentstate.ErrInvariant) || err.Error() != want {
		t.Errorf("%s: err = %v, want %s", settings, err, want)
	}
}

func TestPolicyErrorsAreWrappedWithTheStage(t *testing.T) {
	profile := `
- name: failing
  stages:
    - policy: normalize
    - policy: estimate
      settings: {fail: boom}
`
	_, err := catalogWith(t, nil, 100000, profile).Run(t.Context(), Request{State: chatState()})
	if err == nil || err.Error() != "stage estimate: boom" {
		t.Fatalf("err = %v", err)
	}
}

func TestStillOverTheWindowAfterCompactionIsIrreducible(t *testing.T) {
	profile := `
- name: weak
  stages:
    - policy: normalize
    - policy: estimate
    - policy: token_budget
    - policy: clamp
`
	_, err := catalogWith(t, nil, 100, profile).Run(t.Context(), Request{State: chatState()})
	var irr *agentstate.IrreducibleError
	if !errors.As(err, &irr) {
		t.Fatalf("err = %v, want IrreducibleError", err)
	}
	if irr.NeededTokens != 209 || irr.AvailableTokens != 90 {
		t.Errorf("needed %d available %d, want 209 and 90", irr.NeededTokens, irr.AvailableTokens)
	}
}

func TestBudgetSegmentStopsAfterTheBudgetStage(t *testing.T) {
	res, err := catalogWith(t, nil, 100, "").Run(t.Context(), Request{State: chatState(), Segment: SegmentBudget})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range res.Report.Stages {
		got = append(got, s.Stage)
	}
	if diff := cmp.Diff([]string{"normalize", "project", "estimate", "budget"}, got); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
	if res.Work.Budget == nil || res.Work.Budget.Used != 209 {
		t.Errorf("budget = %+v", res.Work.Budget)
	}
}

func TestCompactPersistsSummariesAndMasksWithoutLosingMessages(t *testing.T) {
	c := catalogWith(t, nil, 100000, "")
	st := chatState()
	res, err := c.Run(t.Context(), Request{State: st})
	if err != nil {
		t.Fatal(err)
	}
	// Simulate what compaction policies leave on the Work, then persist it.
	w := res.Work
	w.Masks = map[string]agentstate.Mask{"a1": {Reason: "test", Placeholder: "[masked]", OriginalTokenCount: 28}}
	w.Appended = []agentstate.Message{{ID: "ctxc-summary-x", Role: agentstate.RoleUser, Kind: agentstate.KindSummary,
		Parts: []agentstate.Part{agentstate.TextPart("summary")}, CoversMessageIDs: []string{"a1", "u2"}}}
	out := persist(st, w.Appended, w.Masks, false)
	if len(out.Context.Messages) != len(st.Context.Messages)+1 {
		t.Fatalf("log has %d messages, want %d", len(out.Context.Messages), len(st.Context.Messages)+1)
	}
	if m := out.Context.Messages[1]; m.ID != "a1" || m.Mask == nil || m.Mask.Placeholder != "[masked]" || m.Text() == "" {
		t.Errorf("a1 = %+v, want its content kept and the mask recorded", m)
	}
	if st.Context.Messages[1].Mask != nil {
		t.Error("the input state was modified")
	}
	bounded := persist(st, w.Appended, w.Masks, true)
	var ids []string
	for _, m := range bounded.Context.Messages {
		ids = append(ids, m.ID)
	}
	if diff := cmp.Diff([]string{"u1", "rule", "a2", "u3", "a3", "u4", "ctxc-summary-x"}, ids); diff != "" {
		t.Errorf("bounded log (-want +got):\n%s", diff)
	}
}
