package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/testing/protocmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/server"
)

func envFrom(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func loadConfig(t *testing.T, args []string, env map[string]string) (server.Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cf := registerConfigFlags(fs, true)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return cf.load(fs, envFrom(env))
}

func TestConfigPrecedence(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "ctxc.yaml", `
listen: 127.0.0.1:7000
http_listen: 127.0.0.1:8080
log_level: debug
grace_period: 3s
reflection: false
max_message_bytes: 2048
`)
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want func(c *server.Config)
	}{
		{"defaults", nil, nil, func(c *server.Config) {}},
		{"file over defaults", []string{"--config", file}, nil, func(c *server.Config) {
			c.Listen, c.LogLevel, c.GracePeriod, c.Reflection, c.MaxMessageBytes, c.Path = "127.0.0.1:7000", "debug", 3*time.Second, false, 2048, file
			c.HTTPListen = "127.0.0.1:8080"
		}},
		{"file from CTXC_CONFIG", nil, map[string]string{"CTXC_CONFIG": file}, func(c *server.Config) {
			c.Listen, c.LogLevel, c.GracePeriod, c.Reflection, c.MaxMessageBytes, c.Path = "127.0.0.1:7000", "debug", 3*time.Second, false, 2048, file
			c.HTTPListen = "127.0.0.1:8080"
		}},
		{"environment over file", []string{"--config", file}, map[string]string{"CTXC_LISTEN": "unix:///tmp/ctxc.sock", "CTXC_REFLECTION": "true"}, func(c *server.Config) {
			c.Listen, c.LogLevel, c.GracePeriod, c.Reflection, c.MaxMessageBytes, c.Path = "unix:///tmp/ctxc.sock", "debug", 3*time.Second, true, 2048, file
			c.HTTPListen = "127.0.0.1:8080"
		}},
		{"flags over environment", []string{"--config", file, "--listen", "127.0.0.1:9", "--reflection=false", "--log-format", "json"},
			map[string]string{"CTXC_LISTEN": "127.0.0.1:8", "CTXC_REFLECTION": "true", "CTXC_METRICS_LISTEN": "127.0.0.1:9090"}, func(c *server.Config) {
				c.Listen, c.LogLevel, c.GracePeriod, c.Reflection, c.MaxMessageBytes, c.Path = "127.0.0.1:9", "debug", 3*time.Second, false, 2048, file
				c.LogFormat, c.MetricsListen, c.HTTPListen = "json", "127.0.0.1:9090", "127.0.0.1:8080"
			}},
		{"http listener: flag over environment over file", []string{"--config", file, "--http-listen", "127.0.0.1:8082"}, map[string]string{"CTXC_HTTP_LISTEN": "127.0.0.1:8081"}, func(c *server.Config) {
			c.Listen, c.LogLevel, c.GracePeriod, c.Reflection, c.MaxMessageBytes, c.Path = "127.0.0.1:7000", "debug", 3*time.Second, false, 2048, file
			c.HTTPListen = "127.0.0.1:8082"
		}},
		{"http listener from the environment", nil, map[string]string{"CTXC_HTTP_LISTEN": "0.0.0.0:8081"}, func(c *server.Config) {
			c.HTTPListen = "0.0.0.0:8081"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := loadConfig(t, tt.args, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			want := defaultConfig()
			tt.want(&want)
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigListsEveryProblem(t *testing.T) {
	_, err := loadConfig(t,
		[]string{"--listen", "nowhere", "--log-level", "loud", "--max-message-bytes", "many", "--metrics-listen", "unix:/x", "--http-listen", "127.0.0.1:http"},
		map[string]string{"CTXC_GRACE_PERIOD": "soon", "CTXC_LOG_FORMAT": "xml", "CTXC_TOKEN_CACHE_ENTRIES": "-1"})
	if err == nil {
		t.Fatal("invalid configuration accepted")
	}
	var got []string
	for _, line := range strings.Split(err.Error(), "\n") {
		key, _, _ := strings.Cut(line, ":")
		got = append(got, key)
	}
	want := []string{"CTXC_GRACE_PERIOD", "--max-message-bytes", "listen", "metrics_listen", "http_listen", "log_level", "log_format", "token_cache_entries"}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("problems (-want +got):\n%s\nfull error:\n%v", diff, err)
	}
}

func TestConfigFileRejectsUnknownKeys(t *testing.T) {
	file := writeFile(t, "ctxc.yaml", "listen: 127.0.0.1:1\nlisten_adress: typo\n")
	if _, err := loadConfig(t, []string{"--config", file}, nil); err == nil || !strings.Contains(err.Error(), "listen_adress") {
		t.Errorf("got %v, want an error naming listen_adress", err)
	}
}

func TestExampleProfilesLoad(t *testing.T) {
	cfg, err := loadConfig(t, []string{"--config", "../../examples/profiles.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Profiles) != 1 || cfg.Profiles[0].Name != "long-running-coder" {
		t.Errorf("profiles: %+v", cfg.Profiles)
	}
}

// TestReadmeConfigTableMatchesSettings keeps the README's table in step with
// the flags: every setting has a row with its flag, variable, key and default.
func TestReadmeConfigTableMatchesSettings(t *testing.T) {
	readme, err := docs()
	if err != nil {
		t.Fatal(err)
	}
	def := defaultConfig()
	for _, s := range settings() {
		value := s.get(&def)
		if value == "" {
			value = `""`
		}
		row := "| `--" + s.flagName() + "` | `" + s.envName() + "` | `" + s.key + "` | `" + value + "` |"
		if !strings.Contains(string(readme), row) {
			t.Errorf("README.md lacks the row starting %s", row)
		}
	}
	for _, row := range []string{"| `--config` | `CTXC_CONFIG` |", "| | | `profiles` |", "| | | `models` |"} {
		if !strings.Contains(string(readme), row) {
			t.Errorf("README.md lacks the row starting %s", row)
		}
	}
}

func TestHelpForEveryCommand(t *testing.T) {
	t.Parallel()
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut strings.Builder
			code := run(context.Background(), []string{c.name, "--help"}, stdio{in: strings.NewReader(""), out: &out, err: &errOut}, envFrom(nil))
			if code != exitOK || !strings.HasPrefix(out.String(), "Usage:\n  ctxc "+c.name) || errOut.Len() != 0 {
				t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
			}
		})
	}
	var out, errOut strings.Builder
	if code := run(context.Background(), []string{"frobnicate"}, stdio{out: &out, err: &errOut}, envFrom(nil)); code != exitUsage || !strings.Contains(errOut.String(), `unknown command "frobnicate"`) {
		t.Errorf("unknown command: exit %d, stderr %s", code, errOut.String())
	}
}

func TestDefaultHealthAddr(t *testing.T) {
	t.Parallel()
	tests := []struct{ listen, want string }{
		{"", "127.0.0.1:50051"},
		{"0.0.0.0:6000", "127.0.0.1:6000"},
		{":6000", "127.0.0.1:6000"},
		{"[::]:6000", "127.0.0.1:6000"},
		{"10.0.0.5:6000", "10.0.0.5:6000"},
		{"unix:///run/ctxc.sock", "unix:///run/ctxc.sock"},
	}
	for _, tt := range tests {
		env := map[string]string{}
		if tt.listen != "" {
			env["CTXC_LISTEN"] = tt.listen
		}
		if got := defaultHealthAddr(envFrom(env)); got != tt.want {
			t.Errorf("CTXC_LISTEN=%q: got %q, want %q", tt.listen, got, tt.want)
		}
	}
}

func TestTracesConfigured(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": ""}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317", "OTEL_SDK_DISABLED": "true"}, false},
	}
	for _, tt := range tests {
		if got := tracesConfigured(envFrom(tt.env)); got != tt.want {
			t.Errorf("%v: got %v, want %v", tt.env, got, tt.want)
		}
	}
}

