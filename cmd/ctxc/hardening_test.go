package main

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/contextcompiler/ctxc/internal/adapter"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/compiler"
	"github.com/contextcompiler/ctxc/internal/llm"
	"github.com/contextcompiler/ctxc/internal/service"
	"github.com/contextcompiler/ctxc/internal/tokens"
	"github.com/contextcompiler/ctxc/server"
)

// exposureProblems are the problems server.Check finds in cfg that refuse to
// serve in the open (the ones only `ctxc serve` reports), each one line.
func exposureProblems(t *testing.T, cfg server.Config) []string {
	t.Helper()
	cfg.Logger = slog.New(slog.DiscardHandler)
	err := server.Check(&cfg)
	if err == nil {
		return nil
	}
	var problems []string
	for _, line := range problemLines(err) {
		if strings.Contains(line, "refusing to serve on") {
			problems = append(problems, line)
		} else {
			t.Errorf("another problem: %s", line)
		}
	}
	return problems
}

func TestExposureNeedsTLSOrTokensOrInsecure(t *testing.T) {
	t.Parallel()
	tokens := writeFile(t, "tokens", "agent 0123456789abcdef\n")
	tests := []struct {
		name string
		args []string
		want []string // the keys refused
	}{
		{"loopback", []string{"--listen", "127.0.0.1:1", "--http-listen", "[::1]:2"}, nil},
		{"localhost", []string{"--listen", "localhost:1"}, nil},
		{"a Unix socket", []string{"--listen", "unix:///tmp/x.sock"}, nil},
		{"every interface", []string{"--listen", "0.0.0.0:1", "--http-listen", ":2"}, []string{"listen", "http_listen"}},
		{"a host's address", []string{"--listen", "10.0.0.5:1"}, []string{"listen"}},
		{"with tokens", []string{"--listen", "0.0.0.0:1", "--auth-token-file", tokens}, nil},
		{"insecure", []string{"--listen", "0.0.0.0:1", "--insecure"}, nil},
		{"metrics on loopback", []string{"--listen", "127.0.0.1:1", "--metrics-listen", "127.0.0.1:3"}, nil},
		{"metrics in the open", []string{"--listen", "127.0.0.1:1", "--metrics-listen", ":3"}, []string{"metrics_listen"}},
		{"metrics with tokens", []string{"--listen", "127.0.0.1:1", "--metrics-listen", "0.0.0.0:3", "--auth-token-file", tokens}, nil},
		{"metrics in the clear on purpose", []string{"--listen", "127.0.0.1:1", "--metrics-listen", ":3", "--metrics-insecure"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := loadConfig(t, tt.args, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range exposureProblems(t, cfg) {
				key, _, _ := strings.Cut(p, ":")
				got = append(got, key)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("refused (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSecurityAndLimitsListEveryProblem(t *testing.T) {
	_, err := loadConfig(t, []string{"--tls-cert", "/nonexistent/cert.pem", "--tls-client-ca", "ca.pem", "--max-concurrent-calls", "0",
		"--max-inflight-bytes", "1024", "--default-call-timeout", "10m", "--http-listen", "127.0.0.1:0", "--http-write-timeout", "1m",
		"--http-cors-origins", "https://ok.example,ftp://x,https://a.example/path", "--http-trusted-proxies", "10.0.0.0/8,nonsense", "--drain-delay", "-1s",
		"--handshake-timeout", "0s"}, nil)
	if err == nil {
		t.Fatal("accepted")
	}
	var got []string
	for _, line := range strings.Split(err.Error(), "\n") {
		key, _, _ := strings.Cut(line, ":")
		got = append(got, key)
	}
	want := []string{"tls_cert", "tls_cert", "tls_client_ca", "max_concurrent_calls", "max_inflight_bytes",
		"handshake_timeout", "drain_delay", "default_call_timeout", "http_write_timeout", "http_cors_origins", "http_cors_origins", "http_trusted_proxies"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s\nfull error:\n%v", diff, err)
	}
}

// TestReadmeLimitsTable keeps "Running it safely"'s table of limits true to
// the code: every limit setting with its default, the helper models' limits
// and the fixed request limits.
func TestReadmeLimitsTable(t *testing.T) {
	readme, err := docs()
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n### Limits\n")
	if !ok {
		t.Fatal(`README.md has no "### Limits" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	def := defaultConfig()
	limitKeys := []string{"max_message_bytes", "max_concurrent_calls", "max_inflight_bytes", "max_queue_wait", "max_concurrent_streams",
		"max_connections", "default_call_timeout", "max_call_timeout", "handshake_timeout", "keepalive_min_time", "max_connection_idle",
		"max_connection_age", "max_header_bytes", "http_read_header_timeout", "http_read_timeout", "http_write_timeout", "http_idle_timeout",
		"drain_delay", "grace_period", "proxy.timeout", "proxy.max_concurrent_calls"}
	found := map[string]bool{}
	for _, s := range settings() {
		found[s.key] = true
	}
	var rows []string
	for _, key := range limitKeys {
		if !found[key] {
			t.Errorf("%s is not a setting", key)
		}
	}
	for _, s := range settings() {
		for _, key := range limitKeys {
			if s.key == key {
				rows = append(rows, "| `--"+s.flagName()+"` | `"+s.envName()+"` | `"+s.key+"` | `"+s.get(&def)+"` |")
			}
		}
	}
	model, fixed := llm.DefaultConfig(), compiler.DefaultLimits()
	rows = append(rows,
		"| | | `models.*.max_reply_bytes` | `"+strconv.Itoa(model.MaxReplyBytes)+"` |",
		"| | | `models.*.fallback_reserve` | `"+strconv.FormatFloat(model.FallbackReserve, 'g', -1, 64)+"` |",
		"| | | `models.*.timeout` | `"+model.Timeout.String()+"` |",
		"| | | (fixed) | `"+strconv.Itoa(fixed.MaxMessages)+"` | messages in a state's log",
		"| | | (fixed) | `"+strconv.Itoa(fixed.MaxPartsPerMessage)+"` | parts of one message",
		"| | | (fixed) | `"+strconv.Itoa(fixed.MaxTools)+"` | tools of a state",
		"| | | (fixed) | `"+strconv.Itoa(compiler.MaxGoalBytes)+"` | bytes of a Compile's goal",
		"| | | (fixed) | `"+strconv.Itoa(compiler.MaxStoredAttachmentBytes)+"` | bytes of an attachment kept in the summary cache",
		"| | | `state_refs.max_bytes_per_caller` | `"+strconv.FormatInt(def.StateRefs.MaxBytesPerCaller, 10)+"` | bytes of states one caller keeps",
		"| | | `state_refs.max_redis_entries_per_caller` | `"+strconv.Itoa(def.StateRefs.MaxRedisEntriesPerCaller)+"` | entries one caller keeps in Redis",
		"| | | `quotas.default.max_concurrent_calls` | `"+strconv.Itoa(def.Quotas.Default.MaxConcurrentCalls)+"` | API calls one caller may have",
		"| | | `quotas.default.max_inflight_bytes` | `"+strconv.FormatInt(def.Quotas.Default.MaxInflightBytes, 10)+"` | summed size of one caller's requests",
		"| | | `quotas.default.calls_per_second` | `"+strconv.FormatFloat(def.Quotas.Default.CallsPerSecond, 'g', -1, 64)+"` | one caller's API calls a second",
		"| | | `quotas.default.burst` | `"+strconv.Itoa(def.Quotas.Default.Burst)+"` | calls one caller may make at once")
	for _, row := range rows {
		if !strings.Contains(section, row) {
			t.Errorf("the limits table lacks the row starting %s", row)
		}
	}
	safely, _, _ := strings.Cut(string(readme[strings.Index(string(readme), "\n## Running it safely\n"):]), "\n### Limits\n")
	logLimit := service.DefaultLimits().MaxInflightBytes / adapter.WorkingBytesPerMessage
	for _, quote := range []string{
		"`<name> <token>` (at least " + strconv.Itoa(service.MinTokenLength) + " characters;",
		"`google.rpc.RetryInfo` of " + service.RetryDelay.String() + " (HTTP 429 with `Retry-After: " + strconv.Itoa(int(service.RetryDelay.Seconds())) + "`)",
		"a call holding at most " + strconv.Itoa(service.SmallCallBytes>>10) + " KiB goes ahead of larger ones waiting",
		"Compiling a state also holds " + strconv.Itoa(adapter.WorkingBytesPerMessage>>10) + " KiB for each message of its log",
		"and " + strconv.Itoa(tokens.PieceWorkingBytes) + " bytes for each byte of its longest run of text without a space",
		"at the default limit, any log of " + strconv.FormatInt(logLimit/1000, 10) + "," + fmt.Sprintf("%03d", logLimit%1000) + " messages or more) is refused",
	} {
		if !strings.Contains(strings.Join(strings.Fields(safely), " "), quote) {
			t.Errorf("Running it safely does not say %q", quote)
		}
	}
}

// TestReadmeSharedServiceConfigLoads: the hardened configuration in the
// README is a valid config file (but for its certificate and token paths).
func TestReadmeSharedServiceConfigLoads(t *testing.T) {
	readme, err := docs()
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(readme), "A shared service for many agents")
	_, block, _ := strings.Cut(after, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	for _, name := range []string{"tls/tls.crt", "tls/tls.key", "tls/clients.crt", "tokens"} {
		block = strings.ReplaceAll(block, "/etc/ctxc/"+name, writeFile(t, strings.ReplaceAll(name, "/", "-"), "x"))
	}
	cfg, err := loadConfig(t, []string{"--config", writeFile(t, "ctxc.yaml", block)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if problems := exposureProblems(t, cfg); len(problems) != 0 || cfg.TLSClientCA == "" || cfg.DrainDelay == 0 || cfg.Reflection {
		t.Errorf("exposure %v; config %+v", problems, cfg)
	}
}

// TestRunningSafelyQuotasLoad: the quotas of "Running it safely" are a valid
// config file, read as the text says (an entry is a caller's whole quota).
func TestRunningSafelyQuotasLoad(t *testing.T) {
	readme, err := docs()
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "**Quotas per caller.**")
	if !ok {
		t.Fatal(`Running it safely has no "Quotas per caller"`)
	}
	_, block, _ := strings.Cut(after, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	cfg, err := loadConfig(t, []string{"--config", writeFile(t, "ctxc.yaml", block)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := server.Quotas{Default: server.Quota{MaxConcurrentCalls: 8, MaxInflightBytes: 64 << 20, CallsPerSecond: 20, Burst: 40},
		Callers: map[string]server.Quota{"batch-indexer": {MaxConcurrentCalls: 2, CallsPerSecond: 1, Burst: 5}}}
	if diff := cmp.Diff(want, cfg.Quotas); diff != "" {
		t.Errorf("quotas (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(server.Quotas{}, defaultConfig().Quotas); diff != "" {
		t.Errorf("the default quotas, documented as none (-want +got):\n%s", diff)
	}
}

// TestHTTPUIValues: http_ui's values (which ports
// serve the page is package server's TestInspectorOnlyOnLoopbackUnlessAsked).
func TestHTTPUIValues(t *testing.T) {
	for _, bad := range [][]string{{"--http-ui", "yes", "--http-listen", "127.0.0.1:2"}, {"--http-ui", "on"}} {
		if _, err := loadConfig(t, bad, nil); err == nil || !strings.Contains(err.Error(), "http_ui: ") {
			t.Errorf("%q: %v, want an http_ui problem", bad, err)
		}
	}
}
