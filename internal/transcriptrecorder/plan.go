package main

import (
	"regexp"
	"strings"
)

// action is one tool call of the scripted model, in terms every agent's tools
// can carry out (each dialect maps it to its own tools).
type action struct {
	// say is the text the model writes before the call.
	say string
	// Exactly one of these.
	bash  string // a shell command run in the workspace
	read  string // a file to read, relative to the workspace (or absolute)
	edit  *edit
	write *write
	// readNamed reads the first file a file:line location of the previous
	// tool output names (the model reacting to what the compiler said).
	readNamed bool
}

type edit struct{ path, old, new string }

type write struct{ path, content string }

// step is an action and, when set, the condition on the previous tool output
// under which it runs; the turn ends with its final answer at the first step
// whose condition does not hold.
type step struct {
	act  action
	when func(prev string) bool
}

type turn struct {
	user  string
	steps []step
	final string
}

func bash(say, cmd string) step  { return step{act: action{say: say, bash: cmd}} }
func read(say, path string) step { return step{act: action{say: say, read: path}} }
func change(say, path, old, new string) step {
	return step{act: action{say: say, edit: &edit{path, old, new}}}
}
func create(say, path, content string) step {
	return step{act: action{say: say, write: &write{path, content}}}
}

// readNamedIf reads the file the previous output names when it says failed.
func readNamedIf(say string) step {
	return step{act: action{say: say, readNamed: true}, when: failed}
}

func (s step) onlyIf(cond func(string) bool) step { s.when = cond; return s }

// failed says whether a tool output reports a failure (the model's reading of
// it, for the script's branches).
func failed(out string) bool {
	for _, w := range []string{"FAIL", "panic:", "DATA RACE", "error", "undefined", "not used", "wrong type", "passes lock", "cannot", "mismatch", "not defined", "not found", "timed out"} {
		if strings.Contains(out, w) {
			return true
		}
	}
	return false
}

func passed(out string) bool { return !failed(out) }

var location = regexp.MustCompile(`([A-Za-z0-9_./-]+\.go):\d+`)

// namedFile is the first Go file of the project a file:line location of out
// names (a trace's frames in the Go tree are passed over).
func namedFile(out, goroot string) string {
	for _, m := range location.FindAllStringSubmatch(out, -1) {
		if !strings.HasPrefix(m[1], goroot) && !strings.HasSuffix(m[1], "_testmain.go") {
			return strings.TrimPrefix(m[1], "./")
		}
	}
	return ""
}

