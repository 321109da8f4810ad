//go:build integration

package integration

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// A held-out session is what TestRecordHeldOutSessions records (issue 42,
// item 5): one workspace, a person's 40 prompts of varied wording, each
// answered by the scripted model with 2 to 5 shell calls of the long tasks'
// check script (the long tasks' output shapes and failure lines, seeded)
// and a short answer. Some prompts state a constraint in a person's words,
// some a decision or a fact; each such note is unique in the session and
// kept in the plan as the exact phrase the prompt holds, so what a compile
// kept of it can be checked. Its seeds (heldOutSessionSeeds) are only ever
// recorded and reported: nothing is tuned on them.
var heldOutSessionSeeds = []int{201, 202}

// The outputs of a held-out session's steps are smaller than a long task's:
// a body drawn between these sizes, 200 to 1,200 tokens with its head and
// tail, rather than 1,500 to 6,000. Some 140 calls of 40 prompts then keep
// Claude Code's transcript under 2 MB (with outputs of 400 to 2,000 tokens
// it was 2.3 MB).
const (
	sessionMinOutputTokens = 250
	sessionMaxOutputTokens = 1150
)

// sessionNote is a constraint, decision or fact one prompt states: its
// kind and the phrase the prompt holds, word for word.
type sessionNote struct {
	Prompt int    `json:"prompt"` // 1-based
	Kind   string `json:"kind"`   // constraint, decision or fact
	Text   string `json:"text"`
}

// heldOutSession is a session's plan: the long-task plan the scripted model
// and the workspace are built from (its Prompts, Markers, Ends, Answers,
// Command and Outputs), the first step of each prompt, and the notes.
type heldOutSession struct {
	*longTaskPlan
	Starts []int
	Notes  []sessionNote
}

// noteTemplate is one kind of note a person writes; fill draws its words
// from the session's rng and words. A note starts in lower case but for a
// name, and is capitalized where it starts a sentence.
type noteTemplate struct {
	kind string
	fill func(rng *rand.Rand, w sessionWords) string
}

// sessionWords are what a seed names: the service, its package, a teammate
// (one per prompt, drawn anew), a domain entity (likewise).
type sessionWords struct {
	svc, pkg, person, entity string
}

var (
	teammates = []string{"Dana", "Priya", "Marco", "Wen", "Olu", "Sofia", "Kenji", "Aisha", "Tomás", "Ingrid", "Ravi", "Lena"}
	months    = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
)

func pickOf(rng *rand.Rand, list []string) string { return list[rng.IntN(len(list))] }

// sessionRequests are what a person asks for, with {svc} the service,
// {pkg} the package, {entity} an entity and {person} a teammate. The first is the
// session's first prompt, the last its last; the others come in an order
// the seed draws.
var sessionRequests = []string{
	"Morning! I'm on ./{svc} today and could use a hand with its checks, start with the first few and tell me what breaks.",
	"Can you run the {pkg} checks and tell me what fails?",
	"CI went red on main overnight, please find out which check broke.",
	"Before I open the PR, run the next few checks on ./{svc} and give me a short summary.",
	"Take another look at the {entity} tests, they were flaky yesterday.",
	"Please check whether the docker build of {svc} still goes through.",
	"Could you go over the server logs from the last deploy and tell me if anything looks off?",
	"{person} says the {entity} flow is broken on staging, can you reproduce it with the checks?",
	"Run the integration checks again, I pushed a fix for the {pkg} rounding bug.",
	"What's the state of the pytest suite for the {entity} importer?",
	"Kick off the next batch of checks and tell me if anything regressed since this morning.",
	"I think the {entity} webhook retries are misbehaving, can you dig into the logs?",
	"Please verify the Jest tests of the web console after the dependency bump.",
	"Quick sanity check: do the {pkg} unit tests pass on your side?",
	"Have a look at why the health check keeps failing on the {svc} pod.",
	"Let's move on to the {entity} export path, run its checks.",
	"Re-run the ones that failed last time and tell me if they're fixed now.",
	"Can you check the gRPC side of {svc}? The clients report connection errors.",
	"Run the checks for the {entity} settlement job and list the failures, if any.",
	"{person} asked for a status update on the {pkg} tests, can you get me one?",
	"Next up is the CSV importer for {entity} records, please run its checks.",
	"Could you run the race-prone {pkg} tests once more?",
	"Check the build logs for the release candidate of {svc}.",
	"Please look into the {entity} timeouts we saw in the logs this afternoon.",
	"Run the frontend checks, the {entity} table looked wrong in the demo.",
	"See if the database-backed tests of {pkg} pass against the local postgres.",
	"One more round of checks on ./{svc} please, after that I'll merge.",
	"Can you find out what's making the nightly {pkg} job slow?",
	"Go through the next checks of the {entity} module and tell me what's red.",
	"I'd like a second look at the {pkg} failures from before, run the checks again.",
	"Try the end-to-end checks for the {entity} flow.",
	"The on-call got paged about {svc} errors, please check the logs.",
	"Run the smoke checks against the dev stack for me.",
	"Please confirm the {entity} fix from this morning didn't break anything else.",
	"Look at the container build, it fails on CI but not locally.",
	"What do the checks say about the {pkg} dry run?",
	"Give the {entity} API tests a run and summarize them for me.",
	"Let's check the metrics endpoint of {svc} next.",
	"Please run the checks that cover {person}'s refactor of the {pkg} package.",
	"Can you see why the {entity} job keeps retrying?",
	"Run whatever covers the {entity} cache and tell me how it looks.",
	"Last thing for today: run the remaining checks and tell me where we stand.",
}

