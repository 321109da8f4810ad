package pipeline

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.opentelemetry.io/otel/trace"
	"gopkg.in/yaml.v3"

	"github.com/contextcompiler/ctxc/internal/yamlkeys"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

//go:embed builtin.yaml
var builtinProfilesYAML []byte

// BuiltinSource is the ProfileInfo.Source of the built-in profiles.
const BuiltinSource = "builtin"

// DefaultProfileName serves requests that name no profile unless the config says otherwise.
const DefaultProfileName = "pragmatic"

// DefaultRecentTurns is the recency window of a profile that does not set one.
const DefaultRecentTurns = 1

// DefaultFitTargetRatio is the share of the usable window a profile without a
// trigger compacts to when the context does not fit.
const DefaultFitTargetRatio = 0.75

// ModelResolver turns a request's model into the model's facts and a counter.
type ModelResolver interface {
	Resolve(spec agentstate.ModelSpec) (agentstate.ModelInfo, agentstate.TokenCounter, error)
}

// Catalog holds every profile, validated and built once at start.
type Catalog struct {
	profiles    map[string]*profile
	names       []string
	defaultName string
	resolver    ModelResolver
	tracer      trace.Tracer
	schedules   *ScheduleCache
}

type profile struct {
	info  ProfileInfo
	steps []step
	// attaching are the steps of a run with attachments: steps itself when
	// the profile has a policy of the placing stage (the stage table's Places
	// column), steps with the placement policy in that stage's place
	// otherwise, nil when it cannot place them.
	attaching []step
	// trigger is the decide stage's trigger, nil when the profile has none:
	// the budget's should_compact is its verdict.
	trigger policies.Trigger
	// fingerprint names the profile with everything it was built from, for
	// the schedule cache's keys.
	fingerprint string
}

type step struct {
	stage  policies.Stage
	typ    string
	policy policies.Policy
	repair bool
	// inPlace: the policy edits messages in place and may run on intake.
	inPlace bool
	// tailDependent: what it changes depends on later messages.
	tailDependent bool
}

// BuiltinProfiles returns the built-in profile specs.
func BuiltinProfiles() ([]ProfileSpec, error) {
	var specs []ProfileSpec
	dec := yaml.NewDecoder(bytes.NewReader(builtinProfilesYAML))
	dec.KnownFields(true)
	if err := dec.Decode(&specs); err != nil {
		return nil, fmt.Errorf("built-in profiles: %w", err)
	}
	return specs, nil
}

