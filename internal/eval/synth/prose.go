package synth

import (
	"strings"
)

// Pools of prose templates; {slots} are filled from world.slots(). Several
// phrasings per idea and several ways of embedding them (see embed) keep a
// session from being one pattern.

// tasks are first tasks: the sentence that states the job.
var tasks = []string{
	"Add idempotency keys to POST {endpoint} so that retried requests don't create duplicate {nouns}",
	"The {pkg} tests have been flaky on CI for a week; find out why and fix it",
	"Migrate {pkg} from {lib} to {lib2}",
	"We're getting timeouts from {service} under load and I need you to find the cause",
	"Implement cursor-based pagination for GET {endpoint}",
	"Add per-tenant rate limiting to the public API, {n} requests per minute by default",
	"Split {file} into smaller files, it has grown past 1,800 lines",
	"Write a command that exports all {nouns} of a tenant to CSV",
	"Make {sym} safe for concurrent use; two workers call it at the same time in production",
	"Add a soft-delete to {nouns} instead of the hard DELETE we do now",
	"Track down the memory growth in the {project} worker, it gets OOM-killed every few hours",
	"Replace the hand-rolled retry loop in {file} with a proper backoff",
	"Expose {noun} history through {endpoint}, newest first",
	"Port the nightly {noun} reconciliation job from cron to the queue",
	"Get {testcmd} green again on {branch}",
	"Add structured audit logging for every change to a {noun}",
	"Cache the results of {sym} in {service}, they're recomputed on every request",
	"Review {file} and fix whatever makes {endpoint} return 500s",
}

var taskLeads = []string{"", "Hi! ", "Hey, ", "Morning. ", "Hello — ", "Ok so, ", "New task: ", "Next up: "}

// elaborations follow a task with context.
var elaborations = []string{
	"The code lives mostly in {pkg}, with the handlers in {file}.",
	"{person} wrote most of it last year, so the history in git is useful.",
	"Customers noticed it first; {ticket} has the details.",
	"It started after the {version} release.",
	"I already tried bumping the timeout, which did nothing.",
	"There's a half-finished attempt on {branch} that you can ignore.",
	"Production runs three replicas behind the load balancer.",
	"The relevant table is {table}, about 40M rows.",
	"Ping me if something is unclear; otherwise just go ahead.",
	"Start by reading {file}, that's where it goes wrong I think.",
	"No need to deploy anything, a PR is enough.",
}

// constraint is a clause the user requires or forbids; imperative clauses
// ("Keep X") take different lead-ins than statements ("X has to stay").
type constraintTmpl struct {
	text       string
	imperative bool
}

