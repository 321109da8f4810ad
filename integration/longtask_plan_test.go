//go:build integration

package integration

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/contextcompiler/ctxc/internal/tokens"
)

// A long task is what issue 41 is about: one prompt ("make the tests in
// ./svc pass", with three constraints) that a real agent CLI works through
// with dozens of shell calls, each printing a few thousand tokens of build,
// test and log output, every fourth of them holding one failure line. The
// scripted model (longtask_model_test.go) makes the calls; this file plans
// the task for a seed and lays out its workspace.
//
// The seeds the tests run are 1-3 (tuningSeeds); the reporting seeds are
// 101 and up (heldOutSeeds), never looked at while tuning the engine. A seed
// changes the wording of everything: the service, its packages, the
// constraints, the command, and every line of every output.
var (
	tuningSeeds  = []int{1, 2, 3}
	heldOutSeeds = []int{101, 102, 103}
)

// longTaskPlan is one task: its prompts, the shell command the model runs
// with the step number as its argument, the phrases of the first prompt's
// constraints, and the failures planted in the steps' outputs. It is what
// plan.json holds beside a run's requests.
type longTaskPlan struct {
	Seed int `json:"seed"`
	// Prompts are the user's prompts; Ends the last step of each (steps
	// are numbered across the session: the second prompt goes on from
	// where the first stopped).
	Prompts []string `json:"prompts"`
	Ends    []int    `json:"ends"`
	// Markers are a phrase of each prompt that only it holds: the scripted
	// model finds the prompt it works on by them.
	Markers []string `json:"markers"`
	// Answers are the model's final answer to each prompt.
	Answers []string `json:"answers"`
	// Command runs step k as Command + " k" in the workspace.
	Command string `json:"command"`
	// Constraints are the checkable phrases of the first prompt's three
	// constraints, as the prompt states them.
	Constraints []string         `json:"constraints"`
	Failures    []plantedFailure `json:"failures"`
	// Outputs[k-1] is what step k prints; Tokens[k-1] its o200k tokens.
	Outputs []string `json:"-"`
	Tokens  []int    `json:"output_tokens"`
	// service is the directory of the tests to fix; pkg its package whose
	// API a constraint keeps.
	service, pkg string
}

// plantedFailure is the failure one step's output holds: its identifier is
// on exactly one line of that output and nowhere else in the task.
type plantedFailure struct {
	Step int    `json:"step"`
	ID   string `json:"id"`
	Form string `json:"form"`
	Line string `json:"line"`
}

// failureEvery is how often a step fails: every fourth output holds one
// failure line.
const failureEvery = 4

// The output of a step is 1,500 to 6,000 tokens, as real build and test
// output runs. Some CLIs cut such outputs before ctxc sees them: Claude
// Code 2.1.332 keeps the head and tail of one, about 10,000 characters;
// Codex passes 10,000 tokens, Gemini CLI 40,000 characters (and masks older
// outputs to their first and last lines), pi 2,000 lines or 50 KB. A
// failure in a part a CLI cut never reaches ctxc: the table's "of what the
// CLI sent" column tells the two apart.
const (
	minOutputTokens = 1500
	maxOutputTokens = 6000
)

// projectWords are the wording a seed draws from: a service, its packages
// and its people's constraints, so two seeds share no prompt and no output
// line.
var (
	services = []string{"svc", "billing", "gateway", "inventory", "payments", "notify", "ledgerd", "shipping"}
	packages = []string{"ledger", "orders", "accounts", "invoice", "quota", "routing", "pricing", "session", "catalog", "tenant", "refunds", "audit"}
	commands = []string{"sh ci/step.sh", "sh tools/check.sh", "sh scripts/verify.sh", "sh hack/run-check.sh", "sh ci/run_step.sh", "sh build/check-step.sh"}
	// Each constraint group is one of the three kinds a person states: a
	// part of the tree not to touch, an API to keep, a setting to keep.
	// %s is a package name.
	scopeRules = []string{"never edit anything under vendor/", "leave the SQL files in db/migrations untouched", "don't touch anything in third_party/", "keep your hands off the generated code in internal/gen/"}
	apiRules   = []string{"keep the public API of package %s unchanged", "the exported names of package %s must stay as they are", "do not change any function signature in package %s", "package %s's public types have to stay backwards compatible"}
	// A second prompt goes on to the end-to-end checks (%[1]s the
	// service, %[2]s the package).
	secondPrompts = []string{"Now do the same for the end-to-end checks of ./%[1]s/e2e", "Good. Next, get the e2e suite of ./%[1]s/e2e green too, it exercises %[2]s",
		"Thanks. The end-to-end checks in ./%[1]s/e2e (the %[2]s flows) fail as well, fix those next", "Now the e2e checks under ./%[1]s/e2e please"}
	settingRule = []string{"the max gRPC message size has to stay at 16 MiB", "the retry budget must remain 3 attempts per call", "the HTTP read timeout stays at 30 seconds, no more, no less", "the connection pool must keep its limit of 64 connections"}
)

