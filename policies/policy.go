package policies

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Stage is a pipeline stage kind. Stages run in the order of these constants;
// what each may do is described once, in the stage table (StageInfo).
type Stage uint8

// The stages, in their fixed order (docs/ARCHITECTURE.md, "Stages").
const (
	StageNormalize Stage = iota + 1
	StageProject
	StageIsolate
	StageEstimate
	StageBudget
	StagePlan
	StageDecide
	StageCompact
	StageRender
)

// StageInfo is what the catalog, the runner and the invariant checker know of
// a stage kind: none of them names a stage, each reads the columns. Adding a
// stage kind is its constant and row here and its package; the lists written
// for people (the stage table of docs/ARCHITECTURE.md, StageReport.stage in
// proto/ctxc/v1/compiler_service.proto) are checked against this table by
// tests (TestProtoListsTheStages, TestArchitectureStageTable).
type StageInfo struct {
	Stage Stage
	Name  string
	// Doc says what the stage's policies do, in one line.
	Doc string
	// First: a profile's first policy must be of this stage, so every later
	// stage sees a well-formed log.
	First bool
	// ReadOnly stages read the view and never change a message.
	ReadOnly bool
	// Counts: the stage counts every entry; from then on the runner counts
	// again each entry a step changes or adds.
	Counts bool
	// Measures: the stage computes the budget. The runner runs it again,
	// through the same step (span, report, check), whenever a later stage
	// changed what is sent, so decisions and the report see what is sent; the
	// Budget RPC stops after it.
	Measures bool
	// Decides: the stage's policy is the compaction trigger, evaluated by the
	// compaction schedule at every compaction point.
	Decides bool
	// Compacts: the stage's policies are compaction transforms, run in
	// profile order at compaction points towards a target.
	Compacts bool
	// Final stages produce output from the finished view; the Compact RPC
	// stops before them.
	Final bool
	// Places: the stage's policies place a Compile's attachments. A profile
	// without such a policy runs the configured attachment policy
	// (pipeline.Config.AttachmentPolicy) in the stage's place, in runs with
	// attachments, when it has the stage's Needs; else it refuses them.
	Places bool
	// Needs are the stages a profile must declare when it declares this one.
	Needs []Stage
}

var stageTable = [...]StageInfo{
	{Stage: StageNormalize, Name: "normalize", First: true, Doc: "repair the log's structure: role order, tool-call/result integrity, empty parts"},
	{Stage: StageProject, Name: "project", Doc: "apply persisted summaries and masks; the conversation or reasoning view"},
	{Stage: StageIsolate, Name: "isolate", Doc: "tool-trace isolation: transparent, boundary records, observation masking"},
	{Stage: StageEstimate, Name: "estimate", ReadOnly: true, Counts: true, Doc: "count every message: exact, anchored or estimated, and say which"},
	{Stage: StageBudget, Name: "budget", ReadOnly: true, Measures: true, Needs: []Stage{StageEstimate}, Doc: "the token budget: window, used, reserved output, soft threshold, remaining"},
	{Stage: StagePlan, Name: "plan", Places: true, Needs: []Stage{StageEstimate, StageBudget}, Doc: "place attached documents and large artifacts (LLM planner or deterministic plan)"},
	{Stage: StageDecide, Name: "decide", ReadOnly: true, Decides: true, Needs: []Stage{StageBudget}, Doc: "the trigger: whether to compact, and the target (low-water mark) to compact to"},
	{Stage: StageCompact, Name: "compact", Compacts: true, Needs: []Stage{StageEstimate, StageBudget}, Doc: "compaction transforms, cheapest and least lossy first, run at compaction points"},
	{Stage: StageRender, Name: "render", ReadOnly: true, Final: true, Doc: "the provider's request body (OpenAI, Anthropic, Gemini, Ollama)"},
}

// Stages returns the stage table in run order.
func Stages() []StageInfo { return stageTable[:] }

// Info returns the stage's row of the stage table.
func (s Stage) Info() StageInfo {
	if s >= 1 && int(s) <= len(stageTable) {
		return stageTable[s-1]
	}
	return StageInfo{Stage: s, Name: fmt.Sprintf("stage(%d)", uint8(s))}
}