// NewCatalog validates and builds the built-in and configured profiles. It
// reports every problem of every profile at once.
func NewCatalog(reg *policies.Registry, resolver ModelResolver, tp trace.TracerProvider, cfg Config) (*Catalog, error) {
	builtin, err := BuiltinProfiles()
	if err != nil {
		return nil, err
	}
	c := &Catalog{
		profiles:  make(map[string]*profile),
		resolver:  resolver,
		tracer:    tp.Tracer("github.com/contextcompiler/ctxc/internal/pipeline"),
		schedules: cfg.ScheduleCache,
	}
	var problems []error
	var placement policies.Factory
	if cfg.AttachmentPolicy != "" {
		f, ok := reg.Factory(cfg.AttachmentPolicy)
		if places := placingStage(); !ok || f.Stage() != places.Stage {
			problems = append(problems, fmt.Errorf("attachment policy %q is not a registered %s-stage policy", cfg.AttachmentPolicy, places.Name))
		} else {
			placement = f
		}
	}
	// declared holds every profile name given, built or not, so that a default
	// naming a broken profile is not reported a second time as unknown.
	declared := map[string]bool{}
	add := func(spec ProfileSpec, source, where string) {
		declared[spec.Name] = true
		p, err := buildProfile(reg, spec, source, placement)
		if err != nil {
			for _, e := range leaves(err) { // each problem names its profile
				problems = append(problems, fmt.Errorf("%s: %w", where, e))
			}
			return
		}
		if _, dup := c.profiles[spec.Name]; dup {
			problems = append(problems, fmt.Errorf("%s: profile %q is defined twice (built-in names: %s)", where, spec.Name, builtinNames(builtin)))
			return
		}
		c.profiles[spec.Name] = p
	}
	for i, spec := range builtin {
		add(spec, BuiltinSource, fmt.Sprintf("built-in profiles[%d] (%s)", i, spec.Name))
	}
	source := cfg.Source
	if source == "" {
		source = "config"
	}
	for i, spec := range cfg.Profiles {
		add(spec, source, fmt.Sprintf("profiles[%d] (%s)", i, spec.Name))
	}
	c.defaultName = cfg.DefaultProfile
	if c.defaultName == "" {
		c.defaultName = DefaultProfileName
	}
	if !declared[c.defaultName] {
		names := make([]string, 0, len(declared))
		for name := range declared {
			names = append(names, name)
		}
		sort.Strings(names)
		problems = append(problems, fmt.Errorf("default_profile: %q is not a profile (known: %s)", c.defaultName, strings.Join(names, ", ")))
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	for name, p := range c.profiles {
		c.names = append(c.names, name)
		p.info.Default = name == c.defaultName
	}
	sort.Strings(c.names)
	return c, nil
}

// builtinNames lists the built-in profiles' names, in their file's order.
func builtinNames(specs []ProfileSpec) string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

func buildProfile(reg *policies.Registry, spec ProfileSpec, source string, placement policies.Factory) (*profile, error) {
	var problems []error
	if spec.Name == "" {
		problems = append(problems, errors.New("name: required"))
	} else if strings.TrimSpace(spec.Name) != spec.Name || strings.ContainsAny(spec.Name, " \t\n") {
		problems = append(problems, fmt.Errorf("name: %q must not contain white space", spec.Name))
	}
	recent := DefaultRecentTurns
	if spec.RecentTurns != nil {
		recent = *spec.RecentTurns
		if recent < 0 {
			problems = append(problems, fmt.Errorf("recent_turns: %d must not be negative", recent))
		}
	}
	if len(spec.Stages) == 0 {
		problems = append(problems, errors.New("stages: at least one policy is required"))
	}
	fit := DefaultFitTargetRatio
	if spec.FitTargetRatio != nil {
		fit = *spec.FitTargetRatio
		if !(fit > 0 && fit <= 1) {
			problems = append(problems, fmt.Errorf("fit_target_ratio: %v must be in (0, 1]", fit))
		}
	}
	p := &profile{info: ProfileInfo{Name: spec.Name, Description: spec.Description, Source: source, RecentTurns: recent, FitTargetRatio: fit,
		BoundedLog: spec.BoundedLog, CompactOnExecutionEnd: spec.CompactOnExecutionEnd, CompactOnExecutionError: spec.CompactOnExecutionError}}
	var last policies.Stage
	declared := map[policies.Stage]bool{}
	for i, s := range spec.Stages {
		where := fmt.Sprintf("stages[%d] (%s)", i, s.Policy)
		f, ok := reg.Factory(s.Policy)
		if !ok {
			problems = append(problems, fmt.Errorf("%s: unknown policy %q (known: %s)", where, s.Policy, strings.Join(reg.Types(), ", ")))
			continue
		}
		declared[f.Stage()] = true
		if f.Stage() < last {
			problems = append(problems, fmt.Errorf("%s: stage %s cannot follow stage %s (order: %s)", where, f.Stage(), last, policies.StageOrder()))
		}
		last = f.Stage()
		if first := stageWith(func(st policies.StageInfo) bool { return st.First }); i == 0 && f.Stage() != first.Stage {
			problems = append(problems, fmt.Errorf("%s: the first policy must be a %s-stage policy, so every later stage sees a well-formed log", where, first.Name))
		}
		cfg := f.CreateDefaultConfig()
		if !s.Settings.IsZero() {
			if err := yamlkeys.Decode(&s.Settings, cfg, "settings"); err != nil {
				// Each problem names its line of the file and its key.
				for _, e := range leaves(err) {
					problems = append(problems, fmt.Errorf("%s: %w", where, e))
				}
				continue
			}
		}
		if err := cfg.Validate(); err != nil {
			for _, e := range leaves(err) { // each problem names its place
				problems = append(problems, fmt.Errorf("%s: settings: %w", where, e))
			}
			continue
		}
		pol, err := f.Create(cfg)
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", where, err))
			continue
		}
		settings, err := json.Marshal(cfg)
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: settings do not encode as JSON: %w", where, err))
			continue
		}
		_, isRepair := pol.(policies.RepairPass)
		_, inPlace := pol.(policies.InPlaceEdit)
		tail, ok := pol.(policies.TailDependent)
		p.steps = append(p.steps, step{stage: f.Stage(), typ: f.Type(), policy: pol, repair: isRepair, inPlace: inPlace,
			tailDependent: ok && tail.TailDependent()})
		p.info.Stages = append(p.info.Stages, StepInfo{Stage: f.Stage().String(), Policy: f.Type(), SettingsJSON: string(settings)})
	}
	for _, st := range policies.Stages() {
		if err := requireStage(declared, st.Stage, st.Needs...); err != nil {
			problems = append(problems, err)
		}
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	fp, _ := json.Marshal(p.info)
	p.fingerprint = string(fp)
	for _, s := range p.steps {
		if t, ok := s.policy.(policies.Trigger); ok && s.stage.Info().Decides {
			p.trigger = t
		}
	}
	if err := p.placeAttachments(placement, declared); err != nil {
		return nil, err
	}
	return p, nil
}