// planLongTask plans the task of a seed: steps for the first prompt and,
// when second > 0, a second prompt of that many more steps.
func planLongTask(seed, steps, second int) *longTaskPlan {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x10e9))
	svc := services[rng.IntN(len(services))]
	pkg := packages[rng.IntN(len(packages))]
	p := &longTaskPlan{
		Seed:    seed,
		service: svc,
		pkg:     pkg,
		Command: commands[rng.IntN(len(commands))],
		Constraints: []string{
			scopeRules[rng.IntN(len(scopeRules))],
			fmt.Sprintf(apiRules[rng.IntN(len(apiRules))], pkg),
			settingRule[rng.IntN(len(settingRule))],
		},
	}
	script := strings.TrimPrefix(p.Command, "sh ")
	first := fmt.Sprintf("Make the tests in ./%s pass.", svc)
	p.Prompts = append(p.Prompts, fmt.Sprintf("%s The checks run one at a time through %s, which takes the check's number; "+
		"go through them and fix what they report. Some ground rules: %s, %s, and %s. Tell me when everything is green.",
		first, script, p.Constraints[0], p.Constraints[1], p.Constraints[2]))
	p.Markers = append(p.Markers, first)
	p.Ends = append(p.Ends, steps)
	p.Answers = append(p.Answers, fmt.Sprintf("All %d checks of ./%s pass now; the %s package's API, the vendored code and the settings you named are as they were.", steps, svc, pkg))
	if second > 0 {
		again := fmt.Sprintf(secondPrompts[rng.IntN(len(secondPrompts))], svc, pkg)
		p.Prompts = append(p.Prompts, again+"; their numbers go on from where the others stopped. Same ground rules as before.")
		p.Markers = append(p.Markers, again)
		p.Ends = append(p.Ends, steps+second)
		p.Answers = append(p.Answers, fmt.Sprintf("The %d end-to-end checks of ./%s/e2e pass as well.", second, svc))
	}
	last := p.Ends[len(p.Ends)-1]
	code := 1000 + rng.IntN(9000)
	w := outputWords{seed: seed, svc: svc, pkg: pkg, script: script}
	for k := 1; k <= last; k++ {
		var f *plantedFailure
		if k%failureEvery == 0 {
			f = &plantedFailure{Step: k, ID: fmt.Sprintf("E-%04d-%03d", code, k)}
		}
		out := stepOutput(w, k, f)
		p.Outputs = append(p.Outputs, out)
		p.Tokens = append(p.Tokens, countTokens(out))
		if f != nil {
			p.Failures = append(p.Failures, *f)
		}
	}
	return p
}

// stepCommand is the command of step k.
func (p *longTaskPlan) stepCommand(k int) string { return fmt.Sprintf("%s %d", p.Command, k) }

// writeWorkspace lays the task's workspace in dir: the service's tree (a
// go.mod, a package, vendor/), and the check script the model runs, which
// prints the step's output and exits 1 when the step fails. The outputs are
// written beside it, so a call costs a cat.
func (p *longTaskPlan) writeWorkspace(t *testing.T, dir string) {
	t.Helper()
	script := strings.TrimPrefix(p.Command, "sh ")
	files := map[string]string{
		"go.mod":    "module example.com/work\n\ngo 1.22\n",
		"README.md": "Checks are numbered; " + script + " N runs check N and prints its report.\n",
		script: "#!/bin/sh\n# Runs check $1 of the suite: prints its report, exits 1 when it fails.\n" +
			"out=\"$(dirname \"$0\")/reports/$1\"\ncat \"$out.log\"\ntest ! -e \"$out.failed\"\n",
		"vendor/modules.txt":                         "# vendored dependencies: not to be edited\n",
		filepath.Join(p.service, p.pkg, p.pkg+".go"): "// Package " + p.pkg + " is the service's " + p.pkg + ".\npackage " + p.pkg + "\n",
	}
	for k, out := range p.Outputs {
		files[filepath.Join(filepath.Dir(script), "reports", fmt.Sprintf("%d.log", k+1))] = out
		if (k+1)%failureEvery == 0 {
			files[filepath.Join(filepath.Dir(script), "reports", fmt.Sprintf("%d.failed", k+1))] = ""
		}
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

var (
	o200kOnce    sync.Once
	o200kCounter interface{ CountText(string) int }
)

// countTokens counts s in o200k_base, the encoding of the models the CLIs
// are run with.
func countTokens(s string) int {
	o200kOnce.Do(func() {
		svc, err := tokens.NewService(tokens.DefaultServiceConfig())
		if err == nil {
			o200kCounter, err = svc.CounterForEncoding("o200k_base")
		}
		if err != nil {
			panic(err)
		}
	})
	return o200kCounter.CountText(s)
}
