package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"

	"google.golang.org/grpc"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/eval"
	"github.com/contextcompiler/ctxc/internal/eval/synth"
	"github.com/contextcompiler/ctxc/server"
)

var updateExample = flag.Bool("update", false, "rewrite examples/sessions/long-coding-40.jsonl")

const exampleSession = "../../examples/sessions/long-coding-40.jsonl"

// exampleSessionOptions make the shipped example: 40 turns like the default
// sessions, with lighter tool outputs (55-75K tokens instead of 100-150K) so
// the file stays small; it is still four times a 16K window.
func exampleSessionOptions(count func(string) int) synth.Options {
	return synth.Options{
		Seed: 40, Turns: 40, TotalTokens: [2]int{55_000, 75_000},
		ToolOutputs: synth.Sizes{Small: [2]int{100, 1_000}, Medium: [2]int{2_000, 6_000}, Large: [2]int{10_000, 14_000}, MediumShare: 0.03, LargeShare: 0.01},
		Count:       count,
	}
}

// testService is the in-process service `ctxc eval` measures by default.
func testService(t *testing.T) eval.Service {
	t.Helper()
	cfg := defaultConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	eng, err := server.NewEngine(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	svc, err := eng.Service()
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func runCommand(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut strings.Builder
	code = run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errOut}, envFrom(nil))
	return code, out.String(), errOut.String()
}

func TestShippedExampleSession(t *testing.T) {
	svc := testService(t)
	count, countErr := serviceCounter(context.Background(), svc, synth.DefaultOptions(0).Model)
	s, err := synth.Generate(exampleSessionOptions(count))
	if err != nil || *countErr != nil {
		t.Fatal(err, *countErr)
	}
	s.Header.ID = "long-coding-40"
	var buf bytes.Buffer
	if err := eval.Write(&buf, s); err != nil {
		t.Fatal(err)
	}
	if *updateExample {
		if err := os.WriteFile(exampleSession, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shipped, err := os.ReadFile(exampleSession)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(shipped, buf.Bytes()) {
		t.Fatalf("%s is not what the generator makes; run go test ./cmd/ctxc -run TestShippedExampleSession -update", exampleSession)
	}
	if len(shipped) > 1<<20 {
		t.Errorf("the example is %d bytes; keep it under 1 MiB", len(shipped))
	}
}

// figuresTable is the first Markdown table that starts with the figures header.
func figuresTable(text string) string {
	const header = "| profile | window | compiles |"
	var b strings.Builder
	in := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case in && !strings.HasPrefix(line, "|"):
			return b.String()
		}
		if in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// The README's table is what `ctxc eval` prints for the shipped example with
// the built-in profiles, so it cannot drift from the code.
func TestReadmeEvalTableMatches(t *testing.T) {
	t.Parallel() // long, and shares nothing with the other tests
	if testing.Short() {
		t.Skip("evaluates the example session through every profile; make test runs it")
	}
	code, out, errOut := runCommand(t, "eval", exampleSession)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	readme, err := docs()
	if err != nil {
		t.Fatal(err)
	}
	// The README shows the table (What it keeps), and the guide that
	// defines its figures (Measuring long sessions).
	for _, heading := range []string{"## What it keeps", "## Measuring long sessions"} {
		_, section, ok := strings.Cut(string(readme), "\n"+heading+"\n")
		if !ok {
			t.Fatalf("the documentation has no section %q", heading)
		}
		section, _, _ = strings.Cut(section, "\n## ")
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "- long-coding-40: ") && !strings.Contains(section, "\n"+line+"\n") {
				t.Errorf("%s lacks the session line %q", heading, line)
			}
		}
		want, got := figuresTable(section), figuresTable(out)
		if got == "" || want != got {
			t.Errorf("%s: the table differs from what `ctxc eval %s` prints; paste this one:\n\n%s\nit has:\n\n%s", heading, exampleSession, got, want)
		}
	}
}

func TestEvalOverGRPCMatchesInProcess(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(evalMaxMessageBytes), grpc.MaxSendMsgSize(evalMaxMessageBytes))
	ctxcv1.RegisterContextCompilerServiceServer(srv, testService(t).(ctxcv1.ContextCompilerServiceServer))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	args := []string{"eval", "--profiles", "budget-aware", "--windows", "8000", exampleSession}
	code, local, errOut := runCommand(t, args...)
	if code != exitOK {
		t.Fatalf("in process: exit %d: %s", code, errOut)
	}
	code, remote, errOut := runCommand(t, append([]string{"eval", "--addr", lis.Addr().String()}, args[1:]...)...)
	if code != exitOK {
		t.Fatalf("over gRPC: exit %d: %s", code, errOut)
	}
	if figuresTable(local) != figuresTable(remote) || !strings.Contains(remote, "Compile latency (over gRPC at "+lis.Addr().String()+")") {
		t.Errorf("in process:\n%s\nover gRPC:\n%s", local, remote)
	}
}