var constraints = []constraintTmpl{
	{"Keep the public API of {pkg} unchanged", true},
	{"The exported functions in {pkg} have to keep their signatures", false},
	{"Whatever you do, don't change the exported signatures in {pkg}", true},
	{"Don't add any new dependencies to {depfile}", true},
	{"No new third-party dependencies without asking me first", false},
	{"We can't take on new dependencies in {depfile} this quarter", false},
	{"Never log the raw {noun} payload, not even at debug level", true},
	{"Customer emails must never end up in the logs", false},
	{"Always run `{testcmd}` before you tell me something is done", true},
	{"Run `{testcmd}` after every change, not just at the end", true},
	{"Stick to the standard library for the HTTP client", true},
	{"Use {lib} for this, not {lib2}", true},
	{"No function in new code should be longer than {lines} lines", false},
	{"The response shape of {endpoint} has to stay exactly as it is, the mobile app parses it", false},
	{"The JSON field names of {endpoint} are a public contract", false},
	{"{nativeban}", false},
	{"Only touch files under {pkg}", true},
	{"Limit your changes to {pkg} and its tests", true},
	{"Leave {file} alone, {person}'s team owns it", true},
	{"Don't touch {file2}; it's generated", true},
	{"p99 latency of {endpoint} must stay under {ms} ms", false},
	{"The whole request has a budget of {ms} ms, so no extra round trips to {service}", false},
	{"Target {langver}; that's what production runs", true},
	{"It has to build with {langver}, we can't upgrade yet", false},
	{"Migrations must be backwards compatible: add columns, never rename or drop them in the same release", false},
	{"No schema change to {table} without a migration that can be rolled back", false},
	{"Keep commits small, one logical change each", true},
	{"Every exported symbol needs a doc comment", false},
	{"Don't modify the CI config in {cifile}", true},
	{"Error messages shown to users must not include internal ids", false},
	{"Retry at most {retries} times, with exponential backoff starting at {ms} ms", true},
	{"The worker has a memory limit of {mib} MiB, so don't load all {nouns} into memory at once", false},
	{"Put everything new behind the `{flag}` feature flag", true},
	{"Config comes from environment variables prefixed {prefix}_, never from constants in code", false},
	{"Don't change the wire format of the {noun} events on {service}", true},
	{"Tests must not hit the network; use the fakes in {pkg2}", false},
	{"Timestamps are UTC everywhere and stored as RFC 3339 strings", false},
	{"Batches are capped at {n} items", false},
	{"Never more than {n} {nouns} per batch", false},
	{"We are not allowed to store full card numbers, only the last four digits", false},
	{"Use table-driven tests like the rest of the repo", true},
	{"Avoid package-level state; pass dependencies explicitly", true},
	{"All SQL goes through the query builder in {pkg2}, no string concatenation", false},
	{"Don't bump {lib}; it's pinned on purpose, see {ticket}", true},
	{"The CLI flags are a public interface: additive changes only", false},
	{"Logs must be structured JSON with the request_id field", false},
	{"Cache entries expire after {minutes} minutes at the latest", false},
	{"The consumer has to stay idempotent, messages are delivered at least once", false},
	{"Anything that calls {service} needs a timeout of {secs}s or less", false},
	{"Coverage of {pkg} must not drop below {pct}%", false},
	{"Don't rename anything in {pkg}, other repos import it", true},
	{"Keep the old {endpoint} working until {date}", true},
	{"Do not deploy on {day}s", true},
	{"Stay away from reflection in the hot path", true},
	{"Make sure {sym} stays O(n); it runs on every request", true},
	{"Keep the default page size at {n}", true},
	{"The {noun} IDs stay opaque strings, clients must not parse them", false},
}

var imperativeLeads = []string{"Also, ", "One more thing: ", "Important: ", "And please ", "Oh, and ", "Reminder: ", "Please ", "Ground rule: ", "Note: ", "btw "}
var statementLeads = []string{"Also, ", "Note that ", "Just so you know, ", "Keep in mind that ", "FYI ", "Remember that ", "For context, ", "Heads-up: "}

// others are facts that are neither rules nor errors: names, hosts, numbers
// a user tells the agent once.
var others = []string{
	"The staging database is at {host}:{port}",
	"{person2} owns {service} and reviews anything that touches it",
	"Our SLO for {endpoint} is 99.9% over 30 days",
	"The release branch this goes into is release/{date}",
	"{ticket} is the ticket to reference in the PR",
	"The load test tenant is t_loadtest_{n}",
	"The on-call this week is {person2}",
	"Prod has about {n}k {nouns} per tenant at the 99th percentile",
	"The feature freeze starts on {date}",
	"The dashboard for this is called \"{project} / {noun} latency\"",
}

