package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/contextcompiler/ctxc/internal/agentcli"
	"github.com/contextcompiler/ctxc/server"
)

// agentsGuide is the guide to each CLI's configuration by hand.
const agentsGuide = "docs/agents.md"

func runWrap(ctx context.Context, args []string, io stdio, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet(io, "wrap", "[flags] [--] <cli> [args...]",
		"Run an agent CLI through a ctxc proxy of its own: start the proxy on a free loopback port in\n"+
			"front of the CLI's upstream, point the CLI at it the way that CLI reads its configuration\n"+
			"(environment variables, settings of higher precedence in a temporary directory; the user's\n"+
			"own configuration files are never written), run it with the given arguments on this\n"+
			"terminal, and print at exit (on stderr) what ctxc compacted and saved. The CLI's exit code\n"+
			"is ctxc's; SIGTERM and SIGHUP are passed on to it (Ctrl-C reaches it from the terminal).\n\n"+
			"Supported: "+strings.Join(agentcli.Commands(), ", ")+". The upstream is --upstream, else the\n"+
			"CLI's own configuration (its base URL variable, the provider of its model), else the\n"+
			"provider's public URL. The manual way, for a ctxc already running, is in "+agentsGuide+".\n\n"+
			"Example: ctxc wrap --window 32000 -- codex exec \"make the tests pass\"")
	window := fs.Int("window", 0, "window every call is compiled in, in tokens (0: the model's as ctxc knows it); sent by the CLI as X-Ctxc-Max-Context-Tokens")
	profile := fs.String("profile", "", "profile the calls are compiled with (default: the proxy's, budget-aware)")
	upstream := fs.String("upstream", "", "the provider's base URL the calls go on to (env CTXC_WRAP_UPSTREAM)")
	cliPath := fs.String("cli-path", "", "the CLI's program (default: <cli> found on PATH)")
	configPath := fs.String("config", "", "YAML config file for profiles, models and the proxy's settings (its addresses, TLS and tokens are the run's own)")
	logPath := fs.String("log", "", "append ctxc's log to this file (JSON lines; a \"proxied\" line per call, with its tokens before and after)")
	if code, done := parseFlags(fs, io, args); done {
		return code
	}
	rest := fs.Args()
	supported := "supported: " + strings.Join(agentcli.Commands(), ", ") + "; for another agent, configure it by hand against a running ctxc (" + agentsGuide + ")"
	if len(rest) == 0 {
		fmt.Fprintf(io.err, "ctxc wrap: name the agent CLI to run (%s)\nRun `ctxc wrap --help` for its flags.\n", supported)
		return exitUsage
	}
	agent, ok := agentcli.Lookup(rest[0])
	if !ok {
		fmt.Fprintf(io.err, "ctxc wrap: %q is not an agent CLI ctxc wrap knows how to configure (%s)\n", rest[0], supported)
		return exitUsage
	}
	if *window < 0 {
		fmt.Fprintf(io.err, "ctxc wrap: --window %d: must be a number of tokens, or 0 for the model's window\n", *window)
		return exitUsage
	}
	if *upstream == "" {
		*upstream, _ = lookupEnv("CTXC_WRAP_UPSTREAM")
	}
	program := *cliPath
	if program == "" {
		found, err := exec.LookPath(rest[0])
		if err != nil {
			fmt.Fprintf(io.err, "ctxc wrap: %s (%s) is not on PATH: install it (npm install -g %s) or give --cli-path\n", rest[0], agent.Name, agent.Package)
			return exitError
		}
		program = found
	}
	w := &wrapRun{io: io, agent: agent, program: program, args: rest[1:], window: *window, profile: *profile, upstream: *upstream, lookupEnv: lookupEnv}
	code, err := w.run(ctx, *configPath, *logPath)
	if err != nil {
		var cfgErr *server.ConfigError
		if errors.As(err, &cfgErr) {
			printProblems(io.err, "invalid configuration", err)
		} else {
			fmt.Fprintf(io.err, "ctxc wrap: %v\n", err)
		}
		return exitError
	}
	return code
}

// wrapRun is one `ctxc wrap`.
type wrapRun struct {
	io                stdio
	agent             *agentcli.Agent
	program           string
	args              []string
	window            int
	profile, upstream string
	lookupEnv         func(string) (string, bool)
}