func (s Stage) String() string { return s.Info().Name }

// StageOrder is the stage names in run order, joined for messages.
func StageOrder() string {
	names := make([]string, len(stageTable))
	for i, info := range stageTable {
		names[i] = info.Name
	}
	return strings.Join(names, ", ")
}

// Policy is one step of a pipeline. It changes the Work it is given. Policies
// hold no per-request state, so one instance serves concurrent requests.
type Policy interface {
	Apply(ctx context.Context, w *Work) error
}

// Trigger is what a decide-stage policy offers the compaction schedule: the
// runner evaluates it at every compaction point on the view up to that point,
// and again on the view a call compiles.
type Trigger interface {
	Evaluate(m Measure) Verdict
}

// Measure is the size of a view against its budget, as a trigger sees it.
type Measure struct {
	// Used is the view's used tokens, preamble included.
	Used int
	// Messages is the number of entries in the view.
	Messages int
	// Budget holds the window, the output reservation and the soft threshold
	// (its Used and Remaining are recomputed from Used).
	Budget agentstate.Budget
}

// Verdict is a trigger's answer for one Measure.
type Verdict struct {
	Fire bool
	// Reason says why it fired; empty when it did not (the schedule asks at
	// every compaction point of a log, and wants only the answer).
	Reason string
	// Point is the used-token count at which a token trigger fires, whether it
	// fired or not; 0 when the trigger is not a token count. The schedule edits
	// messages on intake to stay under it before it compacts anything older.
	Point int
	// Target is the used-token count compaction aims at when the trigger
	// fires: the low-water mark below Point.
	Target int
}

// Config is a policy's settings, decoded from a profile. Validate reports every
// problem at once (errors.Join).
type Config interface {
	Validate() error
}

// Factory builds a policy type. Type is the lower_snake_case id used in profiles.
type Factory interface {
	Type() string
	Stage() Stage
	// CreateDefaultConfig returns a pointer to the config with its defaults set;
	// profiles decode their settings over it.
	CreateDefaultConfig() Config
	// Create builds a policy from a validated config.
	Create(cfg Config) (Policy, error)
}

// TypedFactory is a Factory whose policies take a config of type P (a
// pointer to C): Create checks the config's type and validates it, naming
// the policy type in either error, so that a policy package states only its
// type, stage, defaults and constructor.
type TypedFactory[C any, P interface {
	*C
	Config
}] struct {
	Name     string
	In       Stage
	Defaults func() P
	// New builds the policy from a config of the right type that validated.
	New func(P) (Policy, error)
}

func (f TypedFactory[C, P]) Type() string                { return f.Name }
func (f TypedFactory[C, P]) Stage() Stage                { return f.In }
func (f TypedFactory[C, P]) CreateDefaultConfig() Config { return f.Defaults() }

// Create checks that cfg is a P and valid, then builds the policy.
func (f TypedFactory[C, P]) Create(cfg Config) (Policy, error) {
	c, ok := cfg.(P)
	if !ok || c == nil {
		return nil, fmt.Errorf("%s: config is %T, want %T", f.Name, cfg, f.Defaults())
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	return f.New(c)
}

// Registry holds the factories a server knows, by type. It is a value built once
// at start; there is no package-level registry.
type Registry struct {
	factories map[string]Factory
}

// NewRegistry builds a registry, rejecting duplicate or empty types.
func NewRegistry(factories ...Factory) (*Registry, error) {
	r := &Registry{factories: make(map[string]Factory, len(factories))}
	for _, f := range factories {
		t := f.Type()
		if t == "" {
			return nil, fmt.Errorf("factory for stage %s has an empty type", f.Stage())
		}
		if _, dup := r.factories[t]; dup {
			return nil, fmt.Errorf("policy type %q registered twice", t)
		}
		r.factories[t] = f
	}
	return r, nil
}

// Factory returns the factory of a type.
func (r *Registry) Factory(typ string) (Factory, bool) {
	f, ok := r.factories[typ]
	return f, ok
}

// Types lists the registered types, sorted.
func (r *Registry) Types() []string {
	out := make([]string, 0, len(r.factories))
	for t := range r.factories {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
