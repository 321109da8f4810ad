package pipelinetest

import (
	"context"
	"math/rand"
	"testing"

	"github.com/contextcompiler/ctxc/internal/components"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/contextcompiler/ctxc/internal/adapter"
	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/internal/pipeline"
	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// specResolver is windowResolver honouring the request's window override.
type specResolver struct{ windowResolver }

func (r specResolver) Resolve(spec agentstate.ModelSpec) (agentstate.ModelInfo, agentstate.TokenCounter, error) {
	info, c, err := r.windowResolver.Resolve(spec)
	if spec.ContextWindowTokens != nil {
		info.ContextWindow = int(*spec.ContextWindowTokens)
	}
	return info, c, err
}

// cachedCatalog builds every policy for window, with a schedule cache.
func cachedCatalog(t testing.TB, window int, cache *pipeline.ScheduleCache, outputs *diagnose.Cache) *pipeline.Catalog {
	t.Helper()
	reg, err := components.Registry(components.Deps{Outputs: outputs})
	if err != nil {
		t.Fatal(err)
	}
	c, err := pipeline.NewCatalog(reg, specResolver{windowResolver{window: window, output: 256}}, noop.NewTracerProvider(), pipeline.Config{ScheduleCache: cache})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// turnPrefixes are the logs a turn-by-turn caller sends: st's log up to and
// including each message that opens a user turn, and the whole log.
func turnPrefixes(st *agentstate.State) []*agentstate.State {
	var out []*agentstate.State
	msgs := st.Context.Messages
	for i := range msgs {
		if policies.IsTurnStart(&msgs[i]) || i == len(msgs)-1 {
			p := *st
			p.Context.Messages = msgs[: i+1 : i+1]
			out = append(out, &p)
		}
	}
	return out
}

// compiled is what a compile answers, durations left out (they are the
// only thing a resumed run may tell apart).
type compiled struct {
	Messages []agentstate.Message
	Rendered string
	Report   policies.Report
}

func compiledOf(res *pipeline.Result) compiled {
	rep := res.Report
	rep.Stages = append([]policies.StageReport(nil), rep.Stages...)
	for i := range rep.Stages {
		rep.Stages[i].DurationMicros = 0
	}
	return compiled{Messages: res.Messages(), Rendered: res.Work.Rendered, Report: rep}
}

// TestScheduleCacheCompilesAsAFullReplay compiles generated sessions turn by
// turn under every built-in profile, with the schedule cache and without, and
// wants the same messages, rendered body and report, the state given left as
// it was; and that the cache was used, by every profile whose compaction is
// replayable.
func TestScheduleCacheCompilesAsAFullReplay(t *testing.T) {
	builtin, err := pipeline.BuiltinProfiles()
	if err != nil {
		t.Fatal(err)
	}
	outputs := diagnose.NewCache()
	const window = 3000
	plain := cachedCatalog(t, window, nil, outputs)
	opts := statetest.DefaultOptions()
	opts.Turns = 14
	var sessions []*agentstate.State
	for seed := int64(1); seed <= 3; seed++ {
		sessions = append(sessions, statetest.Generate(rand.New(rand.NewSource(seed)), opts))
	}
	render := agentstate.Options{Render: agentstate.RenderAnthropic}
	for _, spec := range builtin {
		t.Run(spec.Name, func(t *testing.T) {
			cache := pipeline.NewScheduleCache(pipeline.DefaultScheduleCacheBytes)
			cached := cachedCatalog(t, window, cache, outputs)
			points := 0
			for k, st := range sessions {
				for i, prefix := range turnPrefixes(st) {
					req := pipeline.Request{Profile: spec.Name, State: prefix, Options: render}
					given := proto.CloneOf(adapter.StateToProto(prefix))
					want, wantErr := plain.Run(context.Background(), req)
					got, gotErr := cached.Run(context.Background(), req)
					// Compiles read their state and never change it: a
					// server shares a decoded log among the calls that name
					// it by reference.
					if diff := cmp.Diff(given, adapter.StateToProto(prefix), protocmp.Transform()); diff != "" {
						t.Fatalf("session %d, compile %d: the compile changed the state it was given (-given +after):\n%s", k, i, diff)
					}
					if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
						t.Fatalf("session %d, compile %d: error %v, want %v", k, i, gotErr, wantErr)
					}
					if wantErr != nil {
						continue
					}
					if diff := cmp.Diff(compiledOf(want), compiledOf(got)); diff != "" {
						t.Fatalf("session %d, compile %d (%d messages): with the cache (-replay +cached):\n%s", k, i, len(prefix.Context.Messages), diff)
					}
					points += len(want.Report.Compaction.Points)
				}
			}
			stats := cache.Stats()
			if points == 0 {
				t.Fatal("no compile compacted: the sessions do not exercise the schedule")
			}
			if replayable(t, cached, spec.Name) {
				if stats.Hits == 0 || stats.Stores == 0 {
					t.Fatalf("cache stats %+v: the cache was never used", stats)
				}
			} else if stats.Stores != 0 || stats.Hits != 0 {
				t.Fatalf("cache stats %+v: a profile with a model-backed transform must not use the cache", stats)
			}
		})
	}
}

// replayable says whether every compact-stage policy of the profile is.
func replayable(t *testing.T, c *pipeline.Catalog, name string) bool {
	info, err := c.Profile(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range info.Stages {
		if s.Policy == "llm_summarize" {
			return false
		}
	}
	return true
}

// TestScheduleCacheMissesWhatChanged: a log whose earlier message changed
// (same length), another option, another model window or another caller
// finds nothing to resume from, and compiles as a full replay; the same log grown by appends
// resumes.
func TestScheduleCacheMissesWhatChanged(t *testing.T) {
	outputs := diagnose.NewCache()
	const window = 3000
	opts := statetest.DefaultOptions()
	opts.Turns, opts.PinnedProb, opts.RunningProb = 14, 0, 0
	st := statetest.Generate(rand.New(rand.NewSource(7)), opts)
	prefixes := turnPrefixes(st)
	base, grown := prefixes[len(prefixes)-3], prefixes[len(prefixes)-2]
	plain := cachedCatalog(t, window, nil, outputs)

	// An earlier message with the same length and other content.
	edited := *grown
	edited.Context.Messages = append([]agentstate.Message(nil), grown.Context.Messages...)
	for i := 2; i < len(edited.Context.Messages); i++ {
		m := &edited.Context.Messages[i]
		if m.Role == agentstate.RoleUser && len(m.Parts) > 0 && m.Parts[0].Kind == agentstate.PartText && len(m.Parts[0].Text) > 0 {
			m.Parts = append([]agentstate.Part(nil), m.Parts...)
			b := []byte(m.Parts[0].Text)
			b[0] ^= 1
			m.Parts[0].Text = string(b)
			break
		}
	}
	otherWindow := edited
	otherWindow.Context.Messages = grown.Context.Messages
	w := uint32(window + 500)
	otherWindow.Model.ContextWindowTokens = &w
	ratio := 0.6

	for _, tc := range []struct {
		name string
		req  pipeline.Request
		hit  bool
	}{
		{"grown by appends", pipeline.Request{Profile: "policy-driven", State: grown}, true},
		{"an earlier message edited", pipeline.Request{Profile: "policy-driven", State: &edited}, false},
		{"another option", pipeline.Request{Profile: "policy-driven", State: grown, Options: agentstate.Options{SoftThresholdRatio: &ratio}}, false},
		{"another window", pipeline.Request{Profile: "policy-driven", State: &otherWindow}, false},
		{"another profile", pipeline.Request{Profile: "budget-aware", State: grown}, false},
		{"another caller", pipeline.Request{Profile: "policy-driven", State: grown, CacheScope: "tenant-b"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := pipeline.NewScheduleCache(pipeline.DefaultScheduleCacheBytes)
			cached := cachedCatalog(t, window, cache, outputs)
			if _, err := cached.Run(context.Background(), pipeline.Request{Profile: "policy-driven", State: base}); err != nil {
				t.Fatal(err)
			}
			if s := cache.Stats(); s.Stores != 1 {
				t.Fatalf("stats %+v after the first compile, want one snapshot stored", s)
			}
			got, err := cached.Run(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			want, err := plain.Run(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(compiledOf(want), compiledOf(got)); diff != "" {
				t.Fatalf("(-replay +cached):\n%s", diff)
			}
			if s := cache.Stats(); (s.Hits == 1) != tc.hit {
				t.Fatalf("stats %+v: hit %v, want %v", s, s.Hits == 1, tc.hit)
			}
		})
	}
}