// constraintNotes and decisionNotes are the notes a person adds to a
// request, each in its own words: some with must, never or don't, some
// without ("Hands off …", "… can't change this quarter").
var constraintNotes = []noteTemplate{
	{"constraint", func(rng *rand.Rand, _ sessionWords) string {
		return "never touch the " + pickOf(rng, []string{"db/migrations", "migrations", "sql/migrations"}) + " folder, those get applied by hand"
	}},
	{"constraint", func(rng *rand.Rand, _ sessionWords) string {
		return fmt.Sprintf("we have to stay on Go 1.%d, the build images don't have anything newer", 21+rng.IntN(2))
	}},
	{"constraint", func(*rand.Rand, sessionWords) string { return "don't bump anything in go.mod without asking me first" }},
	{"constraint", func(rng *rand.Rand, w sessionWords) string {
		return fmt.Sprintf("keep the exported API of package %s as it is, %s other teams import it", w.pkg, pickOf(rng, []string{"two", "three", "four"}))
	}},
	{"constraint", func(*rand.Rand, sessionWords) string {
		return "please leave config/flags.yaml alone, product owns the feature flags"
	}},
	{"constraint", func(*rand.Rand, sessionWords) string { return "no new third-party dependencies for this work" }},
	{"constraint", func(rng *rand.Rand, _ sessionWords) string {
		return fmt.Sprintf("the max request body has to stay at %d MiB", []int{2, 4, 8}[rng.IntN(3)])
	}},
	{"constraint", func(_ *rand.Rand, w sessionWords) string {
		return fmt.Sprintf("only change files under ./%s, the rest of the repo belongs to other teams", w.svc)
	}},
	{"constraint", func(*rand.Rand, sessionWords) string { return "logs stay JSON, the SIEM parses them" }},
	{"constraint", func(rng *rand.Rand, _ sessionWords) string {
		return "please don't run anything against staging, the load test there goes on until " + pickOf(rng, []string{"Thursday", "Friday", "Monday"})
	}},
	{"constraint", func(*rand.Rand, sessionWords) string {
		return "hands off the protobuf files, any change there needs the API guild's review"
	}},
	{"constraint", func(*rand.Rand, sessionWords) string {
		return "we don't use testify in new code, stick to the standard testing package"
	}},
	{"constraint", func(*rand.Rand, sessionWords) string {
		return "don't rename any metric, the dashboards key on the names"
	}},
	{"constraint", func(*rand.Rand, sessionWords) string { return "timestamps are UTC everywhere and that stays so" }},
	{"constraint", func(*rand.Rand, sessionWords) string { return "the public HTTP routes can't change this quarter" }},
	{"constraint", func(*rand.Rand, sessionWords) string { return "tests must not write outside their temp dirs" }},
	{"constraint", func(*rand.Rand, sessionWords) string { return "leave the vendor/ directory exactly as it is" }},
	{"constraint", func(*rand.Rand, sessionWords) string {
		return "the CLI flags are part of our contract with ops, none of them may go away"
	}},
	{"constraint", func(rng *rand.Rand, w sessionWords) string {
		return fmt.Sprintf("coverage of package %s needs to stay above %d percent", w.pkg, 70+5*rng.IntN(4))
	}},
	{"constraint", func(rng *rand.Rand, w sessionWords) string {
		return fmt.Sprintf("the %s retry path stays idempotent, the %s double-charges otherwise", w.entity, pickOf(rng, []string{"clearing house", "acquirer", "payment gateway"}))
	}},
}

