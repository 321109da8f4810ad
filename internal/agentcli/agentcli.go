// Package agentcli knows how each supported agent CLI is pointed at ctxc's
// proxy: where it reads its provider's base URL, how it sends a header of
// its own (the window, X-Ctxc-Max-Context-Tokens), and what must be set
// beside them (an auth type, a model provider). `ctxc wrap` applies it to run
// a CLI through a proxy of its own without writing to the user's
// configuration files (Configure); docs/agents.md shows the same settings
// for a ctxc that is already running (Manual), and the tests check that the
// two say the same.
package agentcli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// HeaderMaxContextTokens is the proxy's header that caps a call's window.
const HeaderMaxContextTokens = "X-Ctxc-Max-Context-Tokens"

// Agent is one supported agent CLI.
type Agent struct {
	// Name is the CLI's name ("Claude Code"), Command the program's
	// ("claude"), Package the npm package that installs it.
	Name, Command, Package string
	configure              func(in *Input) (*Setup, error)
	manual                 func(base string, window int) []Block
}

// Agents are the supported CLIs, in the order the documentation lists them.
func Agents() []*Agent {
	return []*Agent{claudeCode(), codex(), geminiCLI(), qwenCode(), openCode(), pi()}
}

// Lookup finds the agent a program is (its file name: /usr/bin/codex is codex).
func Lookup(program string) (*Agent, bool) {
	name := filepath.Base(program)
	for _, a := range Agents() {
		if a.Command == name {
			return a, true
		}
	}
	return nil, false
}

// Commands are the supported programs' names.
func Commands() []string {
	var out []string
	for _, a := range Agents() {
		out = append(out, a.Command)
	}
	return out
}

// Input is what Configure needs to know of the run.
type Input struct {
	// Proxy is ctxc's base URL: http://127.0.0.1:PORT.
	Proxy string
	// Window is the window every call is compiled in (0: the model's).
	Window int
	// Upstream is the provider's base URL given by the user (--upstream):
	// its root (https://api.openai.com) or as the CLI writes it (with the
	// API's own /v1). Empty: the CLI's own configuration, else the
	// provider's public URL.
	Upstream string
	// Args are the CLI's arguments, without the program.
	Args []string
	// Env is the environment the CLI would run with.
	Env func(string) (string, bool)
	// Home is the user's home directory and Dir the working directory,
	// where the CLI would find its user and project configuration.
	Home, Dir string
	// Temp is a directory of the run's own for the files Configure
	// writes (settings of higher precedence, an overlay): removed after it.
	Temp string
}

func (in *Input) env(name string) string {
	if in.Env == nil {
		return ""
	}
	v, _ := in.Env(name)
	return v
}

// Setup is how to run the CLI through the proxy.
type Setup struct {
	// Upstream is the proxy's upstream the CLI's calls go to (openai,
	// anthropic or gemini) and UpstreamURL its root, as ctxc's proxy
	// configuration takes it.
	Upstream, UpstreamURL string
	// Routed says what was pointed at ctxc ("ANTHROPIC_BASE_URL",
	// "provider openai of models.json"), for the line wrap prints.
	Routed string
	// Env are the variables (NAME=value) to set for the CLI, over the
	// environment it would have had.
	Env []string
	// Args are the CLI's arguments: ctxc's first, then the user's.
	Args []string
}

// Configure works out how to run the CLI through ctxc's proxy at in.Proxy.
// It reads the user's configuration but writes only under in.Temp.
func (a *Agent) Configure(in *Input) (*Setup, error) {
	s, err := a.configure(in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.Name, err)
	}
	return s, nil
}

// Block is one piece of a CLI's manual configuration: where it goes
// ("the environment", "~/.codex/config.toml") and its text, in a language
// of a Markdown fence (console, toml, json).
type Block struct {
	Where, Lang, Text string
}

// Manual is the configuration that points the CLI at a ctxc running at
// base, with its calls compiled in window (0: none set): what Configure
// applies, as the user would write it.
func (a *Agent) Manual(base string, window int) []Block { return a.manual(base, window) }

// An api is one of the provider APIs ctxc's proxy serves, as a CLI's base
// URL addresses it: upstream is the proxy's upstream, suffix what the
// CLI's base URL holds past the upstream's root (the OpenAI SDKs' /v1).
type api struct{ upstream, suffix string }

var (
	anthropicRoot = api{"anthropic", ""}
	anthropicV1   = api{"anthropic", "/v1"}
	openaiV1      = api{"openai", "/v1"}
	geminiRoot    = api{"gemini", ""}
	geminiV1beta  = api{"gemini", "/v1beta"}
)

// at is the CLI's base URL for ctxc's proxy at proxy.
func (a api) at(proxy string) string { return proxy + a.suffix }

// root is the upstream's root of a base URL as a CLI writes it (what gave
// it names it in the error).
func (a api) root(base, from string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s: %q is not an http or https URL", from, base)
	}
	trimmed := strings.TrimRight(base, "/")
	if a.suffix == "" {
		return trimmed, nil
	}
	root, ok := strings.CutSuffix(trimmed, a.suffix)
	if !ok {
		return "", fmt.Errorf("%s: %q does not end in %s: ctxc's proxy serves the %s API under %s", from, base, a.suffix, a.upstream, a.suffix)
	}
	return root, nil
}