var followUps = []string{
	"Can you look at why {endpoint} got slower since {version}?",
	"{person2} reported that {sym} sometimes returns duplicates. Please check.",
	"Let's handle the {service} timeout explicitly instead of bubbling it up.",
	"Please add logging around the retry so we can see it in staging.",
	"The migration needs a down step too.",
	"I'd like the config for this in one place, not spread over three files.",
	"Rename {sym2} to something that says what it does.",
	"Are we sure {table} can take the extra write per request?",
	"Open a draft PR and paste the link.",
	"Let's pause the refactor and fix the bug first.",
	"Now add tests for {sym}.",
	"Can you also handle the case where the {noun} was already cancelled?",
	"Looks good. Next, wire it into {endpoint}.",
	"What happens if {service} is down when this runs?",
	"Please refactor {sym} so the retry logic isn't duplicated.",
	"Let's also expose a metric for this, a counter per tenant.",
	"{person} asked whether we can make the timeout configurable.",
	"OK. Can you double-check the migration against {table}?",
	"Update the README section about {nouns} to match.",
	"Run the full suite again, I merged main into the branch.",
	"Why did you pick that approach over doing it in {sym2}?",
	"The reviewer says {sym} is too long. Split it?",
	"Add a benchmark for {sym}, I want numbers before we merge.",
	"Try it against the staging data and tell me what you see.",
	"Can you check how {sym2} behaves with an empty tenant?",
	"Let's clean up: remove the debug logging you added.",
	"Make the error for an unknown {noun} a 404 instead of a 500.",
	"Good catch. Fix that too while you're there.",
	"Now do the same for {file2}.",
	"I rebased on main; please resolve anything that broke.",
	"What's left before we can open the PR?",
	"Write the PR description.",
	"Hmm, CI is red again. Look at the failing job.",
	"Can you explain what {sym2} actually does? I never understood it.",
	"Let's add a regression test for the bug we just fixed.",
	"Check whether {lib} already has a helper for this.",
	"Go ahead with the plan.",
	"yes, do it",
	"ok, continue",
	"Perfect, ship it. Actually wait — run the linter first.",
}

var fillers = []string{
	"I've been staring at this since the morning.",
	"No rush on this one.",
	"Thanks, that helped a lot.",
	"The customer who reported it is on the enterprise plan, so it matters.",
	"{person} is out tomorrow, so I'd like to get this reviewed today.",
	"Sorry for the wall of text.",
	"It's probably something silly.",
	"We discussed it in standup and nobody had a better idea.",
	"I'm on a train, so my answers may be slow.",
	"Not sure this is related, but mentioning it anyway.",
	"This part of the code is older than most of the team.",
	"Honestly I'd rather not touch the legacy path at all if we can avoid it.",
	"Let me know if you need access to anything.",
	"The last time someone changed this we had an incident, hence the caution.",
	"I'll be in meetings for an hour.",
	"Great progress so far.",
	"There was a similar bug in {service} last month.",
	"Keep going, you're on the right track.",
}

var pastedIntros = []string{
	"Here's what I see locally:",
	"CI output:",
	"Pasting the log from the failing run:",
	"This is what {person} sent me:",
	"From the staging box:",
	"Relevant bit of the log:",
}

var questions = []string{
	"Why is {sym} called twice per request?",
	"Is there a reason {table} has no index on tenant_id?",
	"Do we still need {file2}?",
	"How does {lib} handle cancellation?",
	"What would break if we dropped the cache in front of {service}?",
	"Which of the two approaches is less risky?",
}

// pinnedNotes are team notes sent pinned; their lines marked with * are facts.
var pinnedNotes = [][]string{
	{"Team rules for {project} (pinned):", "*Deploys only in the window {day} 14:00–16:00 UTC", "*Every PR needs one approval from {person2}", "Use conventional commit messages", "Ask in #{project} if unsure"},
	{"PINNED — read before changing anything:", "*Production database migrations are run by {person2}, never by CI", "*The {service} API key lives in Vault at secret/{project}/{noun}, never in the repo", "Staging resets every night at 02:00 UTC"},
	{"Standing instructions:", "*Never force-push to main or release branches", "*Incidents go to the #inc-{project} channel with the {ticket} prefix", "Prefer small PRs"},
	{"Note to self and the agent (keep this):", "*The freeze for the {version} release starts {date}", "*Anything touching billing needs sign-off from {person2}", "Document decisions in docs/adr/"},
	{"House rules:", "*All new endpoints need an OpenAPI entry in api/openapi.yaml", "*Feature flags are removed within two releases of launch", "*Error budgets are reviewed every {day}"},
}

