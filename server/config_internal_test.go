package server

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLimitsAreTheFilesKeys: the servers' limits are read from the file
// straight into Limits and HTTPLimits (one source of truth), and
// max_header_bytes bounds both ports.
func TestLimitsAreTheFilesKeys(t *testing.T) {
	cfg, err := LoadConfigFile(writeFile(t, "ctxc.yaml", `
max_concurrent_calls: 7
max_inflight_bytes: 99999999
max_unread_bytes_per_connection: 0
default_call_timeout: 30s
max_connection_age: 1h
max_header_bytes: 8192
http_read_timeout: 2m
http_write_timeout: 7m
`))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultLimits()
	want.MaxConcurrentCalls, want.MaxInflightBytes, want.MaxUnreadBytesPerConnection = 7, 99999999, 0
	want.DefaultCallTimeout, want.MaxConnectionAge, want.MaxHeaderBytes = 30*time.Second, time.Hour, 8192
	if diff := cmp.Diff(want, cfg.limits()); diff != "" {
		t.Errorf("limits (-want +got):\n%s", diff)
	}
	wantHTTP := DefaultHTTPLimits()
	wantHTTP.ReadTimeout, wantHTTP.WriteTimeout, wantHTTP.MaxHeaderBytes = 2*time.Minute, 7*time.Minute, 8192
	if diff := cmp.Diff(wantHTTP, cfg.httpLimits()); diff != "" {
		t.Errorf("HTTP limits (-want +got):\n%s", diff)
	}
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
	if _, err := LoadConfigFile(writeFile(t, "ctxc.yaml", "max_header_bytes: 1\nhttp_max_header_bytes: 2\n")); err == nil || !strings.Contains(err.Error(), "http_max_header_bytes") {
		t.Errorf("an unknown key: %v", err)
	}
}