// resolve is the root of the provider's base URL: --upstream (a root, or
// the URL as the CLI writes it), else configured (the CLI's own setting,
// named by from), else public.
func (a api) resolve(in *Input, configured, from, public string) (string, error) {
	switch {
	case in.Upstream != "":
		if r, err := a.root(in.Upstream, "--upstream"); err == nil {
			return r, nil
		}
		return api{a.upstream, ""}.root(in.Upstream, "--upstream")
	case configured != "":
		return a.root(configured, from)
	}
	return public, nil
}

// windowValue is the header's value for a window.
func windowValue(window int) string { return strconv.Itoa(window) }

// readJSON reads a JSON settings file that may hold comments and trailing
// commas (JSONC, as the CLIs' own readers allow); a missing file is nil.
func readJSON(path string) (map[string]any, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	if len(bytes.TrimSpace(raw)) == 0 {
		return out, nil
	}
	if err := json.Unmarshal(stripJSONC(raw), &out); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return out, nil
}

// stripJSONC drops the comments of a JSONC text, then the commas before a
// closing bracket, leaving JSON.
func stripJSONC(in []byte) []byte {
	return scanJSON(scanJSON(in, func(in []byte, i int) int {
		switch {
		case in[i] == '/' && i+1 < len(in) && in[i+1] == '/':
			if end := bytes.IndexByte(in[i:], '\n'); end >= 0 {
				return i + end
			}
			return len(in)
		case in[i] == '/' && i+1 < len(in) && in[i+1] == '*':
			if end := bytes.Index(in[i+2:], []byte("*/")); end >= 0 {
				return i + 2 + end + 2
			}
			return len(in)
		}
		return i
	}), func(in []byte, i int) int {
		if in[i] != ',' {
			return i
		}
		rest := bytes.TrimLeft(in[i+1:], " \t\r\n")
		if len(rest) > 0 && (rest[0] == '}' || rest[0] == ']') {
			return i + 1
		}
		return i
	})
}

// scanJSON copies in but for what skip drops: outside strings, at each
// byte i, skip returns where to go on from (i itself to keep the byte).
func scanJSON(in []byte, skip func(in []byte, i int) int) []byte {
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); {
		if in[i] == '"' {
			j := i + 1
			for ; j < len(in) && in[j] != '"'; j++ {
				if in[j] == '\\' {
					j++
				}
			}
			end := min(j+1, len(in))
			out = append(out, in[i:end]...)
			i = end
			continue
		}
		if next := skip(in, i); next != i {
			i = next
			continue
		}
		out = append(out, in[i])
		i++
	}
	return out
}

// merge sets every key of src in dst, merging objects key by key.
func merge(dst, src map[string]any) map[string]any {
	if dst == nil {
		dst = map[string]any{}
	}
	for k, v := range src {
		if sub, ok := v.(map[string]any); ok {
			if have, ok := dst[k].(map[string]any); ok {
				dst[k] = merge(have, sub)
				continue
			}
			dst[k] = merge(nil, sub)
			continue
		}
		dst[k] = v
	}
	return dst
}

// object is m[keys[0]][keys[1]]... when each is an object, else nil.
func object(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}

// str is m[key] when it is a string.
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// jsonText is v as indented JSON with a final newline, as the
// documentation shows it and the settings files are written.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic(err) // maps of strings, numbers and objects only
	}
	return b.String()
}

// compactJSON is v as one line of JSON (a variable's value).
func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// writeFile writes a file of the run's own under dir.
func writeFile(dir, name, content string) (string, error) {
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, []byte(content), 0o600)
}

// flagValue is the value of the last of the flags names (-m, --model) in
// args, given as "-m X" or "--model=X", before a "--".
func flagValue(args []string, names ...string) string {
	value := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		for _, n := range names {
			switch {
			case a == n && i+1 < len(args):
				value = args[i+1]
			case strings.HasPrefix(a, n+"="):
				value = strings.TrimPrefix(a, n+"=")
			}
		}
	}
	return value
}

// kv is one variable of the environment.
type kv struct{ name, value string }

// envLines renders variables as the documentation's export lines.
func envLines(vars []kv) string {
	var b strings.Builder
	for _, v := range vars {
		value := v.value
		if strings.ContainsAny(value, " \"'$`\\\n") {
			value = strconv.Quote(value)
		}
		fmt.Fprintf(&b, "export %s=%s\n", v.name, value)
	}
	return b.String()
}

// envList renders variables as NAME=value for a process.
func envList(vars []kv) []string {
	var out []string
	for _, v := range vars {
		out = append(out, v.name+"="+v.value)
	}
	return out
}

// joinHeaders adds a header to a variable's list of them (sep between
// two), keeping those the user set.
func joinHeaders(existing, sep, header string) string {
	if strings.TrimSpace(existing) == "" {
		return header
	}
	return existing + sep + header
}
