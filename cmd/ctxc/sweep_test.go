package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/contextcompiler/ctxc/internal/eval"
)

// TestWindowSweepDegradesByStep compiles recorded sessions from 64K down to
// 4K (eval.DefaultSweepWindows) under the profiles that compact without a
// model, and holds the service to degrading by steps (eval.Sweep): from
// each window to the next smaller one a session's facts kept rise by at
// most 0.02 and fall by at most 0.15, and no compile is refused where what
// it must keep fits the usable window. The sessions: two 40-turn sessions
// of recorded tool output (`ctxc eval --generate 31 --recorded`, and 32),
// seeds held out from all tuning (the summarizer was tuned on 1 to 12), and
// every real agent's transcript under examples/transcripts, two of which
// (Claude Code's request bodies) carry a system prompt and tools too large
// for 16K, so the floor is inside the sweep. Nothing here is tuned: a
// violation is the engine's, printed with the facts it lost.
func TestWindowSweepDegradesByStep(t *testing.T) {
	t.Parallel() // long, and shares nothing with the other tests
	if testing.Short() {
		t.Skip("replays 10 sessions through two profiles at nine windows; make test runs it")
	}
	start := time.Now()
	var sessions []*eval.Session
	for _, seed := range []string{"31", "32"} {
		code, out, errOut := runCommand(t, "eval", "--generate", seed, "--recorded")
		if code != exitOK {
			t.Fatalf("--generate %s --recorded: exit %d: %s", seed, code, errOut)
		}
		s, err := eval.Load(strings.NewReader(out), "recorded-"+seed)
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
	}
	files, err := filepath.Glob(filepath.Join(transcriptsDir, "*.jsonl"))
	if err != nil || len(files) < 5 {
		t.Fatalf("the transcripts under %s: %v %v", transcriptsDir, files, err)
	}
	for _, file := range files {
		s, err := loadSession(file, nil, eval.FormatAuto)
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
	}
	res, err := eval.Sweep(context.Background(), testService(t), sessions, eval.SweepOptions{
		Profiles: []string{"budget-aware", "policy-driven"}, Windows: eval.DefaultSweepWindows,
	})
	if err != nil {
		t.Fatal(err)
	}
	var report strings.Builder
	if err := eval.WriteSweepMarkdown(&report, res, false); err != nil {
		t.Fatal(err)
	}
	t.Logf("the sweep, in %s:\n%s", time.Since(start).Round(time.Second), report.String())

	for _, v := range res.Violations {
		msg := v.String()
		if len(v.LostExamples) > 0 {
			msg += "; among them " + strings.Join(v.LostExamples, " | ")
		}
		t.Errorf("%s", msg)
	}
	// The floor check is exercised: some session stops fitting inside the
	// sweep, and is refused there and only there.
	inside := 0
	for _, f := range res.Floors {
		if f.Floor > res.Windows[len(res.Windows)-1] && f.FirstRefused != 0 {
			inside++
			if f.FirstRefused >= f.Floor {
				t.Errorf("%s, %s: refused at %d, at or above its floor %d", f.Session, f.Profile, f.FirstRefused, f.Floor)
			}
		}
	}
	if inside == 0 {
		t.Errorf("no session's floor is inside the sweep: the refusal check was not exercised (floors %+v)", res.Floors)
	}
}

// `ctxc eval --sweep`: the sweep table, the floors and the checks; --json
// the whole sweep; the windows by default the sweep's.
func TestEvalSweep(t *testing.T) {
	code, out, errOut := runCommand(t, "eval", "--sweep", "--profiles", "budget-aware", "--windows", "8000,16000", exampleSession)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"- long-coding-40: 40 turns",
		"Windows from 16,000 down to 8,000, each compared with the next larger one.",
		"| profile | window | compiles | refused | facts kept | facts kept (last) | worst step | worst step (last) | below the floor |",
		"| budget-aware | 16,000 | 40 | 0 | 1.00 | 1.00 | — | — | 0 of 1 |",
		"| budget-aware | 8,000 | 40 | 0 |",
		"- Every session and profile fits every window down to 8,000, and none was refused.",
		"No violation.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the sweep lacks %q:\n%s", want, out)
		}
	}

	code, out, errOut = runCommand(t, "eval", "--sweep", "--json", "--profiles", "budget-aware", exampleSession)
	if code != exitOK {
		t.Fatalf("--json: exit %d: %s", code, errOut)
	}
	var res eval.SweepResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	n := len(eval.DefaultSweepWindows)
	if len(res.Windows) != n || res.Windows[0] != 64_000 || len(res.Rows) != n || len(res.Points) != n || len(res.Floors) != 1 || len(res.Compiles) != 40*n {
		t.Errorf("--sweep without --windows: windows %v, %d rows, %d points, %d floors, %d compiles; want the %d default windows", res.Windows, len(res.Rows), len(res.Points), len(res.Floors), len(res.Compiles), n)
	}
	for _, c := range res.Compiles {
		if c.MustKeepTokens == 0 {
			t.Fatalf("line %d at %d: no must-keep tokens measured", c.Line, c.Window)
		}
	}

	code, _, errOut = runCommand(t, "eval", "--sweep", "--generate", "1")
	if code != exitUsage || !strings.Contains(errOut, "--sweep measures sessions; it does not go with --generate") {
		t.Errorf("--sweep --generate: exit %d, stderr %s", code, errOut)
	}
}

// --help says what --sweep does and which windows each mode measures.
func TestEvalHelpNamesTheSweep(t *testing.T) {
	code, out, _ := runCommand(t, "eval", "--help")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"--sweep measures every session at every window of --windows (by default 64000 down to\n4000)",
		"default 16000,8000, with --sweep 64000,48000,32000,24000,16000,12000,10000,8000,6000,5000,4000",
		"  -sweep\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q:\n%s", want, out)
		}
	}
	if got := joinWindows(eval.DefaultSweepWindows); !strings.HasPrefix(got, "64000,") || !strings.HasSuffix(got, ",4000") {
		t.Errorf("the default sweep is %s; the help's text says 64000 down to 4000", got)
	}
}
