package eval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"
)

// The acceptance of a window sweep (Sweep): from each window to the next
// smaller one, a session's facts kept may rise by at most SweepNoise and fall
// by at most SweepMaxStep (shares of the facts due, mean over compiles).
const (
	SweepNoise   = 0.02
	SweepMaxStep = 0.15
)

// sweepEpsilon absorbs the rounding of the shares compared with the limits.
const sweepEpsilon = 1e-9

// DefaultSweepWindows are the windows `ctxc eval --sweep` measures unless told.
var DefaultSweepWindows = []uint32{64_000, 48_000, 32_000, 24_000, 16_000, 12_000, 10_000, 8_000, 6_000, 5_000, 4_000}

// The checks of a sweep; see Sweep.
const (
	// SweepRose: facts kept rose by more than SweepNoise as the window shrank.
	SweepRose = "rose"
	// SweepCliff: facts kept fell by more than SweepMaxStep in one step.
	SweepCliff = "cliff"
	// SweepRefusedAboveFloor: a compile was refused although what it must
	// keep fits its usable window.
	SweepRefusedAboveFloor = "refused_above_floor"
	// SweepRefusedAboveUnrefused: a window refused compiles while a smaller
	// one refused none.
	SweepRefusedAboveUnrefused = "refused_above_unrefused"
)

// SweepOptions choose what a sweep measures.
type SweepOptions struct {
	// Profiles to measure; required.
	Profiles []string
	// Windows, in any order (at least one); measured from the largest down.
	Windows []uint32
	// RouteProfile and EveryStep are Options'.
	RouteProfile string
	EveryStep    bool
	// Now reads the clock for Compile latencies; time.Now when nil.
	Now func() time.Time
}

// SweepResult is a whole sweep.
type SweepResult struct {
	Sessions []SessionInfo `json:"sessions"`
	// Windows are the windows measured, largest first.
	Windows []uint32 `json:"windows"`
	// Rows: one per profile and window over every session.
	Rows []SweepRow `json:"rows"`
	// Points: one per session, profile and window (session by session,
	// then profile by profile, largest window first).
	Points []SweepPoint `json:"points"`
	// Floors: one per session and profile.
	Floors []SweepFloor `json:"floors"`
	// Violations of the acceptance; empty (not null) when the service
	// degrades by steps.
	Violations []SweepViolation `json:"violations"`
	// Compiles is every compile, as Result's.
	Compiles []Compile `json:"compiles"`
}

// SweepPoint is one session through one profile at one window.
type SweepPoint struct {
	Session string `json:"session"`
	Profile string `json:"profile"`
	Window  uint32 `json:"window"`

	Compiles int `json:"compiles"`
	// Refused is the compiles the service refused; RefusedAboveFloor those
	// of them whose MustKeepTokens fit their usable window.
	Refused           int `json:"refused"`
	RefusedAboveFloor int `json:"refused_above_floor"`
	// Valid, FactsKept and FactsKeptLast are Row's, for this session alone.
	Valid         *float64 `json:"valid"`
	FactsKept     *float64 `json:"facts_kept"`
	FactsKeptLast *float64 `json:"facts_kept_last"`
	// MustKeepTokens is the largest Compile.MustKeepTokens of the session's
	// compiles; UsableTokens the smallest usable window they had.
	MustKeepTokens int `json:"must_keep_tokens"`
	UsableTokens   int `json:"usable_tokens"`
	// Step and StepLast are what FactsKept and FactsKeptLast lost from the
	// next larger window of the sweep to this one (negative: they rose). Nil
	// at the largest window, and when either window refused a compile (facts
	// kept are then over fewer compiles; the refusals have their own check)
	// or has no figure.
	Step     *float64 `json:"step"`
	StepLast *float64 `json:"step_last"`
}

// SweepFloor is where a session stops fitting a profile's windows.
type SweepFloor struct {
	Session string `json:"session"`
	Profile string `json:"profile"`
	// Floor is the smallest window of the sweep at which what every compile
	// must keep (Compile.MustKeepTokens) fits its usable window, and every
	// larger window too; 0 when it fits at none. Below it refusals are
	// expected; at it and above, none is.
	Floor uint32 `json:"floor"`
	// MustKeepTokens is the most any compile of the session must keep.
	MustKeepTokens int `json:"must_keep_tokens"`
	// FirstRefused is the largest window with a refused compile; 0 when
	// none was refused.
	FirstRefused uint32 `json:"first_refused"`
}

