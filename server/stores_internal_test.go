package server

import (
	"context"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/adapter"
	"github.com/contextcompiler/ctxc/internal/adapter/stateref"
	"github.com/contextcompiler/ctxc/internal/compiler"
	"github.com/contextcompiler/ctxc/internal/components"
	"github.com/contextcompiler/ctxc/internal/summarycache/redistest"
	"github.com/contextcompiler/ctxc/internal/tenant"
)

// kept lists every field of the engine, of the policies' shared parts and
// of the two services built on them, with what it keeps between calls. A field added later fails
// TestEveryStoreIsListed until it is listed here; one that keeps what a
// caller sent, or what a model wrote for it, must be keyed by the caller
// (package tenant) and get a probe in TestListedStoresAreTheCallersOwn.
var kept = map[string]string{
	// Stores of a caller's own, probed below.
	"engine.cache":                 "per caller: attachments, summaries and plans (summarycache scopes every key by tenant.Namespace)",
	"engine.refs":                  "per caller: states named by reference (stateref keys every state by its caller)",
	"components.Cache":             "per caller: the same summary cache as engine.cache",
	"engine.schedules":             "per caller: the schedule cache's keys hash pipeline.Request.CacheScope, the caller (internal/pipelinetest TestScheduleCacheMissesWhatChanged, \"another caller\")",
	"engine.catalog":               "the built profiles, with engine.schedules and the policies' memos: content-addressed, a value computed from what the asking caller sends itself, keys hashed with a random seed (compaction TestMemoKeysAreSeeded)",
	"engine.tokens":                "content-addressed: token counts by encoding and content, keys hashed with a random seed",
	"components.Outputs":           "content-addressed: what was read of a tool output, by the output, keys hashed with a random seed (diagnose TestCacheIsSeeded)",
	"compiler.Service.attachments": "per caller: engine.cache",
	"adapter.Service.refs":         "per caller: engine.refs",
	// Not stores.
	"adapter.Service.UnimplementedContextCompilerServiceServer": "generated",
	"adapter.Service.app":       "the use cases (compiler.Service)",
	"adapter.Service.log":       "a logger",
	"compiler.Service.catalog":  "engine.catalog",
	"compiler.Service.counters": "engine.tokens",
	"compiler.Service.limits":   "limits",
	"compiler.Service.log":      "a logger",
	"compiler.Service.observer": "engine.observer",
	"engine.helpers":            "the helper model clients, for metrics",
	"engine.observer":           "metrics of pipeline runs",
	"engine.maxMessageBytes":    "a limit",
	"engine.proxyEndpoints":     "configuration, for metrics",
	"engine.version":            "the build's version",
	"components.Planner":        "a model client",
	"components.Summarizer":     "a model client",
	"components.Prices":         "a lookup in the model registry",
}

func TestEveryStoreIsListed(t *testing.T) {
	seen := map[string]bool{}
	for prefix, typ := range map[string]reflect.Type{"engine": reflect.TypeFor[engine](), "components": reflect.TypeFor[components.Deps](),
		"adapter.Service": reflect.TypeFor[adapter.Service](), "compiler.Service": reflect.TypeFor[compiler.Service]()} {
		for i := range typ.NumField() {
			name := prefix + "." + typ.Field(i).Name
			seen[name] = true
			if _, ok := kept[name]; !ok {
				t.Errorf("%s is not listed in kept: if it keeps anything between calls, key it by the caller (package tenant), probe it in TestListedStoresAreTheCallersOwn and list it", name)
			}
		}
	}
	for name := range kept {
		if !seen[name] {
			t.Errorf("kept lists %s, which is no field any more", name)
		}
	}
}

// TestListedStoresAreTheCallersOwn probes each store of the engine listed
// per caller, on a real Redis shared by two engines (two replicas): what
// one caller stored, another can neither read nor replace.
func TestListedStoresAreTheCallersOwn(t *testing.T) {
	url := redistest.Start(t).URL
	newEngineOn := func() *engine {
		cfg := NewConfig()
		cfg.Logger = slog.New(slog.DiscardHandler)
		cfg.SummaryCache.RedisURL = url
		e, err := NewEngine(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Close)
		return e.eng
	}
	first, second := newEngineOn(), newEngineOn()
	alice := tenant.WithCaller(context.Background(), "alice")
	bob := tenant.WithCaller(context.Background(), "bob")

	probes := map[string]func(t *testing.T){}
	probes["engine.cache"] = func(t *testing.T) {
		k := t.Name() // each run its own key
		if err := first.cache.Store(alice, k, "alice's"); err != nil {
			t.Fatal(err)
		}
		for name, e := range map[string]*engine{"first": first, "second": second} {
			if v, ok, _ := e.cache.Lookup(bob, k); ok {
				t.Errorf("bob read %q from the %s engine", v, name)
			}
		}
		if err := second.cache.Store(bob, k, "bob's"); err != nil {
			t.Fatal(err)
		}
		if v, _, _ := second.cache.Lookup(alice, k); v != "alice's" {
			t.Errorf("alice reads %q after bob's write, want hers", v)
		}
	}
	probes["components.Cache"] = probes["engine.cache"]
	probes["compiler.Service.attachments"] = probes["engine.cache"]
	probes["adapter.Service.refs"] = func(t *testing.T) { probes["engine.refs"](t) }
	probes["engine.refs"] = func(t *testing.T) {
		ref := stateref.WholeRef(&ctxcv1.AgentState{AgentId: t.Name()}, nil) // each run its own reference
		st := &ctxcv1.AgentState{AgentId: "alice's"}
		first.refs.PutWhole(alice, "alice", ref, st, 100)
		for name, e := range map[string]*engine{"first": first, "second": second} {
			if r, ok, _ := e.refs.Get(bob, "bob", ref); ok {
				t.Errorf("bob resolved %v on the %s engine", r.State, name)
			}
		}
		second.refs.PutWhole(bob, "bob", ref, &ctxcv1.AgentState{AgentId: "bob's"}, 100)
		if r, ok, _ := second.refs.Get(alice, "alice", ref); !ok || r.State.GetAgentId() != "alice's" {
			t.Errorf("alice resolves %v, %v after bob's write, want hers", r.State, ok)
		}
	}
	for name, what := range kept {
		if !strings.HasPrefix(what, "per caller") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			probe, ok := probes[name]
			switch {
			case ok:
				probe(t)
			case !strings.Contains(what, " Test"):
				t.Errorf("%s is listed per caller with no probe here and no test named", name)
			}
		})
	}
}