var narrations = []string{
	"Let me look at {file} first.",
	"I'll check how {sym} is used before changing it.",
	"Checking the tests around {sym}.",
	"Let me reproduce it.",
	"Running the tests to see where we stand.",
	"I'll search for other callers of {sym}.",
	"Reading the handler and the store together.",
	"Let me look at the recent changes to {pkg}.",
	"I need to see the schema of {table}.",
	"Now I'll apply the change.",
	"Let me check what {service} returns.",
	"First, the current behaviour.",
	"Looking at how {type} is constructed.",
	"I want to see the callers in {pkg2} too.",
	"Next: the tests.",
	"Checking staging.",
	"",
	"",
	"",
}

var reasonings = []string{
	"The failure mentions {sym}; the most likely culprit is the shared cache. I should read {file} and its test before guessing.",
	"Two options: change {sym} or wrap its callers. Wrapping touches fewer files, but the bug is inside.",
	"The user asked to keep things small. I will make the narrowest change that fixes it.",
	"If {service} is slow, the retries multiply the latency; check the backoff.",
}

// decisions are what the assistant concludes or chooses, in varied forms.
var decisions = []string{
	"I'll go with a {lib}-based implementation instead of extending {sym}, since it already handles cancellation",
	"Going with {lockchoice}, because writes dominate",
	"Decision: the cursor encodes (updated_at, id) so that ties don't skip rows",
	"The plan is to move validation into {sym} and keep the handler thin",
	"I settled on storing the idempotency key in {table} with a unique index",
	"Root cause: {sym} reads the {noun} before taking the row lock, so two workers see the same version",
	"Conclusion: the flaky test depends on map iteration order in {file}",
	"So the timeouts come from the connection pool being capped at {n} connections",
	"{sym} will return a typed error, and the handler maps it to a 409",
	"Let's keep the old code path behind the flag and delete it in the next release",
	"After comparing both, batching the writes wins: one round trip instead of {n}",
	"We'll retry only on {service} 5xx responses, never on 4xx",
	"The fix is to close the response body in {sym}; the leak was the unread body",
	"I'm not going to cache errors, only successful lookups",
	"It turns out {file2} is dead code, so I'll delete it rather than port it",
	"Chose exponential backoff with full jitter, capped at {secs}s",
	"Best option: a partial index on {table} (tenant_id) WHERE deleted_at IS NULL",
	"The new endpoint reuses {sym2} instead of duplicating the query",
	"Soft-deleted {nouns} will be excluded in the repository layer, not in each handler",
	"I've decided against {bgtask} here; a per-request timeout is enough",
	"Instead of a global lock, each tenant gets its own lock",
	"The migration adds the column as nullable first; the backfill runs separately",
	"We keep the {endpoint} response as is and add the new field under meta",
	"Moving the CSV writing to a streaming writer, so memory stays flat",
}

var decisionForms = []string{"%s.", "%s.", "So: %s.", "Decision made: %s.", "%s. That's the approach.", "OK — %s.", "Summary of the approach: %s.", "My call: %s.", "%s, which keeps the change small."}

var retryNarrations = []string{
	"Retrying after the fix.",
	"Trying that again.",
	"Let me re-run it now.",
	"Second attempt.",
	"Running it once more with the fix in place.",
}

// replies answer a turn that needed no tool: a question, an
// acknowledgement, a note.
var replies = []string{
	"Noted.",
	"Got it, I'll keep that in mind for the rest of the work.",
	"Understood.",
	"Good question. {sym} is called once from the handler and once from the retry path in {file}; the second call is the one that re-reads the row.",
	"There's no index because the table predates multi-tenancy; adding one is cheap, but it needs a migration.",
	"Short answer: nothing breaks immediately, but latency for {endpoint} would roughly double.",
	"Yes — {lib} handles cancellation through the context it's given; we just never pass one.",
	"The lower-risk option is the second one: it touches only {pkg}.",
	"OK, continuing with the plan.",
	"Sure. I'll wait for {person} before touching {file2}.",
}

// explanations answer a question, after or without tool calls.
var explanationOpeners = []string{"Here's how it works:", "Short version:", "I looked into it.", "Answer:", "So, to your question:", "Having read the code:"}