var decisionNotes = []noteTemplate{
	{"decision", func(rng *rand.Rand, w sessionWords) string {
		return fmt.Sprintf("let's go with a retry budget of %d for the %s client", 2+rng.IntN(4), w.entity)
	}},
	{"fact", func(_ *rand.Rand, w sessionWords) string {
		return fmt.Sprintf("%s owns the %s service, loop them in on any config change", w.person, w.svc)
	}},
	{"decision", func(rng *rand.Rand, _ sessionWords) string {
		return "we decided to drop the v1 webhooks at the end of " + pickOf(rng, months)
	}},
	{"fact", func(rng *rand.Rand, _ sessionWords) string {
		return fmt.Sprintf("the staging database is pg-staging-%02d now, the old one was retired", 2+rng.IntN(8))
	}},
	{"decision", func(rng *rand.Rand, _ sessionWords) string {
		return fmt.Sprintf("let's use exponential backoff starting at %d ms, capped at %d s", []int{100, 200, 250, 500}[rng.IntN(4)], 2+rng.IntN(9))
	}},
	{"fact", func(_ *rand.Rand, w sessionWords) string {
		return fmt.Sprintf("%s is on call this week, ping them if the %s checks break overnight", w.person, w.svc)
	}},
	{"decision", func(rng *rand.Rand, w sessionWords) string {
		return fmt.Sprintf("we agreed on a cache TTL of %d seconds for %s lookups", 30*(1+rng.IntN(6)), w.entity)
	}},
	{"fact", func(rng *rand.Rand, w sessionWords) string {
		return fmt.Sprintf("this work is tracked in %s-%d", strings.ToUpper(w.svc[:min(4, len(w.svc))]), 100+rng.IntN(9000))
	}},
	{"fact", func(rng *rand.Rand, _ sessionWords) string {
		return fmt.Sprintf("the release branch is release/2026.%02d and gets cut on %s", 1+rng.IntN(12), pickOf(rng, []string{"Tuesday", "Wednesday", "Thursday"}))
	}},
	{"fact", func(rng *rand.Rand, w sessionWords) string {
		return fmt.Sprintf("%s said the flaky %s test is a known issue, tracked as %s-%d", w.person, w.entity, pickOf(rng, []string{"QA", "FLAKE", "TEST"}), 10+rng.IntN(990))
	}},
	{"decision", func(rng *rand.Rand, _ sessionWords) string {
		return fmt.Sprintf("from now on the exporter's batch size is %d rows", 100*(1+rng.IntN(10)))
	}},
	{"fact", func(rng *rand.Rand, _ sessionWords) string {
		return "fixtures live in the " + pickOf(rng, []string{"eu-west-1", "eu-central-1", "us-west-2"}) + " bucket now, not in us-east-1"
	}},
	{"fact", func(rng *rand.Rand, w sessionWords) string {
		return fmt.Sprintf("the deadline for the %s work is Friday the %d", w.pkg, []int{6, 13, 20, 27}[rng.IntN(4)])
	}},
	{"decision", func(_ *rand.Rand, w sessionWords) string {
		return fmt.Sprintf("decision from standup: the new %s path goes behind the %s_v2 flag", w.pkg, w.pkg)
	}},
	{"decision", func(rng *rand.Rand, _ sessionWords) string {
		return "we settled on " + pickOf(rng, []string{"NATS", "Kafka", "SQS", "RabbitMQ"}) + " for the new queue"
	}},
	{"fact", func(rng *rand.Rand, w sessionWords) string {
		return fmt.Sprintf("the %s reconciliation runs at %02d:00 UTC every night", w.entity, 1+rng.IntN(5))
	}},
	{"fact", func(rng *rand.Rand, _ sessionWords) string {
		return fmt.Sprintf("the load balancer's idle timeout is %d seconds, that's why long polls drop", []int{60, 90, 120, 350}[rng.IntN(4)])
	}},
}

