package facts

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSentences(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"sentences and abbreviations", "Use Go 1.21, e.g. the toolchain we ship. Don't bump viper! Why?", []string{"Use Go 1.21, e.g. the toolchain we ship.", "Don't bump viper!", "Why?"}},
		{"list items lose their markers", "Keep in mind:\n- Never force-push\n2. Prefer small PRs\n* **Tests must pass**", []string{"Keep in mind:", "Never force-push", "Prefer small PRs", "**Tests must pass**"}},
		{"code is content, not statements", "Still failing:\n```\nerror: no space left\n```\n    indented log line\nAny idea?", []string{"Still failing:", "Any idea?"}},
		{"people start sentences in lower case", "See pkg/feed.go. then run it. Could you write a guide? still python 2 compatible, sadly",
			[]string{"See pkg/feed.go.", "then run it.", "Could you write a guide?", "still python 2 compatible, sadly"}},
		{"an ellipsis, an initialism or a one-letter word does not end one", "old config... actually no, it's the prefix. at 9 a.m. on monday, see fig. b. ok",
			[]string{"old config... actually no, it's the prefix.", "at 9 a.m. on monday, see fig. b. ok"}},
		{"a glob is part of its word; emphasis or code closed after the stop ends the sentence",
			"we're on spring boot 2.7, not 3, so javax.* not jakarta.* Ok? **Never deploy on Fridays.** Then `x.` And so.\n**Tests must pass.** Then ask.",
			[]string{"we're on spring boot 2.7, not 3, so javax.* not jakarta.* Ok?", "**Never deploy on Fridays.**", "Then `x.`", "And so.", "Tests must pass.**", "Then ask."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Sentences(tt.text)); diff != "" {
				t.Errorf("Sentences(%q) (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		sentence string
		user     bool
		want     Class
	}{
		// What a user requires or forbids, in many wordings.
		{"It has to build with Go 1.21, we can't upgrade yet", true, Constraint},
		{"Error messages shown to users must not include internal ids.", true, Constraint},
		{"Stay away from reflection in the hot path", true, Constraint},
		{"Never force-push to main", true, Constraint},
		// "Please" asks; the verb after it says whether for a rule or a piece of work.
		{"Please keep the public API backwards compatible.", true, Constraint},
		{"Please add pagination to the /users endpoint.", true, Request},
		{"Please write a README section on how to run the tests locally.", true, Request},
		{"I don't want any new dependencies.", true, Constraint},
		{"No schema change without a migration that can be rolled back.", true, Constraint},
		// A remark about the speaker is no rule.
		{"I never understood it.", true, Other},
		// An answer that only says nothing changed weighs nothing; one that
		// names what it kept says something.
		{"Same conclusion as before; the extra checks didn't change it.", false, Filler},
		{"Still the same result.", false, Filler},
		{"Same conclusion as before: keep the retry budget at 3.", false, Decision},
		{"Keep it the same as before.", true, Constraint},
		// What the user tells is a note, even after "also".
		{"Also good to know: the load test tenant is t_loadtest_50.", true, Other},
		{"FYI: Dmitri owns billing-svc and reviews anything that touches it.", true, Other},
		{"For the record, our SLO for /v1/feeds is 99.9% over 30 days.", true, Other},
		{"Heads up: you must not deploy on Fridays.", true, Constraint},
		{"One more thing: stay away from reflection in the hot path.", true, Constraint},
		{"yes The on-call this week is Femi.", true, Other},
		{"Zanele owns elasticsearch and reviews anything that touches it.", true, Other},
		// Requests.
		{"Can you add tests for MergeChannelAsync?", true, Request},
		{"Now add tests for MergeChannelAsync.", true, Request},
		{"Is this related to your change?", true, Request},
		{"Do we still need src/ledger/subscription.service.ts?", true, Request},
		// Filler.
		{"Thanks!", true, Filler},
		{"Sounds good.", true, Filler},
		{"Agreed.", true, Filler},
		// An assistant's decisions, conclusions and causes.
		{"Root cause: importRevisionIndex reads the channel before taking the row lock.", false, Decision},
		{"I'll go with a vitest-based implementation instead of extending fetchBackoffs.", false, Decision},
		{"It turns out internal/channel/feed.go is dead code, so I'll delete it.", false, Decision},
		{"After investigating, the problem is a race in the cache.", false, Decision},
		{"Final call: we'll keep the old endpoint.", false, Decision},
		// Narration of what the assistant is about to do.
		{"Let me read the file.", false, Filler},
		{"I'll run the tests again.", false, Filler},
		{"Let me look at the failure in OPS-2697 first.", false, Other},
		// An endorsement carries nothing of its own.
		{"That's the approach.", false, Filler},
	}
	for _, tt := range tests {
		if got := Classify(tt.sentence, tt.user); got != tt.want {
			t.Errorf("Classify(%q, user=%v) = %s, want %s", tt.sentence, tt.user, got, tt.want)
		}
	}
}

func TestClassifyAllReadsEndorsementsBack(t *testing.T) {
	tests := []struct {
		name      string
		sentences []string
		user      bool
		want      []Class
	}{
		{
			"an assistant's plain statement endorsed is a decision",
			[]string{"All set.", "The migration adds the column as nullable first; the backfill runs separately.", "That's the approach."},
			false,
			[]Class{Filler, Decision, Filler},
		},
		{
			"filler between is skipped",
			[]string{"Batching the writes wins here.", "OK.", "Let's go with that."},
			false,
			[]Class{Decision, Filler, Filler},
		},
		{
			"a user's endorsed statement binds like a constraint",
			[]string{"Timestamps are UTC everywhere and stored as RFC 3339 strings.", "That's the plan."},
			true,
			[]Class{Constraint, Filler},
		},
		{
			"an endorsement never lowers a class",
			[]string{"Every exported symbol needs a doc comment.", "Agreed."},
			true,
			[]Class{Constraint, Filler},
		},
		{
			"an endorsement first has nothing to point at",
			[]string{"That's the plan.", "Run the tests."},
			true,
			[]Class{Filler, Request},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ClassifyAll(tt.sentences, tt.user)); diff != "" {
				t.Errorf("ClassifyAll (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEndorses(t *testing.T) {
	for s, want := range map[string]bool{
		"That's the approach.":         true,
		"That is our plan.":            true,
		"Let's go with that.":          true,
		"Agreed.":                      true,
		"That's the fix for OPS-2697.": false, // names something of its own
		"That's the fix we need for the cursor pagination bug.": false,
		"The approach works.": false,
	} {
		if got := Endorses(s); got != want {
			t.Errorf("Endorses(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestErrorLine(t *testing.T) {
	for line, want := range map[string]bool{
		"panic: runtime error: index out of range [7] with length 7": true,
		"exit status 137": true,
		"provider error: HTTP 529 request timeout (request id req_nHhIZkaVEbeW)":       true,
		"[Makefile:109: migrate] Error 2":                                              true,
		"pkg/route/vehicle.go:395:3: undefined: GetStopByID":                           true,
		"ERROR: could not obtain lock on row in relation \"authors\" (SQLSTATE 55P03)": true,
		"dial tcp 10.26.144.187:8080: connect: connection refused":                     true,
		// A request log that went through, and a passing test, report nothing.
		"[18:03:20] INFO request_id=req_tUEj4 method=GET path=/v1/feeds status=200 duration_ms=296": false,
		"✓ packages/comment/revision.test.ts > fetchTagIndex rejects invalid cursor (264 ms)":       false,
		"ok  	github.com/initech/author-service/internal/channel	8.629s":                            false,
		"ctx, cancel := context.WithTimeout(ctx, 5*time.Second)":                                    false,
		"HTTP 200 OK": false,
		"exit code 0": false,
	} {
		if got := ErrorLine(line); got != want {
			t.Errorf("ErrorLine(%q) = %v, want %v", line, got, want)
		}
	}
}

func TestTrouble(t *testing.T) {
	for line, want := range map[string]bool{
		"author-service-ef2495f786-jtsum 0/1 CrashLoopBackOff 33 47m": true,
		"--- FAIL: TestUpdateFeed (0.01s)":                            true,
		`"errors"`:                                                    false,
		"if err := FetchMediaCursor(ctx); err != nil {":               false,
		"return fmt.Errorf(\"load config: %w\", err)":                 false,
		`t.Errorf("reserve %s: %v", sku, err)`:                        false,
		"packages/a.test.ts > rejects invalid cursor (385 ms)":        false, // only may be one
	} {
		if got := Trouble(line); got != want {
			t.Errorf("Trouble(%q) = %v, want %v", line, got, want)
		}
	}
}

func TestIdentifiers(t *testing.T) {
	text := "SQLSTATE 55P03 in internal/stock/reserve.go:42 after v1.22.3; ERR_CONN_RESET and ModuleNotFoundError, see OPS-2697 and #4512, HTTP 503, commit 3f9a2c1d."
	want := []string{"SQLSTATE 55P03", "internal/stock/reserve.go:42", "v1.22.3", "ERR_CONN_RESET", "ModuleNotFoundError", "OPS-2697", "#4512", "HTTP 503", "3f9a2c1d"}
	if diff := cmp.Diff(want, Identifiers(text)); diff != "" {
		t.Errorf("Identifiers (-want +got):\n%s", diff)
	}
	if got := Identifiers("nothing particular here"); len(got) != 0 {
		t.Errorf("Identifiers of plain prose = %q, want none", got)
	}
}

func TestWeightPrefersSpecificStrongStatements(t *testing.T) {
	strong := Weight("Don't rename anything in internal/comment, other repos import it", Constraint)
	weak := Weight("Keep going, you're on the right track.", Constraint)
	if strong <= weak {
		t.Errorf("a specific, strongly worded constraint weighs %d, not more than a weak one's %d", strong, weak)
	}
}

func TestSuccessMarksAreWholeWords(t *testing.T) {
	for line, want := range map[string]bool{
		"password authentication failed for user \"app\"": true,
		"PASS: TestReserve (0.01s)":                       false,
		"passed: 12, failed: 0":                           false,
	} {
		if got := ErrorLine(line); got != want {
			t.Errorf("ErrorLine(%q) = %v, want %v", line, got, want)
		}
	}
}

func TestNarrates(t *testing.T) {
	tests := []struct {
		sentence string
		want     bool
	}{
		{"Let me check what permission-gateway returns.", true},
		{"Looking at how RoleService is constructed.", true},
		{"Running it once more with the fix in place.", true},
		{"I want to see the callers in permission_core/audit too.", true},
		{"I'm reading the diff between the two versions.", true},
		{"It's a race between the cleanup job and the upload finishing.", false},
		{"I'll make the new flag default to off so nothing changes for existing users.", false},
		{"The slow query was missing the composite index (tenant_id, created_at).", false},
	}
	for _, tt := range tests {
		if got := Narrates(tt.sentence); got != tt.want {
			t.Errorf("Narrates(%q) = %v, want %v", tt.sentence, got, tt.want)
		}
	}
}

func TestPastes(t *testing.T) {
	text := "It fails.\n\nI get this when I run `make test`:\n\n```\nFAIL x\n\nok y\n```\nand with go vet:\n    vet: bad\n\n    vet: worse\nthen\n```\nunclosed"
	want := []Paste{
		{Lead: "I get this when I run `make test`:", Block: "FAIL x\n\nok y\n"},
		{Lead: "and with go vet:", Block: "    vet: bad\n    vet: worse\n"},
		{Lead: "then", Block: "unclosed\n"},
	}
	if diff := cmp.Diff(want, Pastes(text)); diff != "" {
		t.Errorf("Pastes (-want +got):\n%s", diff)
	}
}

func TestIntroducesRun(t *testing.T) {
	for _, tt := range []struct {
		lead string
		want bool
	}{
		{"I get this when I run `docker build --check .`:", true},
		{"`./scripts/release.sh` prints:", true},
		{"After `../bin/ctxc`:", true},
		{"Here's `main.go`:", false},
		{"I ran `make test` and it failed", false}, // no colon: not what introduces the block
		{"The output:", false},
		{"unbalanced `go test ./...:", false},
	} {
		if got := IntroducesRun(tt.lead); got != tt.want {
			t.Errorf("IntroducesRun(%q) = %v, want %v", tt.lead, got, tt.want)
		}
	}
}
