package eval

import (
	"math"
	"sort"
)

// Result is a whole run: the sessions, one row per profile and window, and
// every compile.
type Result struct {
	Sessions []SessionInfo `json:"sessions"`
	Rows     []Row         `json:"rows"`
	Compiles []Compile     `json:"compiles"`
}

// maxListedViolations is how many violations a row lists, and
// maxListedFailures how many refused compiles.
const (
	maxListedViolations = 5
	maxListedFailures   = 5
)

// Row is the figures of one profile and window over every session; see the
// package doc for the exact definitions. A figure with nothing to average is
// nil (JSON null, "—" in the table).
type Row struct {
	Profile  string `json:"profile"`
	Window   uint32 `json:"window"`
	Sessions int    `json:"sessions"`
	Compiles int    `json:"compiles"`

	// Failed compiles (refused by the service), by gRPC code, and the first
	// few with their message (every one is in Result.Compiles). A failed
	// compile is not valid; it is left out of every other figure but time.
	Failed      int             `json:"failed"`
	FailedCodes map[string]int  `json:"failed_codes,omitempty"`
	Failures    []SampleFailure `json:"failures,omitempty"`

	// Valid is the share of all compiles that succeeded with no violation:
	// a refused compile lowers it as an invalid one does.
	Valid          *float64          `json:"valid"`
	ViolationCount int               `json:"violation_count"`
	Violations     []SampleViolation `json:"violations,omitempty"`

	// FactsKept is the mean over successful compiles (with a fact due) of the
	// share of due facts kept; FactsKeptLast the mean over sessions of that
	// share at the session's last successful compile.
	FactsKept     *float64 `json:"facts_kept"`
	FactsKeptLast *float64 `json:"facts_kept_last"`

	// WindowUsedPressured is the mean of used/usable over the pressured
	// compiles (PressuredCompiles of them); WindowUsed over all.
	WindowUsedPressured *float64 `json:"window_used_pressured"`
	PressuredCompiles   int      `json:"pressured_compiles"`
	WindowUsed          *float64 `json:"window_used"`

	// Cache figures, over the successful compiles after each session's first:
	// InputTokens = sum(len), PrefixTokens = sum(prefix), BoundTokens =
	// sum(len - new), NewTokens = sum(new).
	InputTokens  int64 `json:"input_tokens"`
	PrefixTokens int64 `json:"prefix_tokens"`
	BoundTokens  int64 `json:"bound_tokens"`
	NewTokens    int64 `json:"new_tokens"`
	// PrefixShare = PrefixTokens/InputTokens, BoundShare =
	// BoundTokens/InputTokens, PrefixVsBound = PrefixTokens/BoundTokens.
	PrefixShare   *float64 `json:"prefix_share"`
	BoundShare    *float64 `json:"bound_share"`
	PrefixVsBound *float64 `json:"prefix_vs_bound"`
	// BilledTokens = sum(len - prefix): input billed at full price.
	// AppendOnlyBilledTokens = sum(new): what an append-only compiler of the
	// same outputs would be billed at full price.
	BilledTokens           int64 `json:"billed_tokens"`
	AppendOnlyBilledTokens int64 `json:"append_only_billed_tokens"`

	// Compile latency over every compile, in milliseconds.
	LatencyMeanMillis *float64 `json:"latency_mean_ms"`
	LatencyP95Millis  *float64 `json:"latency_p95_ms"`
	// RouteMeanMillis is the mean over compiles of the Route calls that led
	// to each (Compile.RouteMicros).
	RouteMeanMillis *float64 `json:"route_mean_ms"`
}

// SampleFailure is a refused compile with where it happened: the gRPC code
// and the service's message.
type SampleFailure struct {
	Session string `json:"session"`
	Line    int    `json:"line"`
	Turn    int    `json:"turn"`
	Code    string `json:"code"`
	Error   string `json:"error"`
}

// SampleViolation is a violation with where it happened.
type SampleViolation struct {
	Session string `json:"session"`
	Line    int    `json:"line"`
	Turn    int    `json:"turn"`
	Violation
}

func ratio(num, den float64) *float64 {
	if den == 0 {
		return nil
	}
	v := num / den
	return &v
}

// aggregate computes the row of profile and window from the compiles.
func aggregate(profile string, window uint32, sessions []string, all []Compile) Row {
	row := Row{Profile: profile, Window: window, Sessions: len(sessions)}
	var valid, factsSum, factsN, usedSum, usedN, pressSum float64
	var latencies []float64
	var routed float64
	last := map[string]*Compile{}
	for i := range all {
		c := &all[i]
		if c.Profile != profile || c.Window != window {
			continue
		}
		row.Compiles++
		latencies = append(latencies, float64(c.LatencyMicros)/1000)
		routed += float64(c.RouteMicros) / 1000
		if !c.OK() {
			row.Failed++
			if row.FailedCodes == nil {
				row.FailedCodes = map[string]int{}
			}
			row.FailedCodes[c.Code]++
			if len(row.Failures) < maxListedFailures {
				row.Failures = append(row.Failures, SampleFailure{Session: c.Session, Line: c.Line, Turn: c.Turn, Code: c.Code, Error: c.Error})
			}
			continue
		}
		if len(c.Violations) == 0 {
			valid++
		}
		row.ViolationCount += len(c.Violations)
		for _, v := range c.Violations {
			if len(row.Violations) < maxListedViolations {
				row.Violations = append(row.Violations, SampleViolation{Session: c.Session, Line: c.Line, Turn: c.Turn, Violation: v})
			}
		}
		if c.FactsDue > 0 {
			factsSum += float64(c.FactsKept) / float64(c.FactsDue)
			factsN++
			last[c.Session] = c
		}
		if c.UsableTokens > 0 {
			share := float64(c.UsedTokens) / float64(c.UsableTokens)
			usedSum += share
			usedN++
			if c.Pressured {
				pressSum += share
				row.PressuredCompiles++
			}
		}
		if !c.First {
			row.InputTokens += int64(c.InputTokens)
			row.PrefixTokens += int64(c.PrefixTokens)
			row.BoundTokens += int64(c.InputTokens - c.NewTokens)
			row.NewTokens += int64(c.NewTokens)
			row.BilledTokens += int64(c.InputTokens - c.PrefixTokens)
		}
	}
	row.Valid = ratio(valid, float64(row.Compiles))
	row.FactsKept = ratio(factsSum, factsN)
	if len(last) > 0 {
		var sum float64
		for _, c := range last {
			sum += float64(c.FactsKept) / float64(c.FactsDue)
		}
		row.FactsKeptLast = ratio(sum, float64(len(last)))
	}
	row.WindowUsed = ratio(usedSum, usedN)
	row.WindowUsedPressured = ratio(pressSum, float64(row.PressuredCompiles))
	row.PrefixShare = ratio(float64(row.PrefixTokens), float64(row.InputTokens))
	row.BoundShare = ratio(float64(row.BoundTokens), float64(row.InputTokens))
	row.PrefixVsBound = ratio(float64(row.PrefixTokens), float64(row.BoundTokens))
	row.AppendOnlyBilledTokens = row.NewTokens
	if len(latencies) > 0 {
		var sum float64
		for _, l := range latencies {
			sum += l
		}
		row.LatencyMeanMillis = ratio(sum, float64(len(latencies)))
		row.RouteMeanMillis = ratio(routed, float64(len(latencies)))
		sort.Float64s(latencies)
		p95 := latencies[int(math.Ceil(0.95*float64(len(latencies))))-1]
		row.LatencyP95Millis = &p95
	}
	return row
}
