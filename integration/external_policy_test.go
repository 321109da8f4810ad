//go:build integration

package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/contextcompiler/ctxc/client"
	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// exampleModule is the module of a policy written outside ctxc's
// (docs/extending.md): its own go.mod, ctxc replaced by this checkout.
const exampleModule = "examples/secretmask"

// TestExternalPolicy: the example module checks out as a module of its own
// (go.mod and go.sum tidy, its tests; make lint vets it), builds with go
// build, and the program serves its mask_secrets policy beside the built-in
// ones: a compile through the gRPC client under the example's profile masks the
// secrets of the tool outputs and keeps everything else, also once the
// context is compacted and rendered. The go command works offline but
// for the Go module proxy; anything failing fails the test.
func TestExternalPolicy(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command builds the example module: %v", err)
	}
	dir := filepath.Join(repoRoot, exampleModule)
	bin := filepath.Join(t.TempDir(), "secretmask")
	// The module's own go.mod, not a workspace; its go.sum as committed. The
	// flags are make build's, so the modules compiled for ctxc are reused;
	// no vet here (make lint runs it, as for every package of ctxc).
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly -buildvcs=false", "GOTOOLCHAIN=local", "CGO_ENABLED=0")
	for _, args := range [][]string{
		{"mod", "tidy", "-diff"},
		{"test", "-trimpath", "-vet=off", "-tags", "grpcnotrace", "-count=1", "./..."},
		{"build", "-trimpath", "-tags", "grpcnotrace", "-o", bin, "."},
	} {
		cmd := exec.Command(goTool, args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			hint := ""
			if args[0] == "mod" {
				hint = " (run go mod tidy in " + exampleModule + ")"
			}
			t.Fatalf("go %s in %s%s: %v\n%s", strings.Join(args, " "), exampleModule, hint, err, out)
		}
	}

	s := startExample(t, bin, filepath.Join(dir, "ctxc.yaml"))
	c := ctxcv1.NewContextCompilerServiceClient(s.conn)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	profiles, err := c.ListProfiles(ctx, &ctxcv1.ListProfilesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var masked *ctxcv1.Profile
	for _, p := range profiles.GetProfiles() {
		if p.GetName() == "masked" {
			masked = p
		}
	}
	if masked == nil || !masked.GetDefault() {
		t.Fatalf("the example's profile masked is not served as the default: %v", profiles)
	}
	var steps []string
	for _, st := range masked.GetStages() {
		steps = append(steps, st.GetStage()+" "+st.GetPolicy())
		if st.GetPolicy() == "mask_secrets" && !strings.Contains(st.GetSettingsJson(), `"regexp":"ticket (?P\u003csecret\u003etkt_[0-9a-f]{16,})"`) {
			t.Errorf("mask_secrets' settings as ListProfiles shows them lack the file's pattern: %s", st.GetSettingsJson())
		}
	}
	if len(steps) < 3 || steps[0] != "normalize normalize" || steps[1] != "normalize mask_secrets" || steps[2] != "project project" {
		t.Errorf("the masked profile's steps: %q", steps)
	}

	// Bad settings of the policy stop start-up, each problem naming the
	// profile, the step and the key.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("profiles:\n  - name: bad\n    stages:\n      - policy: normalize\n      - policy: mask_secrets\n"+
		"        settings: {patterns: [{name: x, regexp: 'a('}], replacement: ''}\n      - policy: render\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--config", bad, "--listen", "127.0.0.1:0").CombinedOutput()
	wantOut := "secretmask: profiles[0] (bad): stages[1] (mask_secrets): settings: patterns[0].regexp: error parsing regexp: missing closing ): `a(`\n" +
		"profiles[0] (bad): stages[1] (mask_secrets): settings: replacement: empty (a secret must be replaced by something the model can see was there)\n"
	if diff := cmp.Diff(wantOut, string(out)); err == nil || diff != "" {
		t.Errorf("bad settings: exit %v, output (-want +got):\n%s", err, diff)
	}

	const (
		awsKey  = "AKIAIOSFODNN7EXAMPLE"
		bearer  = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkZXYifQ.c2lnbmF0dXJl"
		ticket  = "tkt_0123456789abcdef0123"
		pemBody = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
	)
	secrets := []string{awsKey, bearer, ticket, pemBody}
	output := "AWS_ACCESS_KEY_ID=" + awsKey + "\nAWS_REGION=eu-west-1\n" +
		"> Authorization: Bearer " + bearer + "\n" +
		"opened ticket " + ticket + " for the deploy\n" +
		"-----BEGIN OPENSSH PRIVATE KEY-----\n" + pemBody + "\n-----END OPENSSH PRIVATE KEY-----\n"
	want := "AWS_ACCESS_KEY_ID=[masked aws_access_key_id]\nAWS_REGION=eu-west-1\n" +
		"> Authorization: Bearer [masked bearer_token]\n" +
		"opened ticket [masked ticket_token] for the deploy\n" +
		"[masked private_key]\n"
	// The user's text is not a tool output: the policy leaves it.
	task := "Deploy with password=" + awsKey + " as set up."

	t.Run("compile", func(t *testing.T) {
		state := client.State("gpt-4o", "You deploy services.", client.User("u1", task),
			client.Assistant("a1", client.ToolCall("c1", "shell", `{"cmd":"env; deploy"}`)),
			client.Tool("t1", client.ToolResult("c1", "shell", output, false)),
			client.Assistant("a2", client.Text("Deployed.")))
		resp, err := c.Compile(ctx, &ctxcv1.CompileRequest{State: state, Profile: "masked"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range resp.GetMessages() {
			for _, p := range m.GetParts() {
				got = append(got, m.GetId()+": "+p.GetText()+p.GetToolCall().GetArgumentsJson()+p.GetToolResult().GetContent())
			}
		}
		wantMessages := []string{"ctxc-system: You deploy services.", "u1: " + task, `a1: {"cmd":"env; deploy"}`, "t1: " + want, "a2: Deployed."}
		if diff := cmp.Diff(wantMessages, got); diff != "" {
			t.Errorf("compiled messages (-want +got):\n%s", diff)
		}
		var step *ctxcv1.StageReport
		for _, st := range resp.GetReport().GetStages() {
			if st.GetPolicy() == "mask_secrets" {
				step = st
			}
		}
		if step == nil || step.GetStage() != "normalize" || step.GetDetail() != "masked 1 aws_access_key_id, 1 bearer_token, 1 private_key, 1 ticket_token" {
			t.Errorf("the report's mask_secrets step: %v", step)
		}
	})

	// Long sessions in small windows: the example's profile compacts
	// (observation masking with previews of the outputs, summaries,
	// truncation) and renders the request body. None of it may bring a
	// secret back, not even its first characters (a preview cut inside it).
	t.Run("compacted and rendered", func(t *testing.T) {
		compacted := 0
		for _, window := range []uint32{2000, 4000, 6000, 9000, 12000, 16000} {
			for _, lines := range []int{20, 60, 150} {
				log := []*ctxcv1.Message{client.User("u1", "Deploy the services one by one.")}
				filler := strings.Repeat("step ok: pulled image, started container, health check passed\n", lines)
				for i := range 8 {
					id := string(rune('a' + i))
					log = append(log,
						client.Assistant("call-"+id, client.ToolCall(id, "shell", `{"cmd":"deploy `+id+`"}`)),
						client.Tool("out-"+id, client.ToolResult(id, "shell", output+filler, i%3 == 0)),
						client.Assistant("say-"+id, client.Text("Service "+id+" deployed.")),
						client.User("next-"+id, "Next one."))
				}
				resp, err := c.Compile(ctx, &ctxcv1.CompileRequest{State: client.State("gpt-4o", "You deploy services.", log...), Profile: "masked",
					Options: &ctxcv1.CompileOptions{MaxContextTokenCount: &window, Render: ctxcv1.RenderFormat_RENDER_FORMAT_OPENAI}})
				if err != nil {
					t.Fatalf("window %d, %d lines: %v", window, lines, err)
				}
				for _, m := range resp.GetReport().GetMessages() {
					if m.GetDisposition() != ctxcv1.Disposition_DISPOSITION_KEPT {
						compacted++
						break
					}
				}
				body, err := protojson.Marshal(resp)
				if err != nil {
					t.Fatal(err)
				}
				for _, secret := range secrets {
					if strings.Contains(string(body), secret[:10]) {
						t.Errorf("window %d, %d lines: a secret (%.10s...) is in the compiled response", window, lines, secret)
					}
				}
				if !strings.Contains(resp.GetRendered(), "[masked aws_access_key_id]") {
					t.Errorf("window %d, %d lines: the rendered body shows no masked output", window, lines)
				}
			}
		}
		if compacted < 9 {
			t.Errorf("%d of 18 sessions were compacted, want at least half: the check above needs compaction to mean anything", compacted)
		}
	})

	if err := s.stop(t); err != nil {
		t.Errorf("the example did not exit 0 on SIGTERM: %v\n%s", err, s.logs)
	}
}

// startExample runs the example's program on a free loopback port with its
// config file and waits until health says SERVING. It prints the address it
// serves on to stdout.
func startExample(t *testing.T, bin, config string) *server {
	t.Helper()
	cmd := exec.Command(bin, "--config", config, "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=", "OTEL_EXPORTER_OTLP_ENDPOINT=")
	return start(t, cmd, func(line string) (string, bool) { return strings.CutPrefix(line, "serving on ") }, nil)
}

// TestExtendingGuideQuotesTheExample: every Go and YAML block of
// docs/extending.md is a passage of the example module's files, as they
// are, so the guide shows the code TestExternalPolicy builds and runs.
func TestExtendingGuideQuotesTheExample(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join(repoRoot, "docs", "extending.md"))
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	err = filepath.WalkDir(filepath.Join(repoRoot, exampleModule), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".yaml")) {
			return err
		}
		data, err := os.ReadFile(path)
		sources = append(sources, string(data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	quoted := 0
	rest := string(guide)
	for {
		var lang, block string
		var ok bool
		if _, rest, ok = strings.Cut(rest, "\n```"); !ok {
			break
		}
		lang, rest, _ = strings.Cut(rest, "\n")
		block, rest, ok = strings.Cut(rest, "\n```\n")
		if !ok {
			t.Fatalf("an unclosed ```%s block", lang)
		}
		if lang != "go" && lang != "yaml" {
			continue
		}
		quoted++
		found := false
		for _, src := range sources {
			found = found || strings.Contains(src, block+"\n")
		}
		if !found {
			t.Errorf("docs/extending.md's ```%s block is in no file of %s:\n%s", lang, exampleModule, block)
		}
	}
	if quoted < 5 {
		t.Errorf("%d Go and YAML blocks found in docs/extending.md, want the five steps' excerpts", quoted)
	}
}