func TestReadCompileRequestAcceptsBothForms(t *testing.T) {
	t.Parallel()
	state := `{"model": {"name": "gpt-4o"}, "context": {"messages": [{"id": "u1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}]}}`
	want := &ctxcv1.CompileRequest{State: &ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: "gpt-4o"}, Context: &ctxcv1.AgentContext{
		Messages: []*ctxcv1.Message{{Id: "u1", Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: "hi"}}}}}}}}
	for _, in := range []string{state, `{"state": ` + state + `}`} {
		got, err := readCompileRequest("-", strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", in, diff)
		}
	}
	if _, err := readCompileRequest("-", strings.NewReader(`{"stat": {}}`)); err == nil {
		t.Error("a file that is neither form was accepted")
	}
}

func TestSpanExporterFromEnvironment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env     map[string]string
		wantErr string // "" for an exporter
	}{
		{map[string]string{}, ""},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console"}, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, `OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" unknown`},
		{map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, `OTEL_TRACES_EXPORTER: "zipkin" unknown`},
	}
	for _, tt := range tests {
		exp, err := newSpanExporter(context.Background(), envFrom(tt.env))
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%v: %v", tt.env, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%v: got error %v, want %q", tt.env, err, tt.wantErr)
		}
		if exp != nil {
			exp.Shutdown(context.Background())
		}
	}
}

// TestProxyConfig: the proxy section comes from the file, variables and
// flags like every setting (per-upstream profiles from the file only), and
// every problem of it is named at once, profiles the catalog lacks included.
func TestProxyConfig(t *testing.T) {
	file := writeFile(t, "ctxc.yaml", `
http_listen: 127.0.0.1:8080
proxy:
  anthropic_upstream: https://api.anthropic.com
  profiles: {anthropic: policy-driven}
  timeout: 20m
`)
	cfg, err := loadConfig(t, []string{"--config", file, "--proxy-openai-upstream", "https://api.openai.com"},
		map[string]string{"CTXC_PROXY_MAX_CONTEXT_TOKENS": "32000", "CTXC_PROXY_ON_COMPILE_ERROR": "refuse"})
	if err != nil {
		t.Fatal(err)
	}
	want := defaultConfig().Proxy
	want.AnthropicUpstream, want.OpenAIUpstream, want.Profiles = "https://api.anthropic.com", "https://api.openai.com", map[string]string{"anthropic": "policy-driven"}
	want.Timeout, want.MaxContextTokens, want.OnCompileError = 20*time.Minute, 32000, "refuse"
	if diff := cmp.Diff(want, cfg.Proxy); diff != "" {
		t.Errorf("proxy (-want +got):\n%s", diff)
	}

	bad := writeFile(t, "bad.yaml", `
proxy:
  ollama_upstream: 127.0.0.1:11434
  gemini_upstream: https://generativelanguage.googleapis.com?key=x
  profiles: {mistral: pragmatic}
  on_compile_error: retry
  timeout: 0s
  max_concurrent_calls: 0
  max_context_tokens: -1
`)
	_, err = loadConfig(t, []string{"--config", bad}, nil)
	if err == nil {
		t.Fatal("a bad proxy section was accepted")
	}
	var got []string
	for _, line := range strings.Split(err.Error(), "\n") {
		key, _, _ := strings.Cut(line, ":")
		got = append(got, key)
	}
	wantKeys := []string{"proxy.ollama_upstream", "proxy.gemini_upstream", "proxy", "proxy.profiles", "proxy.on_compile_error", "proxy.timeout",
		"proxy.max_concurrent_calls", "proxy.max_context_tokens"}
	if diff := cmp.Diff(wantKeys, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("problems (-want +got):\n%s\nfull error:\n%v", diff, err)
	}

}

// TestReadmeProxyConfigLoads: the README's proxy configuration is a valid
// configuration whose profiles the catalog has.
func TestReadmeProxyConfigLoads(t *testing.T) {
	readme, err := docs()
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(readme), "The same in a config file, with every setting of the section")
	_, block, _ := strings.Cut(after, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	cfg, err := loadConfig(t, []string{"--config", writeFile(t, "ctxc.yaml", block)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Proxy; p.OpenAIUpstream == "" || p.AnthropicUpstream == "" || p.GeminiUpstream == "" || p.OllamaUpstream == "" || p.Profiles["anthropic"] != "policy-driven" {
		t.Errorf("proxy %+v", cfg.Proxy)
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	eng, err := server.NewEngine(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	eng.Close()
}
