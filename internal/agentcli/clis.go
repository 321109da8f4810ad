package agentcli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// The providers' public base URLs: a CLI's calls go there unless its own
// configuration or --upstream says otherwise.
const (
	publicAnthropic = "https://api.anthropic.com"
	publicOpenAI    = "https://api.openai.com"
	publicGemini    = "https://generativelanguage.googleapis.com"
)

// claudeCode: Anthropic Messages at ANTHROPIC_BASE_URL; the window in
// ANTHROPIC_CUSTOM_HEADERS (one "Name: value" a line).
func claudeCode() *Agent {
	vars := func(base string, window int, existing string) []kv {
		out := []kv{{"ANTHROPIC_BASE_URL", anthropicRoot.at(base)}}
		if window > 0 {
			out = append(out, kv{"ANTHROPIC_CUSTOM_HEADERS", joinHeaders(existing, "\n", HeaderMaxContextTokens+": "+windowValue(window))})
		}
		return out
	}
	return &Agent{Name: "Claude Code", Command: "claude", Package: "@anthropic-ai/claude-code",
		configure: func(in *Input) (*Setup, error) {
			root, err := anthropicRoot.resolve(in, in.env("ANTHROPIC_BASE_URL"), "ANTHROPIC_BASE_URL", publicAnthropic)
			if err != nil {
				return nil, err
			}
			return &Setup{Upstream: anthropicRoot.upstream, UpstreamURL: root, Routed: "ANTHROPIC_BASE_URL",
				Env: envList(vars(in.Proxy, in.Window, in.env("ANTHROPIC_CUSTOM_HEADERS"))), Args: in.Args}, nil
		},
		manual: func(base string, window int) []Block {
			return []Block{{Where: "the environment", Lang: "console", Text: envLines(vars(base, window, ""))}}
		},
	}
}

// codex: OpenAI Responses through a model provider of its configuration
// (Codex reads no base URL from the environment), the window as one of the
// provider's http_headers. The provider's key comes from OPENAI_API_KEY: a
// ChatGPT sign-in talks to ChatGPT's own backend, which ctxc does not proxy.
func codex() *Agent {
	const provider = "ctxc"
	// settings are the provider's keys and TOML values, in order.
	settings := func(base string, window int) [][2]string {
		out := [][2]string{{"name", tomlString(provider)}, {"base_url", tomlString(openaiV1.at(base))},
			{"env_key", tomlString("OPENAI_API_KEY")}, {"wire_api", tomlString("responses")}}
		if window > 0 {
			out = append(out, [2]string{"http_headers", "{ " + tomlString(HeaderMaxContextTokens) + " = " + tomlString(windowValue(window)) + " }"})
		}
		return out
	}
	return &Agent{Name: "Codex", Command: "codex", Package: "@openai/codex",
		configure: func(in *Input) (*Setup, error) {
			root, err := openaiV1.resolve(in, "", "", publicOpenAI)
			if err != nil {
				return nil, err
			}
			// -c overrides the configuration file for this run only.
			var table []string
			for _, s := range settings(in.Proxy, in.Window) {
				table = append(table, s[0]+" = "+s[1])
			}
			args := []string{"-c", "model_provider=" + tomlString(provider),
				"-c", "model_providers." + provider + "={ " + strings.Join(table, ", ") + " }"}
			return &Setup{Upstream: openaiV1.upstream, UpstreamURL: root, Routed: "model provider " + provider + " (-c)",
				Args: append(args, in.Args...)}, nil
		},
		manual: func(base string, window int) []Block {
			var b strings.Builder
			fmt.Fprintf(&b, "model_provider = %s\n\n[model_providers.%s]\n", tomlString(provider), provider)
			for _, s := range settings(base, window) {
				fmt.Fprintf(&b, "%s = %s\n", s[0], s[1])
			}
			return []Block{{Where: "~/.codex/config.toml", Lang: "toml", Text: b.String()}}
		},
	}
}

