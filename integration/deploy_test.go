//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"gopkg.in/yaml.v3"

	"github.com/contextcompiler/ctxc/internal/docset"
	"github.com/contextcompiler/ctxc/internal/metrics"
)

// The monitoring files under deploy/.
const (
	rulesFile      = "deploy/prometheus/ctxc-rules.yaml"
	rulesTestFile  = "deploy/prometheus/ctxc-rules.test.yaml"
	prometheusFile = "deploy/prometheus/prometheus.yml"
	dashboardFile  = "deploy/grafana/ctxc.json"
)

// promtool runs Debian's promtool (package prometheus, in scripts/deps.sh).
func promtool(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(needProgram(t, "promtool", "make deps"), args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestAlertRulesWithPromtool checks the alert rules and the example
// Prometheus configuration with Prometheus's own tool, and runs the rules'
// unit tests: each alert fires on the series that should page and stays
// quiet on those that should not.
func TestAlertRulesWithPromtool(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(repoRoot, "deploy", "prometheus")
	promtool(t, dir, "check", "rules", filepath.Base(rulesFile))
	promtool(t, dir, "check", "config", filepath.Base(prometheusFile))
	promtool(t, dir, "test", "rules", filepath.Base(rulesTestFile))

	// Every alert has a unit test that expects it to fire.
	tested := map[string]bool{}
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string           `yaml:"alertname"`
				ExpAlerts []map[string]any `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	readYAML(t, rulesTestFile, &tests)
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				tested[a.Alertname] = true
			}
		}
	}
	for _, r := range alertRules(t) {
		if !tested[r.Alert] {
			t.Errorf("alert %s has no unit test in %s that expects it to fire", r.Alert, rulesTestFile)
		}
	}
}

// alertRule is one rule of the rules file.
type alertRule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

func alertRules(t *testing.T) []alertRule {
	t.Helper()
	var file struct {
		Groups []struct {
			Rules []alertRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	readYAML(t, rulesFile, &file)
	var out []alertRule
	for _, g := range file.Groups {
		out = append(out, g.Rules...)
	}
	if len(out) == 0 {
		t.Fatalf("%s has no rules", rulesFile)
	}
	return out
}

func readYAML(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// PromQL pieces that are not metric names, removed before names are read.
var (
	promqlStrings  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promqlMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promqlRanges   = regexp.MustCompile(`\[[^\]]*\]`)
	promqlGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promqlIdent    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	promqlKeywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "by": true, "without": true,
		"on": true, "ignoring": true, "group_left": true, "group_right": true, "inf": true, "nan": true, "atan2": true}
)

// promqlNames are the metric names an expression selects: the identifiers
// left once strings, label matchers, ranges and grouping clauses are gone
// that are not calls, keywords or parts of numbers. promtool has checked the
// expressions' syntax first.
func promqlNames(expr string) []string {
	s := promqlStrings.ReplaceAllString(expr, `""`)
	s = promqlMatchers.ReplaceAllString(s, " ")
	s = promqlRanges.ReplaceAllString(s, " ")
	s = promqlGrouping.ReplaceAllString(s, " ")
	var names []string
	for _, loc := range promqlIdent.FindAllStringIndex(s, -1) {
		word := s[loc[0]:loc[1]]
		if loc[0] > 0 && strings.ContainsRune("0123456789.", rune(s[loc[0]-1])) {
			continue // an exponent: 9e18
		}
		if strings.HasPrefix(strings.TrimLeft(s[loc[1]:], " \t\n"), "(") || promqlKeywords[strings.ToLower(word)] {
			continue
		}
		if !slices.Contains(names, word) {
			names = append(names, word)
		}
	}
	return names
}

func TestPromQLNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		want []string
	}{
		{`sum by (job) (rate(grpc_server_handled_total{grpc_code=~"Internal|Unknown"}[5m])) / sum by (job) (rate(grpc_server_handled_total[5m])) > 0.05`,
			[]string{"grpc_server_handled_total"}},
		{`histogram_quantile(0.99, sum by (le, grpc_method) (rate(grpc_server_handling_seconds_bucket{job=~"$job"}[$__rate_interval])))`,
			[]string{"grpc_server_handling_seconds_bucket"}},
		{`process_resident_memory_bytes / on (instance) group_left go_gc_gomemlimit_bytes < 9e18`, []string{"process_resident_memory_bytes", "go_gc_gomemlimit_bytes"}},
		{`max by (task) (avg_over_time(ctxc_helper_model_breaker_open[5m])) > 0.5 and on() vector(1)`, []string{"ctxc_helper_model_breaker_open"}},
		{`sum(x{a="b{c}"}) * 3600`, []string{"x"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, promqlNames(tt.expr)); diff != "" {
			t.Errorf("promqlNames(%q) (-want +got):\n%s", tt.expr, diff)
		}
	}
}

// checkNames reports every name the expressions select that the scrape
// does not have, by where it was found.
func checkNames(t *testing.T, sc *scrape, where string, exprs []string) map[string]bool {
	t.Helper()
	exposed := sc.names()
	used := map[string]bool{}
	for _, e := range exprs {
		for _, n := range promqlNames(e) {
			used[n] = true
			if !exposed[n] {
				t.Errorf("%s queries %s, which the server does not expose: %s", where, n, e)
			}
		}
	}
	return used
}

// checkRuleNames: the alert rules and their unit tests' series use only
// metric names the server exposes.
func checkRuleNames(t *testing.T, sc *scrape) {
	var exprs []string
	for _, r := range alertRules(t) {
		exprs = append(exprs, r.Expr)
	}
	checkNames(t, sc, rulesFile, exprs)
	var tests struct {
		Tests []struct {
			InputSeries []struct {
				Series string `yaml:"series"`
			} `yaml:"input_series"`
		} `yaml:"tests"`
	}
	readYAML(t, rulesTestFile, &tests)
	var series []string
	for _, tc := range tests.Tests {
		for _, s := range tc.InputSeries {
			series = append(series, s.Series)
		}
	}
	checkNames(t, sc, rulesTestFile, series)
}

// dashboard is what the test reads of the Grafana dashboard.
type dashboard struct {
	UID           string           `json:"uid"`
	Title         string           `json:"title"`
	SchemaVersion int              `json:"schemaVersion"`
	Panels        []dashboardPanel `json:"panels"`
	Templating    struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Definition string          `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

type dashboardPanel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	GridPos struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, dashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// grafanaVariables stand in for Grafana's own variables when promtool
// checks a panel's expression.
var grafanaVariables = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")

// checkDashboard: the dashboard is a well-formed Grafana dashboard on a
// Prometheus data source chosen by variable; every panel's expressions parse
// (promtool checks them as recording rules) and select only metrics the
// server exposes; and it shows what an operator needs: request rate, errors
// and latency by method, tokens saved, compaction, degradation, helper-model
// cost, cache hit ratios, memory and goroutines.
func checkDashboard(t *testing.T, sc *scrape) {
	d := readDashboard(t)
	if d.UID == "" || d.Title == "" || d.SchemaVersion == 0 || len(d.Panels) == 0 {
		t.Fatalf("%s: uid %q, title %q, schemaVersion %d, %d panels", dashboardFile, d.UID, d.Title, d.SchemaVersion, len(d.Panels))
	}
	var exprs []string
	ids := map[int]bool{}
	type cell struct{ x, y int }
	covered := map[cell]string{}
	for _, p := range d.Panels {
		where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		if ids[p.ID] {
			t.Errorf("%s: id used twice", where)
		}
		ids[p.ID] = true
		if p.Title == "" || p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("%s: no title or a grid position outside the 24 columns: %+v", where, p.GridPos)
		}
		overlap := ""
		for x := p.GridPos.X; x < p.GridPos.X+p.GridPos.W; x++ {
			for y := p.GridPos.Y; y < p.GridPos.Y+p.GridPos.H; y++ {
				if other, ok := covered[cell{x, y}]; ok && overlap == "" {
					overlap = other
				}
				covered[cell{x, y}] = where
			}
		}
		if overlap != "" {
			t.Errorf("%s overlaps %s", where, overlap)
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource.Type != "prometheus" || p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
			t.Errorf("%s: data source %+v, %d targets; want the ${datasource} variable's Prometheus", where, p.Datasource, len(p.Targets))
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if tg.Expr == "" || refs[tg.RefID] {
				t.Errorf("%s: target %q has no expression or a refId used twice", where, tg.RefID)
			}
			refs[tg.RefID] = true
			exprs = append(exprs, tg.Expr)
		}
	}

	// promtool parses each expression, as Prometheus would, in a rules file.
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rule
	for i, e := range exprs {
		rules = append(rules, rule{Record: fmt.Sprintf("dashboard:panel_expression_%d", i), Expr: grafanaVariables.Replace(e)})
	}
	data, err := yaml.Marshal(map[string]any{"groups": []map[string]any{{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dashboard-rules.yaml"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	promtool(t, dir, "check", "rules", "dashboard-rules.yaml")

	// Template variables' queries: label_values(<selector>, label).
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		sel, ok := strings.CutPrefix(v.Definition, "label_values(")
		if !ok {
			t.Errorf("variable %s: query %q is not label_values(...)", v.Name, v.Definition)
			continue
		}
		exprs = append(exprs, sel[:strings.LastIndexByte(sel, ',')])
	}
	used := checkNames(t, sc, dashboardFile, exprs)
	for _, need := range []string{
		"grpc_server_handled_total", "grpc_server_handling_seconds_bucket", // request rate, errors, latency
		"ctxc_context_input_tokens_sum", "ctxc_context_output_tokens_sum", // tokens saved
		"ctxc_compactions_total", "ctxc_stage_degraded_total", "ctxc_pipeline_runs_total", // compaction and degradation rates
		"ctxc_helper_model_cost_usd_total",                                   // helper-model cost
		"ctxc_summary_cache_lookups_total", "ctxc_token_cache_lookups_total", // cache hit ratios
		"process_resident_memory_bytes", "go_goroutines", // memory and goroutines
	} {
		if !used[need] {
			t.Errorf("the dashboard does not show %s", need)
		}
	}
}

// readmeSection is the text of the documentation's section (internal/docset:
// a guide's headings one level down, as README sections) that starts with
// heading, up to the next heading of its level or above (outside code blocks).
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	doc, err := docset.Read(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	data := doc.Text
	level := len(heading) - len(strings.TrimLeft(heading, "#"))
	var out []string
	in, fenced := false, false
	for _, line := range strings.Split(data, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(line, "#") {
			hashes := len(line) - len(strings.TrimLeft(line, "#"))
			switch {
			case line == heading:
				in = true
				continue
			case in && hashes <= level && strings.HasPrefix(line[hashes:], " "):
				return strings.Join(out, "\n")
			}
		}
		if in {
			out = append(out, line)
		}
	}
	if !in {
		t.Fatalf("the documentation has no section %q", heading)
	}
	return strings.Join(out, "\n")
}

// readmeMetric is one row of the README's metrics table.
type readmeMetric struct {
	Type   string
	Labels []string
}

var backticked = regexp.MustCompile("`([^`]+)`")

// checkReadmeMetrics: the README's metrics table lists every metric the
// server exposes (but the Go runtime's and the exporter's own) with its type
// and labels, and nothing else; the reason classes of degraded steps and the
// dashboard's panels are named there too.
func checkReadmeMetrics(t *testing.T, sc *scrape) {
	section := readmeSection(t, "## Metrics, dashboard and alerts")
	table := map[string]readmeMetric{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if !strings.HasPrefix(line, "| `") || len(cells) != 4 {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[0]), "`")
		m := readmeMetric{Type: strings.TrimSpace(cells[1])}
		for _, l := range backticked.FindAllStringSubmatch(cells[2], -1) {
			m.Labels = append(m.Labels, l[1])
		}
		sort.Strings(m.Labels)
		table[name] = m
	}
	exposed := map[string]readmeMetric{}
	for name, mf := range sc.families {
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") || strings.HasPrefix(name, "promhttp_") {
			continue
		}
		m := readmeMetric{Type: strings.ToLower(mf.GetType().String())}
		seen := map[string]bool{}
		for _, s := range mf.GetMetric() {
			for _, l := range s.GetLabel() {
				seen[l.GetName()] = true
			}
		}
		for l := range seen {
			m.Labels = append(m.Labels, l)
		}
		sort.Strings(m.Labels)
		exposed[name] = m
	}
	if diff := cmp.Diff(exposed, table); diff != "" {
		t.Errorf("README.md's metrics table differs from what the server exposes (-exposed +README):\n%s", diff)
	}
	if _, ok := sc.families["ctxc_stage_duration_seconds"]; !ok || sc.families["ctxc_stage_duration_seconds"].GetType() != dto.MetricType_HISTOGRAM {
		t.Error("ctxc_stage_duration_seconds is not an exposed histogram")
	}
	// The text wraps: compare with every run of white space as one space.
	prose := strings.Join(strings.Fields(section), " ")
	for _, class := range metrics.ReasonClasses() {
		if !strings.Contains(prose, "`"+class+"`") {
			t.Errorf("README.md does not name the degraded reason class %q", class)
		}
	}
	for _, p := range readDashboard(t).Panels {
		if !strings.Contains(prose, p.Title) {
			t.Errorf("README.md's dashboard description does not name the panel or row %q", p.Title)
		}
	}
}

// comparison is an alert expression's final comparison ("> 0.05").
var comparison = regexp.MustCompile(`([<>]=?|==|!=)\s*([0-9.e+]+)\s*$`)

// TestReadmeRunbooks: every alert has a runbook paragraph under a heading
// of its name, which its runbook_url points to, quoting its threshold and
// its duration as the rules file has them.
func TestReadmeRunbooks(t *testing.T) {
	t.Parallel()
	for _, r := range alertRules(t) {
		section := readmeSection(t, "#### "+r.Alert)
		if want := "docs/metrics.md#" + strings.ToLower(r.Alert); !strings.HasSuffix(r.Annotations["runbook_url"], want) {
			t.Errorf("%s: runbook_url %q does not end in %q", r.Alert, r.Annotations["runbook_url"], want)
		}
		m := comparison.FindStringSubmatch(strings.TrimSpace(r.Expr))
		if m == nil {
			t.Errorf("%s: no final comparison in %q", r.Alert, r.Expr)
			continue
		}
		for _, quote := range []string{"`" + m[1] + " " + m[2] + "`", "`" + r.For + "`"} {
			if !strings.Contains(section, quote) {
				t.Errorf("README.md's runbook of %s does not quote %s, as the rule has it", r.Alert, quote)
			}
		}
	}
}