// placeAttachments sets how the profile places a Compile's attachments: by
// its own policy of the placing stage, else by the placement policy in that
// stage's place when the profile has the stage's Needs, else not at all.
func (p *profile) placeAttachments(placement policies.Factory, declared map[policies.Stage]bool) error {
	places := placingStage()
	for _, s := range p.steps {
		if s.stage == places.Stage {
			p.attaching, p.info.AttachmentPolicy = p.steps, s.typ
			return nil
		}
	}
	if placement == nil {
		return nil
	}
	for _, n := range places.Needs {
		if !declared[n] {
			return nil
		}
	}
	pol, err := placement.Create(placement.CreateDefaultConfig())
	if err != nil {
		return fmt.Errorf("attachment policy: %w", err)
	}
	at := len(p.steps)
	for i, s := range p.steps {
		if s.stage > places.Stage {
			at = i
			break
		}
	}
	p.attaching = slices.Insert(slices.Clone(p.steps), at, step{stage: places.Stage, typ: placement.Type(), policy: pol})
	p.info.AttachmentPolicy = placement.Type()
	return nil
}

// stageWith is the first row of the stage table, in run order, whose column
// is set (TestStageTable: one row sets each column the catalog reads).
func stageWith(column func(policies.StageInfo) bool) policies.StageInfo {
	for _, st := range policies.Stages() {
		if column(st) {
			return st
		}
	}
	return policies.StageInfo{}
}

// placingStage is the stage whose policies place a Compile's attachments.
func placingStage() policies.StageInfo {
	return stageWith(func(st policies.StageInfo) bool { return st.Places })
}

// stageNames joins the stages' names with "and".
func stageNames(stages []policies.Stage) string {
	names := make([]string, len(stages))
	for i, s := range stages {
		names[i] = s.String()
	}
	return strings.Join(names, " and ")
}

// requireStage checks that a profile with a `user` stage also has every
// `needs` stage (the stage table's Needs).
func requireStage(has map[policies.Stage]bool, user policies.Stage, needs ...policies.Stage) error {
	if !has[user] {
		return nil
	}
	var missing []policies.Stage
	for _, n := range needs {
		if !has[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("stages: a %s policy needs %s policies before it", user, stageNames(missing))
	}
	return nil
}

// leaves splits joined errors into the errors joined.
func leaves(err error) []error {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		return joined.Unwrap()
	}
	return []error{err}
}

// DefaultProfile names the profile that serves requests with no profile.
func (c *Catalog) DefaultProfile() string { return c.defaultName }

// Names lists the profile names, sorted.
func (c *Catalog) Names() []string { return append([]string(nil), c.names...) }

// Profiles describes every profile, sorted by name.
func (c *Catalog) Profiles() []ProfileInfo {
	out := make([]ProfileInfo, 0, len(c.names))
	for _, n := range c.names {
		out = append(out, c.profiles[n].info)
	}
	return out
}

// Profile describes one profile; "" is the default.
func (c *Catalog) Profile(name string) (ProfileInfo, error) {
	p, err := c.lookup(name)
	if err != nil {
		return ProfileInfo{}, err
	}
	return p.info, nil
}

// forRun finds the profile of a run: the one named, with the steps that
// place attachments when the run has some. A profile that cannot place them
// refuses them rather than drop them.
func (c *Catalog) forRun(req Request) (*profile, error) {
	p, err := c.lookup(req.Profile)
	if err != nil || len(req.Attachments) == 0 {
		return p, err
	}
	if p.attaching == nil {
		places := placingStage()
		return nil, &agentstate.InvalidArgumentError{Reason: ReasonAttachmentsUnsupported, Violations: []agentstate.FieldViolation{{Field: "attachments",
			Description: fmt.Sprintf("profile %q cannot place attachments: it has no %s stage, nor the %s stages placing them needs; use a profile that has them (every built-in profile does)", p.info.Name, places.Name, stageNames(places.Needs))}}}
	}
	return &profile{info: p.info, steps: p.attaching, attaching: p.attaching, trigger: p.trigger, fingerprint: p.fingerprint}, nil
}

// ReasonAttachmentsUnsupported is a Compile with attachments under a profile
// that cannot place them.
const ReasonAttachmentsUnsupported = "ATTACHMENTS_UNSUPPORTED"

// lookup finds a profile by name; "" is the default.
func (c *Catalog) lookup(name string) (*profile, error) {
	if name == "" {
		name = c.defaultName
	}
	p, ok := c.profiles[name]
	if !ok {
		return nil, &agentstate.UnknownProfileError{Name: name, Known: c.Names()}
	}
	return p, nil
}