// SweepRow is one profile and window over every session.
type SweepRow struct {
	Profile  string `json:"profile"`
	Window   uint32 `json:"window"`
	Sessions int    `json:"sessions"`
	Compiles int    `json:"compiles"`
	// Refused and RefusedAboveFloor sum the points'; BelowFloor counts the
	// sessions for which this window is below the floor.
	Refused           int `json:"refused"`
	RefusedAboveFloor int `json:"refused_above_floor"`
	BelowFloor        int `json:"below_floor"`
	// FactsKept and FactsKeptLast are Row's over every session.
	FactsKept     *float64 `json:"facts_kept"`
	FactsKeptLast *float64 `json:"facts_kept_last"`
	// WorstStep is the largest SweepPoint.Step of the sessions, in the
	// session WorstStepSession; WorstStepLast the same of StepLast.
	WorstStep            *float64 `json:"worst_step"`
	WorstStepSession     string   `json:"worst_step_session,omitempty"`
	WorstStepLast        *float64 `json:"worst_step_last"`
	WorstStepLastSession string   `json:"worst_step_last_session,omitempty"`
}

// SweepViolation is one check a session failed.
type SweepViolation struct {
	Session string `json:"session"`
	Profile string `json:"profile"`
	// Window is the smaller window of a step, or the window of a refusal;
	// From the larger window of a step, or for SweepRefusedAboveUnrefused
	// the smaller window that refused none.
	Window uint32 `json:"window"`
	From   uint32 `json:"from,omitempty"`
	// Check is SweepRose, SweepCliff, SweepRefusedAboveFloor or
	// SweepRefusedAboveUnrefused.
	Check  string `json:"check"`
	Detail string `json:"detail"`
	// For a cliff: the facts that compiles at Window left out and the same
	// compiles at From kept (LostFacts distinct facts, by kind, the texts
	// of the first few in LostExamples).
	LostFacts    int              `json:"lost_facts,omitempty"`
	LostKinds    map[FactKind]int `json:"lost_kinds,omitempty"`
	LostExamples []string         `json:"lost_examples,omitempty"`
}

func (v SweepViolation) String() string {
	return fmt.Sprintf("%s, %s, %s: %s", v.Session, v.Profile, v.Check, v.Detail)
}

// maxLostExamples is how many lost facts a cliff names.
const maxLostExamples = 5