func TestEvalJSON(t *testing.T) {
	code, out, errOut := runCommand(t, "eval", "--json", "--profiles", "pragmatic,policy-driven", "--windows", "16000", exampleSession)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res eval.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || res.Rows[0].Profile != "pragmatic" || res.Rows[1].Profile != "policy-driven" || res.Rows[0].Compiles != 40 || len(res.Compiles) != 80 {
		t.Errorf("rows %+v, %d compiles", res.Rows, len(res.Compiles))
	}
	if res.Sessions[0].ID != "long-coding-40" || res.Sessions[0].Turns != 40 || res.Sessions[0].FactSource != eval.SourceListed {
		t.Errorf("sessions %+v", res.Sessions)
	}
}

func TestEvalVerbose(t *testing.T) {
	code, out, errOut := runCommand(t, "eval", "--verbose", "--profiles", "pragmatic", "--windows", "8000", exampleSession)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "long-coding-40, pragmatic at 8,000:") || strings.Count(out, "\n| ") < 40+3 {
		t.Errorf("no per-turn rows:\n%s", out)
	}
}

func TestEvalGenerate(t *testing.T) {
	code, out, errOut := runCommand(t, "eval", "--generate", "5", "--turns", "6")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	s, err := eval.Load(strings.NewReader(out), "generated")
	if err != nil {
		t.Fatal(err)
	}
	if s.Turns() != 6 || s.Header.ID != "synth-5" {
		t.Errorf("generated %d turns, id %s", s.Turns(), s.Header.ID)
	}
}

func TestEvalRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := dir + "/bad.jsonl"
	if err := os.WriteFile(bad, []byte(`{"session": {"id": "x", "model": {"name": "gpt-4o"}}}`+"\n"+`{"route": {"userTurn": {}}, "extra": 1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no file", []string{"eval"}, exitUsage, "give at least one session FILE"},
		{"missing file", []string{"eval", dir + "/nope.jsonl"}, exitError, "no such file"},
		{"bad line", []string{"eval", bad}, exitError, `bad.jsonl: line 2: not a {"route": ...} or {"state": ...} object: json: unknown field "extra"`},
		{"bad window", []string{"eval", "--windows", "16k", exampleSession}, exitUsage, `--windows: "16k" is not a positive token count`},
		{"zero window", []string{"eval", "--windows", "0", exampleSession}, exitUsage, `--windows: "0" is not a positive token count`},
		{"unknown profile", []string{"eval", "--profiles", "nope", exampleSession}, exitError, `Route with profile nope`},
		{"generate with a file", []string{"eval", "--generate", "1", exampleSession}, exitUsage, "--generate writes a session; it takes no FILE"},
		{"bad seed", []string{"eval", "--generate", "-1"}, exitUsage, `--generate: "-1" is not an unsigned integer seed`},
		{"turns without generate", []string{"eval", "--turns", "12", exampleSession}, exitUsage, "--turns goes with --generate"},
		{"no turns", []string{"eval", "--generate", "1", "--turns", "0"}, exitUsage, "--turns: 0 must be at least 1"},
		{"too many turns", []string{"eval", "--generate", "1", "--turns", "10001"}, exitError, "turns: 10001 must be between 1 and 10000"},
		{"bad config", []string{"eval", "--config", dir + "/nope.yaml", exampleSession}, exitError, "invalid configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCommand(t, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, errOut, tt.code, tt.want)
			}
		})
	}
}

// TestExampleProfileKeepsWhatItsBaseKeeps: people copy the shipped example
// profiles, so long-running-coder (examples/profiles.yaml), which compacts
// by message count, keeps at least the facts budget-aware keeps of the
// shipped session in both default windows, in the end as over the session.
func TestExampleProfileKeepsWhatItsBaseKeeps(t *testing.T) {
	code, out, errOut := runCommand(t, "eval", "--json", "--config", "../../examples/profiles.yaml",
		"--profiles", "long-running-coder,budget-aware", exampleSession)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res eval.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	type kept struct{ mean, last float64 }
	got := map[string]map[uint32]kept{}
	for _, r := range res.Rows {
		if r.FactsKept == nil || r.FactsKeptLast == nil {
			t.Fatalf("%s at %d: no facts measured", r.Profile, r.Window)
		}
		if got[r.Profile] == nil {
			got[r.Profile] = map[uint32]kept{}
		}
		got[r.Profile][r.Window] = kept{*r.FactsKept, *r.FactsKeptLast}
	}
	for window, base := range got["budget-aware"] {
		example := got["long-running-coder"][window]
		if example.mean < base.mean || example.last < base.last {
			t.Errorf("window %d: long-running-coder keeps %.2f (last %.2f) of the facts, budget-aware %.2f (last %.2f)",
				window, example.mean, example.last, base.mean, base.last)
		}
	}
	if len(got["budget-aware"]) == 0 {
		t.Fatalf("no budget-aware rows in %s", out)
	}
}