func (w *wrapRun) input(proxy, temp string) (*agentcli.Input, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	return &agentcli.Input{Proxy: proxy, Window: w.window, Upstream: w.upstream, Args: w.args, Env: w.lookupEnv,
		Home: home, Dir: dir, Temp: temp}, nil
}

// run starts the proxy, runs the CLI through it and reports; the exit code
// is the CLI's.
func (w *wrapRun) run(ctx context.Context, configPath, logPath string) (int, error) {
	temp, err := os.MkdirTemp("", "ctxc-wrap-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(temp)
	// The upstream is known from the CLI's configuration before the proxy
	// (and so its port) is: a first pass finds it, and finds any problem
	// before anything starts.
	in, err := w.input("http://127.0.0.1:0", filepath.Join(temp, "probe"))
	if err != nil {
		return 0, err
	}
	probe, err := w.agent.Configure(in)
	if err != nil {
		return 0, err
	}

	cfg := defaultConfig()
	if configPath != "" {
		file, err := server.LoadConfigFile(configPath)
		if err != nil {
			return 0, err
		}
		cfg = *file
	}
	// The proxy is the run's own: on loopback, its gRPC API on a socket
	// in the run's directory, without TLS or tokens, with this CLI's
	// upstream only.
	cfg.Listen = "unix://" + filepath.Join(temp, "grpc.sock")
	cfg.HTTPListen, cfg.MetricsListen, cfg.MetricsInsecure = "127.0.0.1:0", "127.0.0.1:0", false
	cfg.TLSCert, cfg.TLSKey, cfg.TLSClientCA, cfg.AuthTokenFile, cfg.Insecure = "", "", "", "", false
	cfg.DrainDelay = 0
	cfg.Proxy.OpenAIUpstream, cfg.Proxy.AnthropicUpstream, cfg.Proxy.GeminiUpstream, cfg.Proxy.OllamaUpstream = "", "", "", ""
	switch probe.Upstream {
	case "openai":
		cfg.Proxy.OpenAIUpstream = probe.UpstreamURL
	case "anthropic":
		cfg.Proxy.AnthropicUpstream = probe.UpstreamURL
	case "gemini":
		cfg.Proxy.GeminiUpstream = probe.UpstreamURL
	}
	if w.profile != "" {
		cfg.Proxy.Profile = w.profile
	}
	// The terminal is the CLI's: ctxc logs only to --log.
	var logTo io.Writer = io.Discard
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		logTo = f
	}
	cfg.LogFormat = "json"
	cfg.Logger, cfg.Version = cfg.NewLogger(logTo), version
	// Not the command's context: Ctrl-C is the CLI's to handle, and the
	// proxy must serve it until it exits.
	srv, err := server.Start(context.WithoutCancel(ctx), &cfg)
	if err != nil {
		return 0, err
	}
	defer srv.Close()

	proxy := "http://" + srv.HTTPAddr()
	if in, err = w.input(proxy, filepath.Join(temp, "run")); err != nil {
		return 0, err
	}
	setup, err := w.agent.Configure(in)
	if err != nil {
		return 0, err
	}
	windowText := "the model's window"
	if w.window > 0 {
		windowText = fmt.Sprintf("a %s-token window", thousands(w.window))
	}
	fmt.Fprintf(w.io.err, "ctxc wrap: %s through ctxc at %s (%s, %s) to %s\n", w.agent.Command, proxy, setup.Routed, windowText, setup.UpstreamURL)

	cmd := exec.Command(w.program, setup.Args...)
	cmd.Env = loopbackUnproxied(withEnv(os.Environ(), setup.Env))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = w.io.in, w.io.out, w.io.err
	attach, stop := relaySignals()
	if err := cmd.Start(); err != nil {
		stop()
		return 0, err
	}
	attach(cmd.Process)
	waitErr := cmd.Wait()
	stop()
	code, err := exitCode(waitErr)
	if err != nil {
		return 0, err
	}
	totals, err := proxyTotals(srv.MetricsAddr())
	if err != nil {
		fmt.Fprintf(w.io.err, "ctxc wrap: reading what ctxc did: %v\n", err)
		return code, nil
	}
	fmt.Fprintf(w.io.err, "ctxc wrap: %s\n", totals)
	return code, nil
}