// The session's turns: a user's requests with constraints and decisions in
// their own words, and what the model does about each. A 12-turn session
// plays the first twelve.
var turns = []turn{
	{
		user: "The build has been broken since yesterday's merge. Run go build ./..., find out why and fix it. We have to stay on Go 1.22, so don't touch the go directive in go.mod.",
		steps: []step{
			bash("I'll start by building everything to see the errors.", "go build ./..."),
			readNamedIf("The compiler points at the config package; let me read it."),
			change("Dropping the unused import.", "internal/config/config.go", "\t\"fmt\"\n\t\"os\"\n\t\"strconv\"", "\t\"fmt\"\n\t\"strconv\""),
			change("The decoder is called decode, not decodeConfig.", "internal/config/config.go", "cfg, err := decodeConfig(data)", "cfg, err := decode(data)"),
			change("DueDaysFrom must return the parsed number, not the string.", "internal/config/config.go", "\tprevLen := len(value)\n\tn := value\n\tif _, err := strconv.Atoi(n); err != nil {", "\tn, err := strconv.Atoi(value)\n\tif err != nil {"),
			bash("Rebuilding.", "go build ./... && echo build ok"),
		},
		final: "The build passes again. internal/config/config.go had four compile errors: the unused \"os\" import, a call to decodeConfig, which does not exist (the function is decode), the unused prevLen, and DueDaysFrom returned the string n where an int was due; it now returns strconv.Atoi's result. go.mod still says go 1.22.",
	},
	{
		user: "Good. Now run go vet on the whole module. Never silence a vet finding with a nolint comment or by turning the check off; fix the code instead.",
		steps: []step{
			bash("Running vet.", "go vet ./..."),
			readNamedIf("Vet flags the report package; reading it."),
			change("The header passed the title where it meant the number of invoices.", "internal/report/report.go", "\"%s: %d invoices\\n\", title, title)", "\"%s: %d invoices\\n\", title, len(lines))"),
			bash("Vetting again.", "go vet ./... && echo vet ok"),
		},
		final: "go vet is clean. Its finding was in internal/report/report.go: fmt.Fprintf's %d was given the title, a string; the header now prints len(lines), the number of invoices, as intended.",
	},
	{
		user: "Run the tests of parse, ledger and counter and tell me what fails. Don't fix anything yet, I want to see the failures first.",
		steps: []step{
			bash("Running the three packages' tests.", "go test ./internal/parse/ ./internal/ledger/ ./internal/counter/"),
			read("Reading the parser the failures point at.", "internal/parse/parse.go"),
		},
		final: "Two packages fail. internal/parse: TestParseQuantity fails on \"12 pcs\" (ParseQuantity returns 0 because strconv.Atoi rejects the unit), and TestSplitLine panics with index out of range [1] with length 1 when a line has no ';'. internal/ledger: TestCharge panics with assignment to entry in nil map, since the zero Ledger has no map. internal/counter passes. Should ParseQuantity accept unit suffixes like \"12 pcs\"?",
	},
	{
		user: "Yes: quantities may carry a unit suffix such as pcs or kg, and the parser must strip it. Only touch internal/parse for this change.",
		steps: []step{
			read("Reading the parser again before editing.", "internal/parse/parse.go"),
			change("ParseQuantity now reads the first field, so a unit suffix is ignored.", "internal/parse/parse.go", "\tn, err := strconv.Atoi(strings.TrimSpace(s))", "\tfields := strings.Fields(s)\n\tif len(fields) == 0 {\n\t\treturn 0\n\t}\n\tn, err := strconv.Atoi(fields[0])"),
			bash("Testing the package.", "go test ./internal/parse/"),
		},
		final: "TestParseQuantity passes now: the quantity is the first field, so \"12 pcs\" reads 12. The package still panics in TestSplitLine (index out of range [1] with length 1) on a line without a separator; I have not touched that yet.",
	},
	{
		user: "Fix that panic as well. No panics in library code: return an error instead and let the caller decide what to do.",
		steps: []step{
			read("Reading SplitLine.", "internal/parse/parse.go"),
			change("SplitLine returns an error for a line without a separator.", "internal/parse/parse.go",
				"// SplitLine splits a line into its customer and the rest.\nfunc SplitLine(line string) (customer, rest string) {\n\tparts := strings.SplitN(line, \";\", 2)\n\treturn parts[0], parts[1]\n}",
				"// SplitLine splits a line into its customer and the rest; a line without\n// a separator is an error.\nfunc SplitLine(line string) (customer, rest string, err error) {\n\tparts := strings.SplitN(line, \";\", 2)\n\tif len(parts) != 2 {\n\t\treturn \"\", \"\", fmt.Errorf(\"parse: %q has no ';' separator\", line)\n\t}\n\treturn parts[0], parts[1], nil\n}"),
			change("It needs fmt now.", "internal/parse/parse.go", "import (\n\t\"strconv\"", "import (\n\t\"fmt\"\n\t\"strconv\""),
			read("The test has to follow the new signature.", "internal/parse/parse_test.go"),
			change("Updating the test.", "internal/parse/parse_test.go",
				"\tcustomer, rest := SplitLine(\"acme;3;1200\")\n\tif customer != \"acme\" || rest != \"3;1200\" {",
				"\tcustomer, rest, err := SplitLine(\"acme;3;1200\")\n\tif err != nil || customer != \"acme\" || rest != \"3;1200\" {"),
			change("A line without a separator must now be an error.", "internal/parse/parse_test.go",
				"\tcustomer, _ = SplitLine(\"no separator\")\n\tif customer != \"no separator\" {\n\t\tt.Fatalf(\"SplitLine without separator = %q\", customer)\n\t}",
				"\tif _, _, err := SplitLine(\"no separator\"); err == nil {\n\t\tt.Fatal(\"SplitLine without separator: no error\")\n\t}"),
			bash("Testing the package.", "go test ./internal/parse/"),
			bash("And the whole build, since the signature changed.", "go build ./..."),
		},
		final: "internal/parse passes and no longer panics: SplitLine returns an error for a line without ';'. The new signature broke its only caller, cmd/invoicer/main.go (assignment mismatch: 2 variables but parse.SplitLine returns 3 values). You said to touch only internal/parse; may I update cmd/invoicer too?",
	},
	{
		user: "Yes, update cmd/invoicer. Bad lines should be reported on stderr with their line number and skipped; a bad line must never abort the run.",
		steps: []step{
			read("Reading the command.", "cmd/invoicer/main.go"),
			change("Bad lines are reported with their number and skipped.", "cmd/invoicer/main.go",
				"\tfor sc.Scan() {\n\t\tcustomer, rest := parse.SplitLine(sc.Text())\n",
				"\tfor n := 1; sc.Scan(); n++ {\n\t\tcustomer, rest, err := parse.SplitLine(sc.Text())\n\t\tif err != nil {\n\t\t\tfmt.Fprintf(os.Stderr, \"line %d: %v\\n\", n, err)\n\t\t\tcontinue\n\t\t}\n"),
			bash("Building and running it on the sample file.", "go build ./... && go run ./cmd/invoicer -file testdata/invoices.txt | head -5"),
		},
		final: "cmd/invoicer builds and runs again. A line without a separator is now reported on stderr as \"line N: parse: ... has no ';' separator\" and skipped; the run goes on.",
	},
	{
		user: "Now the ledger panic. Run its test verbosely so we see the whole trace.",
		steps: []step{
			bash("Running the ledger test with -v.", "go test -v ./internal/ledger/"),
			readNamedIf("The trace points into the ledger; reading it."),
		},
		final: "The zero Ledger has a nil balances map, so the first Charge panics with \"assignment to entry in nil map\". Two ways out: a New constructor that makes the map, or making the map lazily in Charge so the zero value stays usable. I would keep the zero value usable.",
	},
	{
		user: "Agreed, the zero value must stay usable; initialise the map lazily in Charge. We don't want a constructor for this.",
		steps: []step{
			read("Reading the ledger before the change.", "internal/ledger/ledger.go"),
			change("Charge makes the map on first use.", "internal/ledger/ledger.go", "\tl.balances[customer] += cents", "\tif l.balances == nil {\n\t\tl.balances = make(map[string]int64)\n\t}\n\tl.balances[customer] += cents"),
			bash("Testing the ledger.", "go test ./internal/ledger/"),
		},
		final: "internal/ledger passes: Charge makes the balances map on first use, so a zero Ledger works and there is no constructor.",
	},
	{
		user: "Run the packages we touched with the race detector.",
		steps: []step{
			bash("Running them under -race.", "go test -race ./internal/parse/ ./internal/ledger/ ./internal/counter/"),
			read("The race is in the counter; reading it.", "internal/counter/counter.go").onlyIf(failed),
		},
		final: "The race detector reports a data race in internal/counter: Counter.Inc does c.n++ from several goroutines without synchronization (TestConcurrentInc). It can be fixed with sync/atomic or with a mutex; which do you prefer?",
	},
	{
		user: "Let's use a sync.Mutex rather than atomics; the team finds it easier to read, and that's the decision for the other counters too.",
		steps: []step{
			read("Reading the counter before the change.", "internal/counter/counter.go"),
			change("Counter guards n with a mutex.", "internal/counter/counter.go",
				"// Package counter counts invoices as they are issued.\npackage counter\n\n// Counter counts issued invoices; it is shared by the issuing goroutines.\ntype Counter struct {\n\tn int\n}\n\n// Inc counts one more invoice.\nfunc (c *Counter) Inc() {\n\tc.n++\n}\n\n// Value is the number counted so far.\nfunc (c *Counter) Value() int {\n\treturn c.n\n}",
				"// Package counter counts invoices as they are issued.\npackage counter\n\nimport \"sync\"\n\n// Counter counts issued invoices; it is shared by the issuing goroutines.\ntype Counter struct {\n\tmu sync.Mutex\n\tn  int\n}\n\n// Inc counts one more invoice.\nfunc (c *Counter) Inc() {\n\tc.mu.Lock()\n\tdefer c.mu.Unlock()\n\tc.n++\n}\n\n// Value is the number counted so far.\nfunc (c *Counter) Value() int {\n\tc.mu.Lock()\n\tdefer c.mu.Unlock()\n\treturn c.n\n}"),
			bash("Testing under -race.", "go test -race ./internal/counter/"),
			bash("And vet, since Counter now holds a lock.", "go vet ./..."),
		},
		final: "The counter is race-free with a sync.Mutex. But go vet now reports that ledger.Snapshot passes lock by value: it takes a counter.Counter, which contains a sync.Mutex, by value.",
	},
	{
		user: "Fix that vet finding too. And remember for the rest of this work: never copy a Counter, always pass a pointer.",
		steps: []step{
			read("Reading the ledger.", "internal/ledger/ledger.go"),
			change("Snapshot takes a pointer.", "internal/ledger/ledger.go", "func Snapshot(c counter.Counter) int {", "func Snapshot(c *counter.Counter) int {"),
			bash("Vet and the race detector over what we touched.", "go vet ./... && go test -race ./internal/parse/ ./internal/ledger/ ./internal/counter/"),
		},
		final: "go vet is clean and the touched packages pass under -race. Snapshot now takes a *counter.Counter.",
	},
	{
		user: "Summarize what we changed and what is still open. The commit message must reference ticket INV-142.",
		steps: []step{
			bash("Checking what changed.", "git status --short && git diff --stat"),
		},
		final: "Changed: internal/config (four compile errors), internal/report (vet: %d given a string), internal/parse (unit suffixes; SplitLine returns an error instead of panicking), cmd/invoicer (bad lines reported and skipped), internal/ledger (lazy map; Snapshot takes a pointer), internal/counter (sync.Mutex). Open: internal/money, internal/store, internal/httpapi and internal/dates have not been tested yet. Commit message: \"INV-142: fix build, vet findings, parser panic, ledger nil map and counter race\".",
	},
	// Turns 13 to 40.
	{
		user: "Next, internal/money. Its tests have been failing on CI since Tuesday, that's ticket INV-150. Run them.",
		steps: []step{
			bash("Running the money tests.", "go test ./internal/money/"),
			read("Reading Percent.", "internal/money/money.go"),
		},
		final: "TestPercent fails: Percent(1999, 15) = 299, want 300, and Percent(5, 50) = 2, want 3. Integer division truncates, so the result is rounded down instead of to the nearest cent.",
	},
	{
		user: "Round half up, like the accountants do. Amounts are always integer cents; never use float64 for money.",
		steps: []step{
			read("Reading it again before the change.", "internal/money/money.go"),
			change("Adding half the divisor rounds half up in integers.", "internal/money/money.go", "\treturn cents * pct / 100", "\treturn (cents*pct + 50) / 100"),
			bash("Testing.", "go test ./internal/money/"),
		},
		final: "TestPercent passes. Percent adds 50 before dividing by 100, which rounds half up in integer cents, with no float64.",
	},
	{
		user: "Add a test case for exactly half a cent, for instance 10 cents at 5 percent.",
		steps: []step{
			read("Reading the test table.", "internal/money/money_test.go"),
			change("Adding the half-cent case.", "internal/money/money_test.go", "\t\t{5, 50, 3},\n", "\t\t{5, 50, 3},\n\t\t{10, 5, 1},\n"),
			bash("Running it verbosely.", "go test -run TestPercent -v ./internal/money/"),
		},
		final: "Added {10, 5, 1}: 10 cents at 5% is half a cent, rounded up to 1. TestPercent passes.",
	},
	{
		user: "Run staticcheck over the module.",
		steps: []step{
			bash("Running staticcheck.", "staticcheck ./..."),
		},
		final: "staticcheck is not installed on this machine (command not found, exit status 127). I could install it with go install honnef.co/go/tools/cmd/staticcheck@latest; shall I?",
	},
	{
		user: "No, don't install anything new on this machine. go vet is enough for now.",
		steps: []step{
			bash("Running go vet instead.", "go vet ./... && echo vet ok"),
		},
		final: "Understood, nothing installed. go vet ./... is clean.",
	},
	{
		user: "internal/store hangs in CI. Run its tests with a 10-second timeout.",
		steps: []step{
			bash("Running with -timeout 10s.", "go test -timeout 10s ./internal/store/"),
			read("Reading the store.", "internal/store/store.go"),
		},
		final: "TestTotal hangs until the timeout (panic: test timed out after 10s): Stream's goroutine never closes the channel, so Total's range loop waits forever. Closing the channel when the producer is done fixes it; a buffered channel would not.",
	},
	{
		user: "Don't make the channel buffered, that would only hide it. Close the channel when the producer is done; that's the fix we want.",
		steps: []step{
			read("Reading it before the change.", "internal/store/store.go"),
			change("The producer closes the channel when it is done.", "internal/store/store.go", "\tgo func() {\n\t\tfor _, inv := range invoices {", "\tgo func() {\n\t\tdefer close(ch)\n\t\tfor _, inv := range invoices {"),
			bash("Testing with the timeout.", "go test -timeout 10s ./internal/store/"),
		},
		final: "internal/store passes: Stream's goroutine closes the channel when it has sent every invoice, so Total's loop ends. The channel stays unbuffered.",
	},
	{
		user: "How does strconv.Atoi report a number that is too large? Look it up in the Go sources, I want the exact error text.",
		steps: []step{
			bash("Searching the strconv sources.", "grep -rn \"value out of range\" \"$(go env GOROOT)/src/strconv\" \"$(go env GOROOT)/src/internal/strconv\""),
			read("ErrRange is declared in number.go; reading it.", "$GOROOT/src/strconv/number.go"),
			read("The parsing itself lives in internal/strconv.", "$GOROOT/src/internal/strconv/atoi.go"),
		},
		final: "Atoi returns a *strconv.NumError whose Err is strconv.ErrRange; its text reads: strconv.Atoi: parsing \"99999999999999999999\": value out of range.",
	},
	{
		user: "Make DueDaysFrom reject more than 365 days with a clear error. Values above that are always typos in our config.",
		steps: []step{
			read("Reading the config package.", "internal/config/config.go"),
			change("Rejecting more than 365 days.", "internal/config/config.go", "\t\treturn 0, fmt.Errorf(\"config: due days %q: %w\", value, err)\n\t}\n\treturn n, nil", "\t\treturn 0, fmt.Errorf(\"config: due days %q: %w\", value, err)\n\t}\n\tif n > 365 {\n\t\treturn 0, fmt.Errorf(\"config: due days %d is more than a year\", n)\n\t}\n\treturn n, nil"),
			bash("Building.", "go build ./... && echo build ok"),
		},
		final: "DueDaysFrom now rejects more than 365 days with \"config: due days N is more than a year\".",
	},
	{
		user: "Write a test for that in internal/config/config_test.go. Our test names follow the TestFunc_Case form.",
		steps: []step{
			create("Writing the tests.", "internal/config/config_test.go", "package config\n\nimport (\n\t\"strings\"\n\t\"testing\"\n)\n\nfunc TestDueDaysFrom_Valid(t *testing.T) {\n\tif n, err := DueDaysFrom(\"30\"); err != nil || n != 30 {\n\t\tt.Fatalf(\"DueDaysFrom(30) = %d, %v\", n, err)\n\t}\n}\n\nfunc TestDueDaysFrom_TooLarge(t *testing.T) {\n\t_, err := DueDaysFrom(\"400\")\n\tif err == nil || !strings.Contains(err.Error(), \"more than 365 days\") {\n\t\tt.Fatalf(\"DueDaysFrom(400) error = %v\", err)\n\t}\n}\n"),
			bash("Running them.", "go test ./internal/config/"),
			read("The message differs from what the test expects; reading the code.", "internal/config/config.go").onlyIf(failed),
			change("Making the message name the limit.", "internal/config/config.go", "\"config: due days %d is more than a year\"", "\"config: due days %d: more than 365 days\""),
			bash("Running them again.", "go test ./internal/config/"),
		},
		final: "internal/config/config_test.go has TestDueDaysFrom_Valid and TestDueDaysFrom_TooLarge. The second failed at first because the message said \"more than a year\"; it now says \"config: due days 400: more than 365 days\", and both pass.",
	},
	{
		user: "Now internal/httpapi: POST /invoices with broken JSON answers 500, it should be 400. Run the handler tests.",
		steps: []step{
			bash("Running the handler tests.", "go test ./internal/httpapi/"),
			read("Reading the handler.", "internal/httpapi/handler.go"),
		},
		final: "TestCreateInvoiceBadJSON fails with status = 500, want 400: CreateInvoice answers every decode error with http.StatusInternalServerError.",
	},
	{
		user: "Map decode errors to 400 and keep 500 for store errors only. Don't leak the Go error text to clients.",
		steps: []step{
			read("Reading the handler before the change.", "internal/httpapi/handler.go"),
			change("Bad JSON is the client's fault: 400, with a fixed message.", "internal/httpapi/handler.go", "\t\tif err := json.NewDecoder(r.Body).Decode(&inv); err != nil {\n\t\t\thttp.Error(w, err.Error(), http.StatusInternalServerError)", "\t\tif err := json.NewDecoder(r.Body).Decode(&inv); err != nil {\n\t\t\thttp.Error(w, \"invalid invoice JSON\", http.StatusBadRequest)"),
			change("Store errors stay 500, without the error text.", "internal/httpapi/handler.go", "\t\tif err := s.Save(inv); err != nil {\n\t\t\thttp.Error(w, err.Error(), http.StatusInternalServerError)", "\t\tif err := s.Save(inv); err != nil {\n\t\t\thttp.Error(w, \"could not save the invoice\", http.StatusInternalServerError)"),
			bash("Testing.", "go test ./internal/httpapi/"),
		},
		final: "internal/httpapi passes: broken JSON gets 400 \"invalid invoice JSON\", a store failure 500 \"could not save the invoice\"; neither shows the Go error text.",
	},
	{
		user: "Run the invoicer on testdata/invoices.txt with the flag -input.",
		steps: []step{
			bash("Running it.", "go run ./cmd/invoicer -input testdata/invoices.txt"),
		},
		final: "It stops at once: flag provided but not defined: -input (exit status 2). The command's flag is -file.",
	},
	{
		user: "Rename the flag to -input then; -file is too vague. Keep -file working as a deprecated alias until v0.9.0.",
		steps: []step{
			read("Reading the command.", "cmd/invoicer/main.go"),
			change("-input is the flag; -file stays as an alias.", "cmd/invoicer/main.go", "\tfile := flag.String(\"file\", \"testdata/invoices.txt\", \"invoice lines, one per line\")\n\tflag.Parse()", "\tfile := flag.String(\"input\", \"testdata/invoices.txt\", \"invoice lines, one per line\")\n\tflag.StringVar(file, \"file\", \"testdata/invoices.txt\", \"deprecated: use -input (removed in v0.9.0)\")\n\tflag.Parse()"),
			bash("Trying both flags.", "go run ./cmd/invoicer -input testdata/invoices.txt | tail -2 && go run ./cmd/invoicer -file testdata/invoices.txt | tail -1"),
		},
		final: "-input is the flag now, and -file still works, documented as deprecated until v0.9.0.",
	},
	{
		user: "internal/dates fails on the dates our bank exports. Run its tests.",
		steps: []step{
			bash("Running them.", "go test ./internal/dates/"),
			read("Reading the parser.", "internal/dates/dates.go"),
		},
		final: "TestParseBankDate fails: parsing time \"2026-03-01\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\" as \"T\". ParseBankDate uses time.RFC3339, which needs a time of day.",
	},
	{
		user: "The bank sends plain dates like 2026-03-01, never a time of day. Accept only that layout and reject anything else.",
		steps: []step{
			read("Reading it before the change.", "internal/dates/dates.go"),
			change("Only the date layout.", "internal/dates/dates.go", "\treturn time.Parse(time.RFC3339, s)", "\treturn time.Parse(time.DateOnly, s)"),
			bash("Testing.", "go test ./internal/dates/"),
		},
		final: "internal/dates passes: ParseBankDate reads only time.DateOnly (2006-01-02), so anything with a time of day is rejected.",
	},
	{
		user: "Run everything with the race detector and coverage.",
		steps: []step{
			bash("Running the whole module.", "go test -race -cover ./..."),
		},
		final: "Every package passes under -race; coverage is printed per package above.",
	},
	{
		user: "Which packages are below 60% coverage? We only care about internal/.",
		steps: []step{
			bash("Listing coverage of internal/.", "go test -cover ./internal/... | sort -t: -k2"),
		},
		final: "See the list above: the packages under 60% are the ones whose tests cover only one path (report has no tests at all).",
	},
	{
		user: "Show me the full diff of internal/parse.",
		steps: []step{
			bash("The diff.", "git diff internal/parse"),
		},
		final: "That is the whole change to internal/parse: ParseQuantity reads the first field, and SplitLine returns an error instead of panicking, with the test updated.",
	},
	{
		user: "Benchmark ParseQuantity; I want to know whether strings.Fields is too slow for the import job.",
		steps: []step{
			create("Writing a benchmark.", "internal/parse/bench_test.go", "package parse\n\nimport \"testing\"\n\nfunc BenchmarkParseQuantity(b *testing.B) {\n\tfor i := 0; i < b.N; i++ {\n\t\tParseQuantity(\"12 pcs\")\n\t}\n}\n"),
			bash("Running it.", "go test -run '^$' -bench ParseQuantity -benchmem ./internal/parse/"),
		},
		final: "ParseQuantity takes well under a microsecond per call (see the benchmark above); strings.Fields is not a problem for the import job.",
	},
	{
		user: "Fine, keep strings.Fields. Delete the benchmark file; we don't keep benchmarks for one-liners.",
		steps: []step{
			bash("Removing it and testing.", "rm internal/parse/bench_test.go && go test ./internal/parse/"),
		},
		final: "The benchmark file is gone and internal/parse passes.",
	},
	{
		user: "The report should print totals with a thousands separator, like 12,345.67. No new dependencies for that, do it by hand.",
		steps: []step{
			read("Reading the report.", "internal/report/report.go"),
			change("A helper formats cents with separators.", "internal/report/report.go", "\t_, err := fmt.Fprintf(w, \"  %-20s %8.2f\\n\", \"total\", float64(total)/100)\n\treturn err\n}", "\t_, err := fmt.Fprintf(w, \"  %-20s %12s\\n\", \"total\", Amount(total))\n\treturn err\n}\n\n// Amount formats cents as units with a thousands separator: 1234567 is\n// \"12,345.67\".\nfunc Amount(cents int64) string {\n\tsign := \"\"\n\tif cents < 0 {\n\t\tsign, cents = \"-\", -cents\n\t}\n\tunits := fmt.Sprint(cents / 100)\n\tfor i := len(units) - 3; i > 0; i -= 3 {\n\t\tunits = units[:i] + \",\" + units[i:]\n\t}\n\treturn fmt.Sprintf(\"%s%s.%02d\", sign, units, cents%100)\n}"),
			bash("Vetting and building.", "go vet ./internal/report/ && go build ./..."),
		},
		final: "The total is printed by the new Amount helper, with a thousands separator (1234567 cents is 12,345.67), using only fmt.",
	},
	{
		user: "Add a test for Amount, including a negative amount and one under a dollar.",
		steps: []step{
			create("Writing the test.", "internal/report/report_test.go", "package report\n\nimport \"testing\"\n\nfunc TestAmount_Cases(t *testing.T) {\n\tfor _, tt := range []struct {\n\t\tcents int64\n\t\twant  string\n\t}{\n\t\t{1234567, \"12,345.67\"},\n\t\t{-250000, \"-2,500.00\"},\n\t\t{5, \"0.05\"},\n\t\t{100000000, \"1,000,000.00\"},\n\t} {\n\t\tif got := Amount(tt.cents); got != tt.want {\n\t\t\tt.Errorf(\"Amount(%d) = %q, want %q\", tt.cents, got, tt.want)\n\t\t}\n\t}\n}\n"),
			bash("Running it.", "go test -v ./internal/report/"),
		},
		final: "TestAmount_Cases covers a large amount, a negative one, one under a dollar and a million; it passes.",
	},
	{
		user: "Check git log to see who last touched ledger.go.",
		steps: []step{
			bash("Looking at the history.", "git log --format='%h %an %s' -- internal/ledger/ledger.go"),
		},
		final: "Only the initial import commit touched internal/ledger/ledger.go; our changes are not committed yet.",
	},
	{
		user: "Run gofmt -l and go vet; is anything left?",
		steps: []step{
			bash("Formatting check and vet.", "gofmt -l . ; go vet ./... && echo vet ok"),
		},
		final: "gofmt lists no file and go vet is clean.",
	},
	{
		user: "Let's make sure the panic we fixed earlier can't come back elsewhere: grep for other SplitN calls that index the result without checking its length.",
		steps: []step{
			bash("Searching.", "grep -rn \"SplitN\" --include=*.go ."),
		},
		final: "SplitN is used only in internal/parse/parse.go, and that call now checks len(parts) before indexing.",
	},
	{
		user: "Run the complete suite one last time with -race and -count=1.",
		steps: []step{
			bash("The whole suite, uncached.", "go test -race -count=1 ./..."),
		},
		final: "Every package passes with -race -count=1.",
	},
	{
		user: "Write the commit message for all of this. Reference INV-142 and INV-150, and keep the subject under 72 characters.",
		steps: []step{
			bash("Staging everything.", "git add -A && git status --short"),
		},
		final: "INV-142, INV-150: fix build, vet, panics, races and money rounding\n\n- config: compile errors; due days above 365 rejected (tested)\n- report: vet %d finding; totals with thousands separators\n- parse: unit suffixes; SplitLine returns an error, no panic\n- invoicer: bad lines skipped with their number; -input (-file deprecated until v0.9.0)\n- ledger: lazy map, Snapshot takes *Counter\n- counter: sync.Mutex\n- money: round half up in integer cents\n- store: close the channel when done\n- httpapi: 400 for bad JSON, no Go error text\n- dates: time.DateOnly only",
	},
}