// How a note joins its request: before it or after it, with a lead-in;
// the last two lead only a note that is not an instruction.
var (
	noteLeads    = []string{"", "Also, ", "Oh, and ", "One more thing: ", "Heads-up: ", "Keep in mind that ", "For the record, "}
	instructions = []string{"never", "don't", "please", "keep", "only", "leave", "hands", "no", "let's"}
	// Short acknowledgements of a note, ending the prompt's answer.
	noteAcks = map[string][]string{
		"constraint": {"Understood, I'll keep to that.", "Noted, I'll stay within that.", "Got it, I'll respect that."},
		"decision":   {"Noted.", "Sounds good, noted.", "OK, I'll go with that."},
		"fact":       {"Thanks for the context.", "Good to know.", "Noted."},
	}
)

// planHeldOutSession plans a session of the given number of prompts for a
// seed.
func planHeldOutSession(seed, prompts int) *heldOutSession {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5e55))
	svc, pkg := pickOf(rng, services), pickOf(rng, packages)
	p := &longTaskPlan{Seed: seed, service: svc, pkg: pkg, Command: pickOf(rng, commands)}
	s := &heldOutSession{longTaskPlan: p}

	// The requests: the first and last in place, the others in a drawn
	// order; with more prompts than requests, the order starts again.
	middle := sessionRequests[1 : len(sessionRequests)-1]
	var order []string
	for len(order) < prompts-2 {
		perm := rng.Perm(len(middle))
		for _, i := range perm {
			order = append(order, middle[i])
		}
	}
	requests := append(append([]string{sessionRequests[0]}, order[:max(0, prompts-2)]...), sessionRequests[len(sessionRequests)-1])
	requests = requests[:prompts]

	// About two prompts in five carry a constraint, one in three a
	// decision or fact (none of the first), the rest none; each note
	// template is used once.
	constraints := rng.Perm(len(constraintNotes))
	decisions := rng.Perm(len(decisionNotes))
	step := 0
	for i, tmpl := range requests {
		w := sessionWords{svc: svc, pkg: pkg, person: pickOf(rng, teammates), entity: strings.ToLower(pickOf(rng, entities))}
		marker := strings.NewReplacer("{svc}", svc, "{pkg}", pkg, "{entity}", w.entity, "{person}", w.person).Replace(tmpl)
		var note *noteTemplate
		switch r := rng.IntN(15); {
		case r < 6 && len(constraints) > 0:
			note, constraints = &constraintNotes[constraints[0]], constraints[1:]
		case r < 11 && i > 0 && len(decisions) > 0:
			note, decisions = &decisionNotes[decisions[0]], decisions[1:]
		}
		prompt, answerTail := marker, ""
		if note != nil {
			text := note.fill(rng, w)
			leads := noteLeads
			if first, _, _ := strings.Cut(text, " "); slices.Contains(instructions, first) {
				leads = noteLeads[:len(noteLeads)-2]
			}
			lead := pickOf(rng, leads)
			phrase := text
			if lead == "" || strings.HasSuffix(lead, ": ") {
				phrase = upperFirst(text)
			}
			sentence := lead + phrase + "."
			if rng.IntN(3) == 0 {
				prompt = sentence + " " + marker
			} else {
				prompt = marker + " " + sentence
			}
			s.Notes = append(s.Notes, sessionNote{Prompt: i + 1, Kind: note.kind, Text: phrase})
			answerTail = " " + pickOf(rng, noteAcks[note.kind])
		}
		n := 2 + rng.IntN(4)
		s.Starts = append(s.Starts, step+1)
		step += n
		p.Prompts = append(p.Prompts, prompt)
		p.Markers = append(p.Markers, marker)
		p.Ends = append(p.Ends, step)
		p.Answers = append(p.Answers, answerTail) // what the checks found goes in front once the outputs are drawn
	}

	code := 1000 + rng.IntN(9000)
	w := outputWords{seed: seed, svc: svc, pkg: pkg, script: strings.TrimPrefix(p.Command, "sh ")}
	for k := 1; k <= step; k++ {
		var f *plantedFailure
		if k%failureEvery == 0 {
			f = &plantedFailure{Step: k, ID: fmt.Sprintf("E-%04d-%03d", code, k)}
		}
		out := sizedStepOutput(w, k, f, sessionMinOutputTokens, sessionMaxOutputTokens)
		p.Outputs = append(p.Outputs, out)
		p.Tokens = append(p.Tokens, countTokens(out))
		if f != nil {
			p.Failures = append(p.Failures, *f)
		}
	}
	for i := range p.Prompts {
		p.Answers[i] = sessionAnswer(rng, p, s.Starts[i], p.Ends[i]) + p.Answers[i]
	}
	return s
}

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// sessionAnswer is the model's short answer to a prompt whose checks were
// from to to: which ran, and each failure's line.
func sessionAnswer(rng *rand.Rand, p *longTaskPlan, from, to int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "I ran checks %d to %d.", from, to)
	failed := 0
	for _, f := range p.Failures {
		if f.Step < from || f.Step > to {
			continue
		}
		failed++
		line := strings.TrimSpace(f.Line)
		if len(line) > 220 {
			// Keep the identifier, which ends the longest lines.
			line = "…" + line[len(line)-200:]
		}
		fmt.Fprintf(&b, " Check %d fails (%s): %s", f.Step, f.Form, line)
	}
	if failed == 0 {
		b.WriteString(pickOf(rng, []string{" All of them pass.", " They all pass.", " Everything is green there."}))
	}
	return b.String()
}