// withEnv is env with vars (NAME=value) set over it.
func withEnv(env, vars []string) []string {
	set := map[string]bool{}
	for _, v := range vars {
		name, _, _ := strings.Cut(v, "=")
		set[name] = true
	}
	var out []string
	for _, e := range env {
		if name, _, _ := strings.Cut(e, "="); !set[name] {
			out = append(out, e)
		}
	}
	return append(out, vars...)
}

// loopbackUnproxied adds 127.0.0.1 to NO_PROXY (and no_proxy) when the
// environment names an HTTP proxy: ctxc's port is on this machine, which a
// proxy elsewhere cannot reach.
func loopbackUnproxied(env []string) []string {
	vars := map[string]string{}
	for _, e := range env {
		name, value, _ := strings.Cut(e, "=")
		vars[name] = value
	}
	proxied := false
	for _, name := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"} {
		proxied = proxied || vars[name] != ""
	}
	if !proxied {
		return env
	}
	var set []string
	for _, name := range []string{"NO_PROXY", "no_proxy"} {
		hosts := vars[name]
		if hosts == "" {
			hosts = cmp.Or(vars["NO_PROXY"], vars["no_proxy"])
		}
		if !slices.Contains(strings.Split(strings.ReplaceAll(hosts, " ", ""), ","), "127.0.0.1") {
			hosts = strings.TrimPrefix(hosts+",127.0.0.1", ",")
		}
		set = append(set, name+"="+hosts)
	}
	return withEnv(env, set)
}

// wrapTotals is what the proxy did over the run, from its metrics.
type wrapTotals struct {
	calls       map[string]int // by outcome
	compactions int
	saved       int
	// in and out are the tokens of the contexts compiled, before and after.
	in, out int
}

// proxyTotals reads the run's totals from the proxy's /metrics.
func proxyTotals(addr string) (*wrapTotals, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics answered %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, err
	}
	t := &wrapTotals{calls: map[string]int{}}
	label := func(m *dto.Metric, name string) string {
		for _, l := range m.GetLabel() {
			if l.GetName() == name {
				return l.GetValue()
			}
		}
		return ""
	}
	for _, m := range families["ctxc_proxy_calls_total"].GetMetric() {
		t.calls[label(m, "outcome")] += int(m.GetCounter().GetValue())
	}
	for _, m := range families["ctxc_proxy_compactions_total"].GetMetric() {
		t.compactions += int(m.GetCounter().GetValue())
	}
	for _, m := range families["ctxc_proxy_saved_tokens_total"].GetMetric() {
		t.saved += int(m.GetCounter().GetValue())
	}
	for name, sum := range map[string]*int{"ctxc_context_input_tokens": &t.in, "ctxc_context_output_tokens": &t.out} {
		for _, m := range families[name].GetMetric() {
			if label(m, "method") == "Compile" {
				*sum += int(m.GetHistogram().GetSampleSum())
			}
		}
	}
	return t, nil
}

// String is the line wrap prints at exit.
func (t *wrapTotals) String() string {
	total := 0
	for _, n := range t.calls {
		total += n
	}
	if total == 0 {
		return "no request went through ctxc"
	}
	plural := func(n int, one, many string) string {
		if n == 1 {
			return thousands(n) + " " + one
		}
		return thousands(n) + " " + many
	}
	parts := []string{plural(total, "request", "requests"), thousands(t.calls["rewritten"]) + " rewritten", plural(t.compactions, "compaction", "compactions")}
	for _, o := range []struct{ outcome, says string }{{"refused", "refused by ctxc"}, {"uncompiled", "forwarded uncompiled"}, {"upstream_failed", "failed upstream"}} {
		if n := t.calls[o.outcome]; n > 0 {
			parts = append(parts, thousands(n)+" "+o.says)
		}
	}
	return fmt.Sprintf("%s; tokens %s in, %s out, %s saved", strings.Join(parts, ", "), thousands(t.in), thousands(t.out), thousands(t.saved))
}

// thousands prints n with thousands separators: 48,210.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