// Sweep replays every session through every profile at every window, as Run
// does (so the figures of a window are Run's), from the largest window down,
// and checks that the service degrades by steps, never by a cliff. For each
// session and profile, from each window to the next smaller one (a step):
//
//   - facts kept (the mean over the session's compiles) rise by at most
//     SweepNoise (SweepRose) and fall by at most SweepMaxStep (SweepCliff),
//     both in shares of the facts due; a step is checked when neither window
//     refused a compile;
//   - no compile is refused above the floor: every refused compile must keep
//     more than its usable window holds (SweepRefusedAboveFloor), what it
//     must keep being what the validity rules require verbatim, measured by
//     eval (Compile.MustKeepTokens), and the usable window the Budget RPC's
//     context window minus reserved output;
//   - a window refuses compiles only when every smaller window does too
//     (SweepRefusedAboveUnrefused): refusals start at one window and go on
//     below it.
//
// Facts kept at the last compile are measured and their steps reported, not
// checked. It fails only as Run does.
func Sweep(ctx context.Context, svc Service, sessions []*Session, opts SweepOptions) (*SweepResult, error) {
	if len(opts.Windows) == 0 {
		return nil, errors.New("eval: a sweep needs at least one window")
	}
	windows := slices.Clone(opts.Windows)
	sort.Slice(windows, func(i, j int) bool { return windows[i] > windows[j] })
	windows = slices.Compact(windows)
	run, err := Run(ctx, svc, sessions, Options{Profiles: opts.Profiles, Windows: windows, RouteProfile: opts.RouteProfile, EveryStep: opts.EveryStep, Now: opts.Now, mustKeep: true})
	if err != nil {
		return nil, err
	}
	res := &SweepResult{Sessions: run.Sessions, Windows: windows, Compiles: run.Compiles, Violations: []SweepViolation{}}

	type key struct {
		session, profile string
		window           uint32
	}
	by := map[key][]Compile{}
	for _, c := range run.Compiles {
		k := key{c.Session, c.Profile, c.Window}
		by[k] = append(by[k], c)
	}
	points := map[key]*SweepPoint{}
	for _, s := range sessions {
		id := s.Header.ID
		facts := s.Header.Facts
		if len(facts) == 0 {
			facts = autoFacts(s)
		}
		byID := make(map[string]Fact, len(facts))
		for _, f := range facts {
			byID[f.ID] = f
		}
		for _, p := range opts.Profiles {
			floor := SweepFloor{Session: id, Profile: p}
			fits := true
			var line []*SweepPoint
			for _, w := range windows {
				compiles := by[key{id, p, w}]
				row := aggregate(p, w, []string{id}, compiles)
				pt := &SweepPoint{Session: id, Profile: p, Window: w, Compiles: row.Compiles, Refused: row.Failed,
					Valid: row.Valid, FactsKept: row.FactsKept, FactsKeptLast: row.FactsKeptLast}
				var firstAbove *Compile
				for i := range compiles {
					c := &compiles[i]
					pt.MustKeepTokens = max(pt.MustKeepTokens, c.MustKeepTokens)
					if pt.UsableTokens == 0 || c.UsableTokens < pt.UsableTokens {
						pt.UsableTokens = c.UsableTokens
					}
					if c.MustKeepTokens > c.UsableTokens {
						fits = false
					}
					if !c.OK() && c.MustKeepTokens <= c.UsableTokens {
						pt.RefusedAboveFloor++
						if firstAbove == nil {
							firstAbove = c
						}
					}
				}
				floor.MustKeepTokens = max(floor.MustKeepTokens, pt.MustKeepTokens)
				if fits {
					floor.Floor = w
				}
				if pt.Refused > 0 && floor.FirstRefused == 0 {
					floor.FirstRefused = w
				}
				if firstAbove != nil {
					res.Violations = append(res.Violations, SweepViolation{Session: id, Profile: p, Window: w, Check: SweepRefusedAboveFloor,
						Detail: fmt.Sprintf("at %s, %d of %d compiles refused although what each must keep fits the usable window; the first, line %d (turn %d), must keep %s tokens of %s usable: %s: %s",
							thousands(int64(w)), pt.RefusedAboveFloor, pt.Compiles, firstAbove.Line, firstAbove.Turn,
							thousands(int64(firstAbove.MustKeepTokens)), thousands(int64(firstAbove.UsableTokens)), firstAbove.Code, oneLine(firstAbove.Error))})
				}
				if n := len(line); n > 0 {
					prev := line[n-1]
					if prev.Refused == 0 && pt.Refused == 0 {
						pt.Step = diff(prev.FactsKept, pt.FactsKept)
						pt.StepLast = diff(prev.FactsKeptLast, pt.FactsKeptLast)
					}
					if pt.Step != nil {
						switch {
						case -*pt.Step > SweepNoise+sweepEpsilon:
							res.Violations = append(res.Violations, SweepViolation{Session: id, Profile: p, Window: w, From: prev.Window, Check: SweepRose,
								Detail: fmt.Sprintf("facts kept rose by %.3f from %s to %s (%.3f -> %.3f), more than the %.2f of noise",
									-*pt.Step, thousands(int64(prev.Window)), thousands(int64(w)), *prev.FactsKept, *pt.FactsKept, SweepNoise)})
						case *pt.Step > SweepMaxStep+sweepEpsilon:
							v := SweepViolation{Session: id, Profile: p, Window: w, From: prev.Window, Check: SweepCliff}
							lostFacts(&v, by[key{id, p, prev.Window}], compiles, byID)
							v.Detail = fmt.Sprintf("facts kept fell by %.3f from %s to %s (%.3f -> %.3f), more than %.2f; %d facts left out that the same compiles kept at %s (%s)",
								*pt.Step, thousands(int64(prev.Window)), thousands(int64(w)), *prev.FactsKept, *pt.FactsKept, SweepMaxStep,
								v.LostFacts, thousands(int64(prev.Window)), kindCounts(v.LostKinds))
							res.Violations = append(res.Violations, v)
						}
					}
				}
				line = append(line, pt)
				points[key{id, p, w}] = pt
				res.Points = append(res.Points, *pt)
			}
			for i, pt := range line {
				if pt.Refused == 0 {
					continue
				}
				for _, below := range line[i+1:] {
					if below.Refused == 0 {
						res.Violations = append(res.Violations, SweepViolation{Session: id, Profile: p, Window: pt.Window, From: below.Window, Check: SweepRefusedAboveUnrefused,
							Detail: fmt.Sprintf("%d of %d compiles refused at %s, none at the smaller %s", pt.Refused, pt.Compiles, thousands(int64(pt.Window)), thousands(int64(below.Window)))})
						break
					}
				}
			}
			res.Floors = append(res.Floors, floor)
		}
	}
	floors := map[[2]string]SweepFloor{}
	for _, f := range res.Floors {
		floors[[2]string{f.Session, f.Profile}] = f
	}
	for _, r := range run.Rows {
		row := SweepRow{Profile: r.Profile, Window: r.Window, Sessions: r.Sessions, Compiles: r.Compiles, Refused: r.Failed,
			FactsKept: r.FactsKept, FactsKeptLast: r.FactsKeptLast}
		for _, s := range sessions {
			id := s.Header.ID
			pt := points[key{id, r.Profile, r.Window}]
			row.RefusedAboveFloor += pt.RefusedAboveFloor
			if r.Window < floors[[2]string{id, r.Profile}].Floor || floors[[2]string{id, r.Profile}].Floor == 0 {
				row.BelowFloor++
			}
			if pt.Step != nil && (row.WorstStep == nil || *pt.Step > *row.WorstStep) {
				row.WorstStep, row.WorstStepSession = pt.Step, id
			}
			if pt.StepLast != nil && (row.WorstStepLast == nil || *pt.StepLast > *row.WorstStepLast) {
				row.WorstStepLast, row.WorstStepLastSession = pt.StepLast, id
			}
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// diff is *a - *b, nil when either is.
func diff(a, b *float64) *float64 {
	if a == nil || b == nil {
		return nil
	}
	d := *a - *b
	return &d
}

// lostFacts fills v with the facts the compiles at the smaller window left
// out and the same compiles (by line) at the larger one kept; the examples
// are their texts.
func lostFacts(v *SweepViolation, larger, smaller []Compile, facts map[string]Fact) {
	missedBefore := map[int]map[string]bool{}
	for _, c := range larger {
		if !c.OK() {
			continue
		}
		m := map[string]bool{}
		for _, id := range c.Missing {
			m[id] = true
		}
		missedBefore[c.Line] = m
	}
	lost := map[string]bool{}
	for _, c := range smaller {
		before, ok := missedBefore[c.Line]
		if !c.OK() || !ok {
			continue
		}
		for _, id := range c.Missing {
			if !before[id] && !lost[id] {
				lost[id] = true
				if v.LostKinds == nil {
					v.LostKinds = map[FactKind]int{}
				}
				v.LostKinds[facts[id].Kind]++
				if len(v.LostExamples) < maxLostExamples {
					v.LostExamples = append(v.LostExamples, clip(Collapse(facts[id].Text)))
				}
			}
		}
	}
	v.LostFacts = len(lost)
}

// kindCounts is "error_code 8, constraint 2", the largest first.
func kindCounts(kinds map[FactKind]int) string {
	if len(kinds) == 0 {
		return "none"
	}
	names := make([]FactKind, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if kinds[names[i]] != kinds[names[j]] {
			return kinds[names[i]] > kinds[names[j]]
		}
		return names[i] < names[j]
	})
	out := ""
	for i, k := range names {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%s %d", k, kinds[k])
	}
	return out
}