// sizedStepOutput is stepOutput (longtask_output_test.go) with the output's
// body drawn between minTokens and maxTokens (its tail comes after): the
// same shapes, failure forms and seeding, for step k of w's seed.
func sizedStepOutput(w outputWords, k int, f *plantedFailure, minTokens, maxTokens int) string {
	rng := rand.New(rand.NewPCG(uint64(w.seed), uint64(k)))
	g := &lineGen{rng: rng, w: w, clock: time.Date(2026, time.Month(1+w.seed%12), 1+k%28, 8+rng.IntN(10), rng.IntN(60), rng.IntN(60), 0, time.UTC)}
	shape := outputShapes[rng.IntN(len(outputShapes))]
	target := minTokens + rng.IntN(maxTokens-minTokens)
	failAt := -1
	if f != nil {
		failAt = target * (5 + rng.IntN(90)) / 100
	}
	form := failureForms[(w.seed+k/failureEvery)%len(failureForms)]
	lines := shape.head(g)
	used := countTokens(strings.Join(lines, "\n"))
	for {
		var group []string
		failing := failAt >= 0 && used >= failAt
		at := 0
		if failing {
			group, at = form.lines(g, f.ID)
		} else {
			group = shape.group(g)
		}
		n := countTokens(strings.Join(group, "\n")) + 1
		if !failing && used+n > target {
			if failAt >= 0 {
				failAt = used
				continue
			}
			break
		}
		lines, used = append(lines, group...), used+n
		if failing {
			f.Form, f.Line, failAt = form.name, group[at], -1
		}
	}
	lines = append(lines, shape.tail(g, f != nil)...)
	return strings.Join(lines, "\n") + "\n"
}

// check reports what would make the session's model misread a request: a
// marker that is not unique to its prompt (the model takes the last
// prompt whose marker a request holds), a marker or the step command in a
// prompt, answer or output where it does not belong, a repeated note.
func (s *heldOutSession) check() []string {
	var problems []string
	p := s.longTaskPlan
	for i, m := range p.Markers {
		for j, prompt := range p.Prompts {
			if j != i && strings.Contains(prompt, m) {
				problems = append(problems, fmt.Sprintf("prompt %d holds prompt %d's marker %q", j+1, i+1, m))
			}
		}
		for j, a := range p.Answers {
			if strings.Contains(a, m) {
				problems = append(problems, fmt.Sprintf("answer %d holds prompt %d's marker", j+1, i+1))
			}
		}
		for k, out := range p.Outputs {
			if strings.Contains(out, m) {
				problems = append(problems, fmt.Sprintf("step %d's output holds prompt %d's marker", k+1, i+1))
			}
		}
	}
	for i, prompt := range p.Prompts {
		if p.stepPattern().MatchString(prompt) || p.stepPattern().MatchString(p.Answers[i]) {
			problems = append(problems, fmt.Sprintf("prompt %d or its answer holds the step command", i+1))
		}
		if n := p.Ends[i] - s.Starts[i] + 1; n < 2 || n > 5 {
			problems = append(problems, fmt.Sprintf("prompt %d has %d steps", i+1, n))
		}
	}
	for k, out := range p.Outputs {
		if p.stepPattern().MatchString(out) {
			problems = append(problems, fmt.Sprintf("step %d's output holds the step command", k+1))
		}
	}
	seen := map[string]bool{}
	for _, n := range s.Notes {
		if seen[n.Text] {
			problems = append(problems, fmt.Sprintf("the note %q is stated twice", n.Text))
		}
		seen[n.Text] = true
		if !strings.Contains(p.Prompts[n.Prompt-1], n.Text) {
			problems = append(problems, fmt.Sprintf("prompt %d does not hold its note %q", n.Prompt, n.Text))
		}
	}
	return problems
}