// tomlString is a TOML basic string (JSON's escapes are TOML's).
func tomlString(s string) string { return compactJSON(s) }

// systemSettings is the file of system settings a CLI of Gemini CLI's
// family reads over the user's and the project's (env names it, else the
// system's place), with over merged into what it holds; its path is
// under temp.
func systemSettings(in *Input, env string, places map[string]string, over map[string]any, name string) (string, error) {
	path := in.env(env)
	if path == "" {
		path = places[runtime.GOOS]
	}
	var have map[string]any
	if path != "" {
		var err error
		if have, err = readJSON(path); err != nil {
			return "", err
		}
	}
	return writeFile(in.Temp, name, jsonText(merge(have, over)))
}

// geminiCLI: the Gemini API at GOOGLE_GEMINI_BASE_URL with a key
// (GEMINI_API_KEY); without an auth type in its settings, -p exits 41, and
// a Google sign-in talks to Code Assist rather than the Gemini API, so its
// settings must select gemini-api-key. The window in
// GEMINI_CLI_CUSTOM_HEADERS ("Name: value" pairs, comma separated). Its
// system settings (over the user's) are refused in a directory others may
// write to, as /tmp is, so the run gets an overlay of its home instead
// (GEMINI_CLI_HOME): ~/.gemini's files linked, settings.json the user's
// with the auth type set.
func geminiCLI() *Agent {
	vars := func(base string, window int, existing string) []kv {
		out := []kv{{"GOOGLE_GEMINI_BASE_URL", geminiRoot.at(base)}}
		if window > 0 {
			out = append(out, kv{"GEMINI_CLI_CUSTOM_HEADERS", joinHeaders(existing, ", ", HeaderMaxContextTokens+": "+windowValue(window))})
		}
		return out
	}
	auth := func() map[string]any {
		return map[string]any{"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}}}
	}
	return &Agent{Name: "Gemini CLI", Command: "gemini", Package: "@google/gemini-cli",
		configure: func(in *Input) (*Setup, error) {
			root, err := geminiRoot.resolve(in, in.env("GOOGLE_GEMINI_BASE_URL"), "GOOGLE_GEMINI_BASE_URL", publicGemini)
			if err != nil {
				return nil, err
			}
			home := in.env("GEMINI_CLI_HOME")
			if home == "" {
				home = in.Home
			}
			settings, err := readJSON(filepath.Join(home, ".gemini", "settings.json"))
			if err != nil {
				return nil, err
			}
			overlay := filepath.Join(in.Temp, "gemini-home")
			// Chats are kept under ~/.gemini/tmp.
			if err := linkOverlay(filepath.Join(home, ".gemini"), filepath.Join(overlay, ".gemini"),
				map[string]string{"settings.json": jsonText(merge(settings, auth()))}, "tmp"); err != nil {
				return nil, err
			}
			// It reads keys from ~/.env too.
			if _, err := os.Stat(filepath.Join(home, ".env")); err == nil {
				if err := os.Symlink(filepath.Join(home, ".env"), filepath.Join(overlay, ".env")); err != nil {
					return nil, err
				}
			}
			env := append(envList(vars(in.Proxy, in.Window, in.env("GEMINI_CLI_CUSTOM_HEADERS"))), "GEMINI_CLI_HOME="+overlay)
			return &Setup{Upstream: geminiRoot.upstream, UpstreamURL: root, Routed: "GOOGLE_GEMINI_BASE_URL", Env: env, Args: in.Args}, nil
		},
		manual: func(base string, window int) []Block {
			return []Block{
				{Where: "the environment", Lang: "console", Text: envLines(vars(base, window, ""))},
				{Where: "~/.gemini/settings.json", Lang: "json", Text: jsonText(auth())},
			}
		},
	}
}

// qwenCode: OpenAI Chat Completions. A model of its settings'
// modelProviders carries its own baseUrl and headers, over every other
// setting: those entries are pointed at ctxc in system settings (which
// replace modelProviders whole). A model without an entry reads
// OPENAI_BASE_URL, and its headers from model.generationConfig.
func qwenCode() *Agent {
	headers := func(window int) map[string]any {
		return map[string]any{"customHeaders": map[string]any{HeaderMaxContextTokens: windowValue(window)}}
	}
	// runtime are the settings of a model without an entry.
	runtime := func(window int) map[string]any {
		s := map[string]any{"security": map[string]any{"auth": map[string]any{"selectedType": "openai"}}}
		if window > 0 {
			s["model"] = map[string]any{"generationConfig": headers(window)}
		}
		return s
	}
	places := map[string]string{"linux": "/etc/qwen-code/settings.json", "darwin": "/Library/Application Support/QwenCode/settings.json"}
	return &Agent{Name: "Qwen Code", Command: "qwen", Package: "@qwen-code/qwen-code",
		configure: func(in *Input) (*Setup, error) {
			// The user's settings, then the project's (which replace
			// modelProviders whole, as Qwen Code merges them).
			user, err := readJSON(filepath.Join(in.Home, ".qwen", "settings.json"))
			if err != nil {
				return nil, err
			}
			project, err := readJSON(filepath.Join(in.Dir, ".qwen", "settings.json"))
			if err != nil {
				return nil, err
			}
			providers := object(user, "modelProviders")
			if p := object(project, "modelProviders"); p != nil {
				providers = p
			}
			model := flagValue(in.Args, "-m", "--model")
			for _, s := range []map[string]any{project, user} {
				if model == "" {
					model = str(object(s, "model"), "name")
				}
			}
			if model == "" {
				model = in.env("OPENAI_MODEL")
			}
			over := runtime(in.Window)
			var root, routed string
			entries, _ := providers["openai"].([]any)
			entry := modelEntry(entries, model)
			for kind, list := range providers {
				if others, _ := list.([]any); entry == nil && kind != "openai" && modelEntry(others, model) != nil {
					return nil, fmt.Errorf("model %s is one of modelProviders.%s: ctxc wrap routes Qwen Code's OpenAI-compatible models (modelProviders.openai)", model, kind)
				}
			}
			if entry != nil {
				base := str(entry, "baseUrl")
				if base == "" {
					base = publicOpenAI + "/v1"
				}
				if root, err = openaiV1.resolve(in, base, "modelProviders.openai "+model+" baseUrl", publicOpenAI); err != nil {
					return nil, err
				}
				// Every entry at the same base URL goes through ctxc.
				rewritten := map[string]any{}
				for k, v := range providers {
					rewritten[k] = v
				}
				var list []any
				for _, e := range entries {
					if m, ok := e.(map[string]any); ok && str(m, "baseUrl") == str(entry, "baseUrl") {
						m = merge(merge(nil, m), map[string]any{"baseUrl": openaiV1.at(in.Proxy)})
						if in.Window > 0 {
							m = merge(m, map[string]any{"generationConfig": headers(in.Window)})
						}
						e = m
					}
					list = append(list, e)
				}
				rewritten["openai"] = list
				over = merge(over, map[string]any{"modelProviders": rewritten})
				delete(over, "model") // an entry's generationConfig is the one read
				routed = "modelProviders.openai " + model
			} else {
				if root, err = openaiV1.resolve(in, in.env("OPENAI_BASE_URL"), "OPENAI_BASE_URL", publicOpenAI); err != nil {
					return nil, err
				}
				routed = "OPENAI_BASE_URL"
			}
			path, err := systemSettings(in, "QWEN_CODE_SYSTEM_SETTINGS_PATH", places, over, "qwen-system-settings.json")
			if err != nil {
				return nil, err
			}
			env := []string{"OPENAI_BASE_URL=" + openaiV1.at(in.Proxy), "QWEN_CODE_SYSTEM_SETTINGS_PATH=" + path}
			// It sends every request through HTTPS_PROXY, ignoring
			// NO_PROXY: its calls to ctxc's loopback port too. ctxc
			// reaches the upstream through the proxy instead.
			for _, name := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"} {
				if in.env(name) != "" {
					env = append(env, name+"=")
				}
			}
			return &Setup{Upstream: openaiV1.upstream, UpstreamURL: root, Routed: routed, Env: env, Args: in.Args}, nil
		},
		manual: func(base string, window int) []Block {
			return []Block{
				{Where: "the environment", Lang: "console", Text: envLines([]kv{{"OPENAI_BASE_URL", openaiV1.at(base)}})},
				{Where: "~/.qwen/settings.json", Lang: "json", Text: jsonText(runtime(window))},
			}
		},
	}
}