var explanations = []string{
	"{sym} loads the {noun} row, checks its status and then calls {sym2}; the retry wrapper in {file} re-enters it on timeout.",
	"It exists because {service} used to drop writes under load; {person} added it around {version}.",
	"The cache key is per tenant, so two tenants never share an entry.",
	"It batches up to {n} {nouns} and flushes when the batch is full or after {secs}s, whichever comes first.",
	"The handler validates the request, then {sym} does the work inside one transaction.",
	"Nothing calls {sym2} any more except its own tests.",
	"The second call comes from the middleware in {file2}, which re-reads the {noun} to build the audit entry.",
	"{table} has an index on (tenant_id, id) but not on updated_at, so the nightly query scans.",
	"Dropping it would double the load on {service}; the hit rate is around {pct}%.",
	"The less risky option is the one that touches only {pkg}: it has the better tests.",
}

var resolutions = []string{
	"That fixed it; the earlier failure is gone.",
	"Green now.",
	"The retry went through this time.",
	"Resolved: it was the missing setup step.",
	"Works after the change.",
	"The error from before no longer shows up.",
}

var finalOpeners = []string{
	"Done.", "Here's what I changed:", "All set.", "Summary:", "Finished — details below.",
	"I made the change.", "Status update:", "OK, that's in.", "Here's where things stand:",
}

var finalBullets = []string{
	"- {file}: {sym} now takes a context and honours its deadline",
	"- added a test for {sym} covering the empty-tenant case",
	"- {sym2} no longer allocates per item",
	"- the handler returns 404 for unknown {nouns}",
	"- removed the unused helper in {file2}",
	"- the migration for {table} is additive only",
	"- `{testcmd}` passes locally",
	"- updated the docs for {endpoint}",
	"- metrics: {noun}_requests_total gains a tenant label",
	"- {file} was split into three files along the existing sections",
}

var finalClosers = []string{
	"Let me know if you want me to open the PR.",
	"Next step would be the README.",
	"I didn't touch anything outside the scope you gave me.",
	"One open question: should the limit be per tenant or per API key?",
	"The remaining failure is unrelated (see above).",
	"",
	"",
}

var events = []string{
	"CI: pipeline #{n}0{n} on {branch} failed at job `lint` (exit code 1)",
	"CI: pipeline on {branch} passed ({n} tests)",
	"Deploy of {project} {version} to staging finished",
	"PagerDuty: incident {ticket} acknowledged by {person2}",
	"{person2} commented on the PR: \"can we add a test for the retry path?\"",
	"Dependabot opened a PR bumping {lib}",
	"Reminder: code freeze starts {date}",
}

// embedConstraint embeds a constraint clause in a sentence (or a list item)
// and returns the sentence and the clause exactly as it appears (the fact
// text).
func (g *gen) embedConstraint(c constraintTmpl, slots map[string]string, asItem bool) (sentence, clause string) {
	r := g.r
	text := fill(c.text, slots)
	if asItem {
		switch r.IntN(5) {
		case 0:
			return "**" + text + "**", text
		case 1:
			return text + pick(r, []string{" (this bit us before)", " — no exceptions", ", please"}), text
		}
		return text, text
	}
	switch r.IntN(6) {
	case 0, 1:
		return text + ".", text
	case 2:
		leads := statementLeads
		if c.imperative {
			leads = imperativeLeads
		}
		lead := pick(r, leads)
		clause = lowerFirst(text)
		return lead + clause + ".", clause
	case 3:
		return "**" + text + ".**", text
	case 4:
		return text + pick(r, []string{" — this one matters.", ", please.", " (this bit us before).", "; I mean it.", ", no exceptions."}), text
	default:
		return pick(r, []string{"Ground rule for this one: ", "One constraint: ", "Hard requirement — ", "To be clear: "}) + lowerFirst(text) + ".", lowerFirst(text)
	}
}

// paragraph joins sentences, sometimes as a list.
func (g *gen) paragraph(sentences []string, asList bool) string {
	if asList {
		var b strings.Builder
		for _, s := range sentences {
			b.WriteString("- " + strings.TrimSuffix(s, ".") + "\n")
		}
		return strings.TrimSuffix(b.String(), "\n")
	}
	return strings.Join(sentences, " ")
}
