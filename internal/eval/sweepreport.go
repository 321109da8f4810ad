package eval

import (
	"fmt"
	"io"
	"strings"
)

// WriteSweepMarkdown prints a sweep: the sessions, the table of every
// profile and window over them (SweepTable), the floors inside the sweep,
// and the checks with every violation; verbose adds each session's figures
// at each window.
func WriteSweepMarkdown(w io.Writer, res *SweepResult, verbose bool) error {
	p := &printer{w: w}
	writeSessions(p, res.Sessions)
	p.line("")
	if n := len(res.Windows); n > 0 {
		p.line("Windows from %s down to %s, each compared with the next larger one.", thousands(int64(res.Windows[0])), thousands(int64(res.Windows[n-1])))
		p.line("")
	}
	p.text(SweepTable(res))

	p.line("")
	var inside []SweepFloor
	for _, f := range res.Floors {
		if len(res.Windows) > 0 && (f.Floor != res.Windows[len(res.Windows)-1] || f.FirstRefused != 0) {
			inside = append(inside, f)
		}
	}
	if len(res.Windows) > 0 {
		p.line("Floors (the smallest window at which what every compile must keep fits the usable window: system prompt, tools, first task, pinned messages, newest turn):")
		p.line("")
		for _, f := range inside {
			floor := "none of the windows"
			if f.Floor != 0 {
				floor = thousands(int64(f.Floor))
			}
			refused := "none refused"
			if f.FirstRefused != 0 {
				refused = "refused from " + thousands(int64(f.FirstRefused)) + " down"
			}
			p.line("- %s, %s: %s (must keep up to %s tokens); %s", f.Session, f.Profile, floor, thousands(int64(f.MustKeepTokens)), refused)
		}
		smallest := thousands(int64(res.Windows[len(res.Windows)-1]))
		switch rest := len(res.Floors) - len(inside); {
		case rest > 0 && len(inside) == 0:
			p.line("- Every session and profile fits every window down to %s, and none was refused.", smallest)
		case rest > 0:
			p.line("- The %d other session and profile pairs fit every window down to %s, and none was refused.", rest, smallest)
		}
		p.line("")
	}

	p.line("Checks, per session and profile: from each window to the next smaller one facts kept rise by at most %.2f and fall by at most %.2f; no compile is refused where what it must keep fits; refusals, once they start, go on at every smaller window.", SweepNoise, SweepMaxStep)
	p.line("")
	if len(res.Violations) == 0 {
		p.line("No violation.")
	} else {
		p.line("Violations (%d):", len(res.Violations))
		p.line("")
		for _, v := range res.Violations {
			line := "- " + v.String()
			if len(v.LostExamples) > 0 {
				line += "; among them: " + strings.Join(quoteAll(v.LostExamples), ", ")
			}
			p.line("%s", line)
		}
	}

	if verbose {
		p.line("")
		p.line("| session | profile | window | compiles | refused | valid | facts kept | facts kept (last) | step | step (last) | must keep | usable |")
		p.line("|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
		for _, pt := range res.Points {
			p.line("| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |", pt.Session, pt.Profile, thousands(int64(pt.Window)), pt.Compiles,
				refusedCell(pt.Refused, pt.RefusedAboveFloor), fixed(pt.Valid, 2), fixed(pt.FactsKept, 2), fixed(pt.FactsKeptLast, 2),
				fixed(pt.Step, 2), fixed(pt.StepLast, 2), thousands(int64(pt.MustKeepTokens)), thousands(int64(pt.UsableTokens)))
		}
	}
	return p.err
}

// SweepTable is the Markdown table of a sweep's rows: per profile and
// window over every session, the compiles, those refused (and how many of
// them above the floor), facts kept (mean over compiles, and at the last
// compile), the worst step of any session from the next larger window (what
// facts kept lost; negative, what they gained) with its session, and the
// sessions for which the window is below the floor.
func SweepTable(res *SweepResult) string {
	var b strings.Builder
	b.WriteString("| profile | window | compiles | refused | facts kept | facts kept (last) | worst step | worst step (last) | below the floor |\n")
	b.WriteString("|---|---:|---:|---|---:|---:|---:|---:|---:|\n")
	for _, r := range res.Rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s | %d of %d |\n",
			r.Profile, thousands(int64(r.Window)), r.Compiles, refusedCell(r.Refused, r.RefusedAboveFloor),
			fixed(r.FactsKept, 2), fixed(r.FactsKeptLast, 2),
			stepCell(r.WorstStep, r.WorstStepSession), stepCell(r.WorstStepLast, r.WorstStepLastSession), r.BelowFloor, r.Sessions)
	}
	return b.String()
}

// WriteSweepJSON prints the whole sweep as indented JSON.
func WriteSweepJSON(w io.Writer, res *SweepResult) error {
	return writeJSON(w, res)
}

func refusedCell(refused, aboveFloor int) string {
	if aboveFloor == 0 {
		return fmt.Sprint(refused)
	}
	return fmt.Sprintf("%d (%d above the floor)", refused, aboveFloor)
}

func stepCell(step *float64, session string) string {
	if step == nil {
		return "—"
	}
	v := fixed(step, 2)
	if v == "-0.00" {
		v = "0.00"
	}
	return fmt.Sprintf("%s (%s)", v, session)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