// modelEntry is the entry of a modelProviders list with the model's id.
func modelEntry(entries []any, model string) map[string]any {
	for _, e := range entries {
		if m, ok := e.(map[string]any); ok && model != "" && str(m, "id") == model {
			return m
		}
	}
	return nil
}

// A builtin is a provider a multi-provider CLI knows without configuration:
// the API it speaks and its public base URL as the CLI writes it.
type builtin struct {
	api  api
	base string
}

// openCode: the provider of the session's model (-m provider/model, else
// the configuration's model) gets ctxc as its baseURL, and the window as one
// of its headers, in OPENCODE_CONFIG_CONTENT: the configuration of highest
// precedence, merged over the user's and the project's files.
func openCode() *Agent {
	builtins := map[string]builtin{
		"openai":     {openaiV1, publicOpenAI + "/v1"},
		"anthropic":  {anthropicV1, publicAnthropic + "/v1"},
		"google":     {geminiV1beta, publicGemini + "/v1beta"},
		"openrouter": {openaiV1, "https://openrouter.ai/api/v1"},
	}
	// The AI SDK packages opencode loads a configured provider with.
	packages := map[string]api{"@ai-sdk/openai-compatible": openaiV1, "@ai-sdk/openai": openaiV1, "@ai-sdk/anthropic": anthropicV1,
		"@ai-sdk/google": geminiV1beta, "@openrouter/ai-sdk-provider": openaiV1}
	override := func(provider, base string, window int) map[string]any {
		opts := map[string]any{"baseURL": base}
		if window > 0 {
			opts["headers"] = map[string]any{HeaderMaxContextTokens: windowValue(window)}
		}
		return map[string]any{"provider": map[string]any{provider: map[string]any{"options": opts}}}
	}
	return &Agent{Name: "opencode", Command: "opencode", Package: "opencode-ai",
		configure: func(in *Input) (*Setup, error) {
			cfg, err := openCodeConfig(in)
			if err != nil {
				return nil, err
			}
			model := flagValue(in.Args, "-m", "--model")
			if model == "" {
				model = str(cfg, "model")
			}
			provider, _, ok := strings.Cut(model, "/")
			if !ok || provider == "" {
				return nil, fmt.Errorf("no model to route: name one as provider/model with -m, or set model in opencode.json")
			}
			def := object(cfg, "provider", provider)
			b, known := builtins[provider]
			if npm := str(def, "npm"); npm != "" {
				a, ok := packages[npm]
				if !ok {
					return nil, fmt.Errorf("provider %s is loaded with %s, whose API ctxc's proxy does not serve", provider, npm)
				}
				b, known = builtin{a, b.base}, true
			}
			if !known {
				return nil, fmt.Errorf("provider %s is neither configured with a baseURL nor one ctxc wrap knows (%s): give --upstream and configure it by hand (docs/agents.md)",
					provider, strings.Join(sortedKeys(builtins), ", "))
			}
			base := str(object(def, "options"), "baseURL")
			if base == "" {
				base = b.base
			}
			root, err := b.api.resolve(in, base, "provider "+provider+" baseURL", "")
			if err != nil {
				return nil, err
			}
			if root == "" {
				return nil, fmt.Errorf("provider %s has no baseURL: give --upstream", provider)
			}
			content := override(provider, b.api.at(in.Proxy), in.Window)
			if have := in.env("OPENCODE_CONFIG_CONTENT"); have != "" {
				var user map[string]any
				if err := jsonUnmarshal(have, &user); err != nil {
					return nil, fmt.Errorf("OPENCODE_CONFIG_CONTENT: %w", err)
				}
				content = merge(user, content)
			}
			return &Setup{Upstream: b.api.upstream, UpstreamURL: root, Routed: "provider " + provider + " (OPENCODE_CONFIG_CONTENT)",
				Env: []string{"OPENCODE_CONFIG_CONTENT=" + compactJSON(content)}, Args: in.Args}, nil
		},
		manual: func(base string, window int) []Block {
			return []Block{{Where: "~/.config/opencode/opencode.json", Lang: "json", Text: jsonText(override("openai", openaiV1.at(base), window))}}
		},
	}
}