func TestInspectorOnlyOnLoopbackUnlessAsked(t *testing.T) {
	tests := []struct {
		name       string
		httpListen string
		ui         string
		want       bool
	}{
		{"no HTTP port", "", uiAuto, false},
		{"loopback", "127.0.0.1:2", uiAuto, true},
		{"localhost", "localhost:2", uiAuto, true},
		{"loopback, off", "[::1]:2", uiOff, false},
		{"every interface", ":2", uiAuto, false},
		{"every interface, on", ":2", uiOn, true},
	}
	for _, tt := range tests {
		cfg := NewConfig()
		cfg.HTTPListen, cfg.HTTPUI = tt.httpListen, tt.ui
		if got := cfg.inspectorEnabled(); got != tt.want {
			t.Errorf("%s: inspectorEnabled() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestUnknownProxyProfiles(t *testing.T) {
	unknown := Config{Proxy: ProxyConfig{Profile: "fastest", Profiles: map[string]string{"openai": "cheapest"}}}
	err := unknown.checkProxyProfiles(func(name string) bool { return name == "pragmatic" })
	if err == nil || !strings.Contains(err.Error(), `proxy.profile: no profile "fastest"`) || !strings.Contains(err.Error(), `proxy.profiles.openai: no profile "cheapest"`) {
		t.Errorf("unknown proxy profiles: %v", err)
	}
}

// TestProfilesNeedNoTokenizers: listing profiles builds the catalog without
// loading a tokenizer (they take most of a second); counting loads them.
func TestProfilesNeedNoTokenizers(t *testing.T) {
	cfg := NewConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	eng, err := NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	svc, err := eng.Service()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := svc.ListProfiles(context.Background(), &ctxcv1.ListProfilesRequest{})
	if err != nil || len(resp.GetProfiles()) != 4 {
		t.Fatalf("ListProfiles: %v %v", resp, err)
	}
	if eng.eng.tokens.svc != nil {
		t.Error("listing profiles loaded the tokenizers")
	}
	if _, err := svc.CountTokens(context.Background(), &ctxcv1.CountTokensRequest{Counter: &ctxcv1.CountTokensRequest_Encoding{Encoding: "cl100k_base"}, Texts: []string{"hi"}}); err != nil || eng.eng.tokens.svc == nil {
		t.Errorf("CountTokens: %v; tokenizers loaded: %v", err, eng.eng.tokens.svc != nil)
	}
}

// TestGuideShowsTheExample: the guide's "Embedding ctxc in a Go program"
// block is ExampleStart's code, which go test runs.
func TestGuideShowsTheExample(t *testing.T) {
	guide, err := os.ReadFile("../docs/clients.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(guide), "\n## Embedding ctxc in a Go program\n")
	_, block, _ := strings.Cut(section, "```go\n")
	block, _, closed := strings.Cut(block, "```\n")
	if !ok || !closed {
		t.Fatal("docs/clients.md has no Go block under \"Embedding ctxc in a Go program\"")
	}
	example, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	indented := strings.ReplaceAll("\t"+strings.TrimSuffix(block, "\n"), "\n", "\n\t")
	indented = strings.ReplaceAll(indented, "\n\t\n", "\n\n")
	if !strings.Contains(string(example), indented) {
		t.Errorf("example_test.go does not hold the guide's block:\n%s", indented)
	}
}

// TestParseConfig reads a document as LoadConfigFile reads a file.
func TestParseConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte("default_profile: mine\nprofiles:\n  - name: mine\n    stages:\n      - policy: normalize\n      - policy: render\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DefaultProfile != "mine" || len(cfg.Profiles) != 1 || cfg.Path != "" || cfg.Listen != NewConfig().Listen {
		t.Errorf("config %+v", cfg)
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	eng, err := NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	eng.Close()
	if _, err := ParseConfig([]byte("listen_adress: x\n")); err == nil || !strings.Contains(err.Error(), `config file (data): line 1: unknown key "listen_adress" at the top level; its keys: listen, metrics_listen,`) {
		t.Errorf("an unknown key: %v", err)
	}
}

// TestConfigErrorsNameKeysAndSections: a file's mistakes are reported in
// its own terms, each with its line: an unknown key with its section and
// the key it was probably meant to be (or the section's keys), a value of
// the wrong kind with its key and what goes there. They once named Go's
// types ("field http_listn not found in type embed.Config", "cannot
// unmarshal !!str `abc` into int"), and a key under models.planner was not
// checked at all.
func TestConfigErrorsNameKeysAndSections(t *testing.T) {
	file := `http_listn: 127.0.0.1:8080
max_message_bytes: lots
grace_period: 10x
proxy:
  openai_upstrem: https://api.openai.com
  timeout: 10m
models:
  planner: {model: llama3.2, base_urll: "http://127.0.0.1:11434/v1"}
summary_cache:
  ttl: 1h
  max_entrys: 10
quotas:
  callers:
    ci: {calls_per_secnd: 5}
state_refs:
  zzz: 1
insecure: [yes]
`
	_, err := ParseConfig([]byte(file))
	if err == nil {
		t.Fatal("the file was read without an error")
	}
	want := []string{
		`config file (data): line 1: unknown key "http_listn" at the top level; did you mean "http_listen"?`,
		`config file (data): line 2: max_message_bytes: "lots" is not a whole number`,
		`config file (data): line 3: grace_period: "10x" is not a duration (such as 30s, 5m or 1h30m)`,
		`config file (data): line 5: unknown key "openai_upstrem" in section "proxy"; did you mean "openai_upstream"?`,
		`config file (data): line 8: unknown key "base_urll" in section "models.planner"; did you mean "base_url"?`,
		`config file (data): line 11: unknown key "max_entrys" in section "summary_cache"; did you mean "max_entries"?`,
		`config file (data): line 14: unknown key "calls_per_secnd" in section "quotas.callers.ci"; did you mean "calls_per_second"?`,
		`config file (data): line 16: unknown key "zzz" in section "state_refs"; its keys: ` + strings.Join(yamlKeysOf(t, NewConfig().StateRefs), ", "),
		`config file (data): line 17: insecure: a list is not true or false`,
	}
	if diff := cmp.Diff(want, strings.Split(err.Error(), "\n")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// A policy's settings, checked when the engine is built, name their
	// line of the file too.
	cfg, err := ParseConfig([]byte("profiles:\n  - name: mine\n    stages:\n      - policy: normalize\n      - policy: clamp\n        settings:\n          max_part_tokenz: 300\n      - policy: render\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	_, err = NewEngine(cfg)
	if want := `profiles[0] (mine): stages[1] (clamp): line 7: unknown key "max_part_tokenz" in section "settings"; did you mean "max_part_tokens"?`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %s", err, want)
	}
}

// yamlKeysOf lists the YAML keys of the struct v, in order.
func yamlKeysOf(t *testing.T, v any) []string {
	t.Helper()
	out, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, line := range strings.Split(string(out), "\n") {
		if k, _, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, " ") {
			keys = append(keys, k)
		}
	}
	return keys
}
