package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// MarkdownOptions tune WriteMarkdown.
type MarkdownOptions struct {
	// Verbose adds a table of every compile of every session and the
	// violations found.
	Verbose bool
	// Where says where the service ran ("in process" or an address), for the
	// latency table's title.
	Where string
}

// WriteMarkdown prints the sessions, the figures table (one row per profile
// and window; it depends only on the sessions and the service, so it is
// reproducible), then the latency table, which depends on the machine.
func WriteMarkdown(w io.Writer, res *Result, opts MarkdownOptions) error {
	p := &printer{w: w}
	writeSessions(p, res.Sessions)
	p.line("")
	p.text(FiguresTable(res))
	p.line("")
	where := opts.Where
	if where == "" {
		where = "in process"
	}
	p.line("Compile latency (%s), and the mean of the Route calls before each compile:", where)
	p.line("")
	p.line("| profile | window | mean ms | p95 ms | Route mean ms |")
	p.line("|---|---:|---:|---:|---:|")
	for _, r := range res.Rows {
		p.line("| %s | %s | %s | %s | %s |", r.Profile, thousands(int64(r.Window)), fixed(r.LatencyMeanMillis, 1), fixed(r.LatencyP95Millis, 1), fixed(r.RouteMeanMillis, 1))
	}
	for _, r := range res.Rows {
		if r.Failed == 0 {
			continue
		}
		p.line("")
		p.line("Refused, %s at %s (%d in all, first %d):", r.Profile, thousands(int64(r.Window)), r.Failed, len(r.Failures))
		for _, f := range r.Failures {
			p.line("- %s line %d (turn %d): %s: %s", f.Session, f.Line, f.Turn, f.Code, oneLine(f.Error))
		}
	}
	for _, r := range res.Rows {
		if len(r.Violations) == 0 {
			continue
		}
		p.line("")
		p.line("Violations, %s at %s (%d in all, first %d):", r.Profile, thousands(int64(r.Window)), r.ViolationCount, len(r.Violations))
		for _, v := range r.Violations {
			p.line("- %s line %d (turn %d): %s", v.Session, v.Line, v.Turn, v.Violation)
		}
	}
	if opts.Verbose {
		writeCompiles(p, res)
	}
	return p.err
}

// writeSessions prints the sessions' list.
func writeSessions(p *printer, sessions []SessionInfo) {
	p.line("Sessions:")
	p.line("")
	for _, s := range sessions {
		source := "listed in the session"
		if s.FactsFile != "" {
			source = "listed in " + s.FactsFile
		}
		if s.FactSource == SourceFound {
			source = fmt.Sprintf("found in the session: %d lines of failed tool results, %d user requirements, %d identifiers",
				s.FactKinds[FactErrorCode], s.FactKinds[FactConstraint], s.FactKinds[FactOther])
		}
		p.line("- %s: %d turns, %d messages, %s tokens; %d facts (%s)", s.ID, s.Turns, s.Messages, thousands(int64(s.LogTokens)), s.Facts, source)
	}
}

// FiguresTable is the Markdown table of the rows, without latencies.
func FiguresTable(res *Result) string {
	var b strings.Builder
	b.WriteString("| profile | window | compiles | valid | facts kept | facts kept (last) | window used (pressured) | window used (all) | cache prefix | append-only bound | prefix / bound | billed at full price | append-only billed | failed |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range res.Rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s (%d) | %s | %s | %s | %s | %s | %s | %s |\n",
			r.Profile, thousands(int64(r.Window)), r.Compiles, fixed(r.Valid, 2),
			fixed(r.FactsKept, 2), fixed(r.FactsKeptLast, 2),
			fixed(r.WindowUsedPressured, 2), r.PressuredCompiles, fixed(r.WindowUsed, 2),
			fixed(r.PrefixShare, 2), fixed(r.BoundShare, 2), fixed(r.PrefixVsBound, 2),
			thousands(r.BilledTokens), thousands(r.AppendOnlyBilledTokens), failed(r))
	}
	return b.String()
}

func writeCompiles(p *printer, res *Result) {
	type group struct {
		session, profile string
		window           uint32
	}
	var order []group
	by := map[group][]Compile{}
	for _, c := range res.Compiles {
		g := group{c.Session, c.Profile, c.Window}
		if _, ok := by[g]; !ok {
			order = append(order, g)
		}
		by[g] = append(by[g], c)
	}
	for _, g := range order {
		p.line("")
		p.line("%s, %s at %s:", g.session, g.profile, thousands(int64(g.window)))
		p.line("")
		p.line("| line | turn | messages | valid | facts kept | missing | used / usable | pressured | compacted | len | prefix | new | ms |")
		p.line("|---:|---:|---:|---|---:|---|---:|---|---|---:|---:|---:|---:|")
		for _, c := range by[g] {
			turn := strconv.Itoa(c.Turn)
			if c.AfterStep {
				turn += " (step)"
			}
			ms := strconv.FormatFloat(float64(c.LatencyMicros)/1000, 'f', 1, 64)
			if !c.OK() {
				// The whole message: it says why (for a refusal, what must be
				// kept and its size).
				p.line("| %d | %s | | failed: %s %s | | | | | | | | | %s |", c.Line, turn, c.Code, strings.ReplaceAll(oneLine(c.Error), "|", "\\|"), ms)
				continue
			}
			valid := "yes"
			if len(c.Violations) > 0 {
				var rules []string
				for _, v := range c.Violations {
					rules = append(rules, v.Rule)
				}
				valid = "no: " + strings.Join(rules, ", ")
			}
			prefix, fresh := strconv.Itoa(c.PrefixTokens), strconv.Itoa(c.NewTokens)
			if c.First {
				prefix, fresh = "—", "—"
			}
			p.line("| %d | %s | %d | %s | %d/%d | %s | %d / %d | %s | %s | %d | %s | %s | %s |",
				c.Line, turn, c.Messages, valid, c.FactsKept, c.FactsDue, strings.Join(c.Missing, " "),
				c.UsedTokens, c.UsableTokens, yesNo(c.Pressured), yesNo(c.Compacted), c.InputTokens, prefix, fresh, ms)
		}
	}
}

// WriteJSON prints the whole result as indented JSON.
func WriteJSON(w io.Writer, res *Result) error {
	return writeJSON(w, res)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) line(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format+"\n", args...)
	}
}

func (p *printer) text(s string) {
	if p.err == nil {
		_, p.err = io.WriteString(p.w, s)
	}
}

func fixed(v *float64, digits int) string {
	if v == nil {
		return "—"
	}
	return strconv.FormatFloat(*v, 'f', digits, 64)
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func failed(r Row) string {
	if r.Failed == 0 {
		return "0"
	}
	codes := make([]string, 0, len(r.FailedCodes))
	for c := range r.FailedCodes {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%s %d", c, r.FailedCodes[c])
	}
	return fmt.Sprintf("%d (%s)", r.Failed, strings.Join(parts, ", "))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// oneLine is s with its line breaks as spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