// openCodeConfig is opencode's configuration as far as the provider and
// model go: the global file, OPENCODE_CONFIG's, the project's, then
// OPENCODE_CONFIG_CONTENT, each over the one before.
func openCodeConfig(in *Input) (map[string]any, error) {
	global := in.env("XDG_CONFIG_HOME")
	if global == "" {
		global = filepath.Join(in.Home, ".config")
	}
	var files []string
	for _, name := range []string{"config.json", "opencode.json", "opencode.jsonc"} {
		files = append(files, filepath.Join(global, "opencode", name))
	}
	if p := in.env("OPENCODE_CONFIG"); p != "" {
		files = append(files, p)
	}
	// The project's files, from the outermost directory down to the
	// working one.
	var dirs []string
	for d := in.Dir; d != ""; {
		dirs = append([]string{d}, dirs...)
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	for _, d := range dirs {
		files = append(files, filepath.Join(d, "opencode.json"), filepath.Join(d, "opencode.jsonc"))
	}
	cfg := map[string]any{}
	for _, f := range files {
		m, err := readJSON(f)
		if err != nil {
			return nil, err
		}
		cfg = merge(cfg, m)
	}
	if c := in.env("OPENCODE_CONFIG_CONTENT"); c != "" {
		var m map[string]any
		if err := jsonUnmarshal(c, &m); err != nil {
			return nil, fmt.Errorf("OPENCODE_CONFIG_CONTENT: %w", err)
		}
		cfg = merge(cfg, m)
	}
	return cfg, nil
}

// pi: the session's provider (--provider, a provider/ prefix of --model,
// else settings.json's defaultProvider) gets ctxc as its baseUrl and the
// window as one of its headers in models.json. pi reads models.json only
// from its agent directory, so the run gets an overlay of it: the user's
// files linked, models.json merged with the override.
func pi() *Agent {
	builtins := map[string]builtin{
		"openai":     {openaiV1, publicOpenAI + "/v1"},
		"anthropic":  {anthropicRoot, publicAnthropic},
		"google":     {geminiV1beta, publicGemini + "/v1beta"},
		"openrouter": {openaiV1, "https://openrouter.ai/api/v1"},
	}
	apis := map[string]api{"openai-completions": openaiV1, "openai-responses": openaiV1, "anthropic-messages": anthropicRoot,
		"google-generative-ai": geminiV1beta}
	override := func(provider, base string, window int) map[string]any {
		p := map[string]any{"baseUrl": base}
		if window > 0 {
			p["headers"] = map[string]any{HeaderMaxContextTokens: windowValue(window)}
		}
		return map[string]any{"providers": map[string]any{provider: p}}
	}
	return &Agent{Name: "pi", Command: "pi", Package: "@mariozechner/pi-coding-agent",
		configure: func(in *Input) (*Setup, error) {
			dir := in.env("PI_CODING_AGENT_DIR")
			if dir == "" {
				dir = filepath.Join(in.Home, ".pi", "agent")
			}
			models, err := readJSON(filepath.Join(dir, "models.json"))
			if err != nil {
				return nil, err
			}
			provider := flagValue(in.Args, "--provider")
			if m := flagValue(in.Args, "--model"); provider == "" && strings.Contains(m, "/") {
				prefix, _, _ := strings.Cut(m, "/")
				if _, ok := builtins[prefix]; ok || object(models, "providers", prefix) != nil {
					provider = prefix
				}
			}
			for _, path := range []string{filepath.Join(in.Dir, ".pi", "settings.json"), filepath.Join(dir, "settings.json")} {
				if provider != "" {
					break
				}
				s, err := readJSON(path)
				if err != nil {
					return nil, err
				}
				provider = str(s, "defaultProvider")
			}
			if provider == "" {
				return nil, fmt.Errorf("no provider to route: name it with --provider, or set defaultProvider in settings.json")
			}
			def := object(models, "providers", provider)
			b, known := builtins[provider]
			if name := str(def, "api"); name != "" {
				a, ok := apis[name]
				if !ok {
					return nil, fmt.Errorf("provider %s speaks %s, which ctxc's proxy does not serve", provider, name)
				}
				b, known = builtin{a, b.base}, true
			}
			if !known {
				return nil, fmt.Errorf("provider %s is neither in models.json with an api and baseUrl nor one ctxc wrap knows (%s): give --upstream and configure it by hand (docs/agents.md)",
					provider, strings.Join(sortedKeys(builtins), ", "))
			}
			base := str(def, "baseUrl")
			if base == "" {
				base = b.base
			}
			root, err := b.api.resolve(in, base, "models.json provider "+provider+" baseUrl", "")
			if err != nil {
				return nil, err
			}
			if root == "" {
				return nil, fmt.Errorf("provider %s has no baseUrl: give --upstream", provider)
			}
			overlay := filepath.Join(in.Temp, "pi-agent")
			if err := linkOverlay(dir, overlay, map[string]string{"models.json": jsonText(merge(models, override(provider, b.api.at(in.Proxy), in.Window)))}, "sessions"); err != nil {
				return nil, err
			}
			env := []string{"PI_CODING_AGENT_DIR=" + overlay}
			return &Setup{Upstream: b.api.upstream, UpstreamURL: root, Routed: "provider " + provider + " (models.json)", Env: env, Args: in.Args}, nil
		},
		manual: func(base string, window int) []Block {
			return []Block{{Where: "~/.pi/agent/models.json", Lang: "json", Text: jsonText(override("openai", openaiV1.at(base), window))}}
		},
	}
}

// linkOverlay makes a CLI's configuration directory for the run at
// overlay: every entry of the user's (dir) linked, so that sessions, keys
// and settings stay the user's own, but files, the run's. A user's
// directory without the state directory keep gets one, as the CLI would
// make it, so that the run's state stays.
func linkOverlay(dir, overlay string, files map[string]string, keep string) error {
	if err := os.MkdirAll(overlay, 0o700); err != nil {
		return err
	}
	if _, err := os.Stat(dir); err == nil {
		if err := os.MkdirAll(filepath.Join(dir, keep), 0o755); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, e := range entries {
		if _, ours := files[e.Name()]; ours {
			continue
		}
		if err := os.Symlink(filepath.Join(dir, e.Name()), filepath.Join(overlay, e.Name())); err != nil {
			return err
		}
	}
	for name, content := range files {
		if _, err := writeFile(overlay, name, content); err != nil {
			return err
		}
	}
	return nil
}

// sortedKeys are a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// jsonUnmarshal decodes a JSON text given as a string.
func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
