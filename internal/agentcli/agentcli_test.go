package agentcli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testProxy = "http://127.0.0.1:4100"

// configured is what a Setup comes to for the test: the environment and
// arguments, with the files it names read back.
type configured struct {
	Upstream, UpstreamURL, Routed string
	Env                           map[string]string
	Args                          []string
	// Files are the contents of the files the environment names, as
	// JSON objects.
	Files map[string]any
}

// configureIn runs Configure for a user whose home holds files, with env.
func configureIn(t *testing.T, a *Agent, files map[string]string, env map[string]string, in Input) (configured, error) {
	t.Helper()
	home := t.TempDir()
	for name, content := range files {
		path := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// No system settings of the machine's own are read.
	vars := map[string]string{"QWEN_CODE_SYSTEM_SETTINGS_PATH": filepath.Join(home, "none.json"), "XDG_CONFIG_HOME": filepath.Join(home, ".config")}
	for k, v := range env {
		vars[k] = v
	}
	in.Proxy, in.Home, in.Dir, in.Temp = testProxy, home, filepath.Join(home, "work"), t.TempDir()
	in.Env = func(name string) (string, bool) { v, ok := vars[name]; return v, ok }
	s, err := a.Configure(&in)
	if err != nil {
		return configured{}, err
	}
	out := configured{Upstream: s.Upstream, UpstreamURL: s.UpstreamURL, Routed: s.Routed, Env: map[string]string{}, Args: s.Args, Files: map[string]any{}}
	for _, e := range s.Env {
		name, value, _ := strings.Cut(e, "=")
		out.Env[name] = value
		var path string
		switch name {
		case "QWEN_CODE_SYSTEM_SETTINGS_PATH":
			path = value
		case "GEMINI_CLI_HOME":
			path = filepath.Join(value, ".gemini", "settings.json")
		case "PI_CODING_AGENT_DIR":
			path = filepath.Join(value, "models.json")
		case "OPENCODE_CONFIG_CONTENT":
			var v any
			if err := json.Unmarshal([]byte(value), &v); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out.Files[name] = v
			out.Env[name] = "(read)"
			continue
		default:
			continue
		}
		out.Env[name] = "(read)"
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out.Files[name] = v
	}
	return out, nil
}

func lookup(t *testing.T, command string) *Agent {
	t.Helper()
	a, ok := Lookup("/usr/local/bin/" + command)
	if !ok {
		t.Fatalf("no agent %s", command)
	}
	return a
}

// obj builds a JSON object for a want.
type obj = map[string]any

// TestConfigure: for each CLI, where the upstream comes from (--upstream,
// the user's own configuration, else the provider's public URL), and what
// the CLI is given: variables, arguments and settings of higher precedence
// that keep what the user set.
func TestConfigure(t *testing.T) {
	tests := []struct {
		name    string
		command string
		files   map[string]string
		env     map[string]string
		in      Input
		want    configured
		wantErr string
	}{
		{
			name: "claude: the public API, a window", command: "claude", in: Input{Window: 32000, Args: []string{"-p", "hi"}},
			want: configured{Upstream: "anthropic", UpstreamURL: publicAnthropic, Routed: "ANTHROPIC_BASE_URL",
				Env:  map[string]string{"ANTHROPIC_BASE_URL": testProxy, "ANTHROPIC_CUSTOM_HEADERS": "X-Ctxc-Max-Context-Tokens: 32000"},
				Args: []string{"-p", "hi"}},
		},
		{
			name: "claude: the user's gateway and headers", command: "claude",
			env: map[string]string{"ANTHROPIC_BASE_URL": "https://gateway.example.com/", "ANTHROPIC_CUSTOM_HEADERS": "X-Team: infra"}, in: Input{Window: 8000},
			want: configured{Upstream: "anthropic", UpstreamURL: "https://gateway.example.com", Routed: "ANTHROPIC_BASE_URL",
				Env: map[string]string{"ANTHROPIC_BASE_URL": testProxy, "ANTHROPIC_CUSTOM_HEADERS": "X-Team: infra\nX-Ctxc-Max-Context-Tokens: 8000"}},
		},
		{
			name: "codex: a model provider of -c, --upstream as the CLI writes it", command: "codex",
			in: Input{Window: 16000, Upstream: "http://127.0.0.1:11434/v1", Args: []string{"exec", "fix it"}},
			want: configured{Upstream: "openai", UpstreamURL: "http://127.0.0.1:11434", Routed: "model provider ctxc (-c)", Env: map[string]string{},
				Args: []string{"-c", `model_provider="ctxc"`, "-c",
					`model_providers.ctxc={ name = "ctxc", base_url = "http://127.0.0.1:4100/v1", env_key = "OPENAI_API_KEY", wire_api = "responses", http_headers = { "X-Ctxc-Max-Context-Tokens" = "16000" } }`,
					"exec", "fix it"}},
		},
		{
			name: "gemini: a Google sign-in is replaced by the key, the user's settings kept", command: "gemini",
			files: map[string]string{".gemini/settings.json": `{"security": {"auth": {"selectedType": "oauth-personal"}}, "telemetry": {"enabled": false}}`},
			in:    Input{Window: 24000},
			want: configured{Upstream: "gemini", UpstreamURL: publicGemini, Routed: "GOOGLE_GEMINI_BASE_URL",
				Env: map[string]string{"GOOGLE_GEMINI_BASE_URL": testProxy, "GEMINI_CLI_CUSTOM_HEADERS": "X-Ctxc-Max-Context-Tokens: 24000",
					"GEMINI_CLI_HOME": "(read)"},
				Files: map[string]any{"GEMINI_CLI_HOME": obj{"security": obj{"auth": obj{"selectedType": "gemini-api-key"}}, "telemetry": obj{"enabled": false}}}},
		},
		{
			name: "qwen: a model of modelProviders points at ctxc with its headers", command: "qwen",
			files: map[string]string{".qwen/settings.json": `{
  // the user's models
  "modelProviders": {"openai": [
    {"id": "qwen3-coder-plus", "baseUrl": "https://dashscope.aliyuncs.com/compatible-mode/v1", "envKey": "DASHSCOPE_API_KEY"},
    {"id": "llama", "baseUrl": "http://127.0.0.1:8000/v1", "envKey": "LOCAL_KEY"},
  ]},
  "model": {"name": "qwen3-coder-plus"},
}`},
			in: Input{Window: 32000},
			want: configured{Upstream: "openai", UpstreamURL: "https://dashscope.aliyuncs.com/compatible-mode", Routed: "modelProviders.openai qwen3-coder-plus",
				Env: map[string]string{"OPENAI_BASE_URL": testProxy + "/v1", "QWEN_CODE_SYSTEM_SETTINGS_PATH": "(read)"},
				Files: map[string]any{"QWEN_CODE_SYSTEM_SETTINGS_PATH": obj{
					"security": obj{"auth": obj{"selectedType": "openai"}},
					"modelProviders": obj{"openai": []any{
						obj{"id": "qwen3-coder-plus", "baseUrl": testProxy + "/v1", "envKey": "DASHSCOPE_API_KEY",
							"generationConfig": obj{"customHeaders": obj{"X-Ctxc-Max-Context-Tokens": "32000"}}},
						obj{"id": "llama", "baseUrl": "http://127.0.0.1:8000/v1", "envKey": "LOCAL_KEY"},
					}}}}},
		},
		{
			name: "qwen: -m picks the model, OPENAI_BASE_URL without an entry, no HTTPS_PROXY", command: "qwen",
			env: map[string]string{"OPENAI_BASE_URL": "https://openrouter.ai/api/v1", "HTTPS_PROXY": "http://proxy.example.com:3128"},
			in:  Input{Args: []string{"-m", "some/model", "-p", "x"}},
			want: configured{Upstream: "openai", UpstreamURL: "https://openrouter.ai/api", Routed: "OPENAI_BASE_URL",
				Env:   map[string]string{"OPENAI_BASE_URL": testProxy + "/v1", "QWEN_CODE_SYSTEM_SETTINGS_PATH": "(read)", "HTTPS_PROXY": ""},
				Args:  []string{"-m", "some/model", "-p", "x"},
				Files: map[string]any{"QWEN_CODE_SYSTEM_SETTINGS_PATH": obj{"security": obj{"auth": obj{"selectedType": "openai"}}}}},
		},
		{
			name: "qwen: an Anthropic model is not routed", command: "qwen",
			files:   map[string]string{".qwen/settings.json": `{"modelProviders": {"anthropic": [{"id": "claude", "envKey": "K"}]}, "model": {"name": "claude"}}`},
			wantErr: "modelProviders.anthropic",
		},
		{
			name: "opencode: a provider of the user's config, over OPENCODE_CONFIG_CONTENT", command: "opencode",
			files: map[string]string{".config/opencode/opencode.jsonc": `{
  "provider": {"local": {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL": "http://127.0.0.1:8080/v1/"}}},
  "model": "local/qwen2.5-coder", // the default
}`},
			env: map[string]string{"OPENCODE_CONFIG_CONTENT": `{"theme": "tokyonight"}`}, in: Input{Window: 16000, Args: []string{"run", "hi"}},
			want: configured{Upstream: "openai", UpstreamURL: "http://127.0.0.1:8080", Routed: "provider local (OPENCODE_CONFIG_CONTENT)",
				Env: map[string]string{"OPENCODE_CONFIG_CONTENT": "(read)"}, Args: []string{"run", "hi"},
				Files: map[string]any{"OPENCODE_CONFIG_CONTENT": obj{"theme": "tokyonight",
					"provider": obj{"local": obj{"options": obj{"baseURL": testProxy + "/v1", "headers": obj{"X-Ctxc-Max-Context-Tokens": "16000"}}}}}}},
		},
		{
			name: "opencode: a built-in provider named by -m", command: "opencode", in: Input{Args: []string{"run", "-m", "anthropic/claude-sonnet-4-5", "hi"}},
			want: configured{Upstream: "anthropic", UpstreamURL: publicAnthropic, Routed: "provider anthropic (OPENCODE_CONFIG_CONTENT)",
				Env: map[string]string{"OPENCODE_CONFIG_CONTENT": "(read)"}, Args: []string{"run", "-m", "anthropic/claude-sonnet-4-5", "hi"},
				Files: map[string]any{"OPENCODE_CONFIG_CONTENT": obj{"provider": obj{"anthropic": obj{"options": obj{"baseURL": testProxy + "/v1"}}}}}},
		},
		{
			name: "opencode: no model", command: "opencode", wantErr: "no model to route",
		},
		{
			name: "pi: the default provider of settings.json, from models.json", command: "pi",
			files: map[string]string{
				".pi/agent/models.json":   `{"providers": {"ollama": {"baseUrl": "http://127.0.0.1:11434/v1", "api": "openai-completions", "apiKey": "ollama", "models": [{"id": "qwen2.5-coder:7b"}]}}}`,
				".pi/agent/settings.json": `{"defaultProvider": "ollama"}`,
			},
			in: Input{Window: 16000, Args: []string{"-p", "hi"}},
			want: configured{Upstream: "openai", UpstreamURL: "http://127.0.0.1:11434", Routed: "provider ollama (models.json)",
				Env: map[string]string{"PI_CODING_AGENT_DIR": "(read)"}, Args: []string{"-p", "hi"},
				Files: map[string]any{"PI_CODING_AGENT_DIR": obj{"providers": obj{"ollama": obj{"baseUrl": testProxy + "/v1", "api": "openai-completions", "apiKey": "ollama",
					"models": []any{obj{"id": "qwen2.5-coder:7b"}}, "headers": obj{"X-Ctxc-Max-Context-Tokens": "16000"}}}}}},
		},
		{
			name: "pi: a built-in provider by --model's prefix, --upstream", command: "pi", in: Input{Upstream: "http://127.0.0.1:9000", Args: []string{"--model", "google/gemini-2.5-flash"}},
			want: configured{Upstream: "gemini", UpstreamURL: "http://127.0.0.1:9000", Routed: "provider google (models.json)",
				Env: map[string]string{"PI_CODING_AGENT_DIR": "(read)"}, Args: []string{"--model", "google/gemini-2.5-flash"},
				Files: map[string]any{"PI_CODING_AGENT_DIR": obj{"providers": obj{"google": obj{"baseUrl": testProxy + "/v1beta"}}}}},
		},
		{
			name: "pi: a provider it cannot route", command: "pi", in: Input{Args: []string{"--provider", "amazon-bedrock"}}, wantErr: "amazon-bedrock",
		},
		{
			name: "a base URL outside the API's path", command: "qwen", env: map[string]string{"OPENAI_BASE_URL": "https://api.z.ai/api/paas/v4"},
			wantErr: `OPENAI_BASE_URL: "https://api.z.ai/api/paas/v4" does not end in /v1`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := configureIn(t, lookup(t, tt.command), tt.files, tt.env, tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want.Files == nil {
				tt.want.Files = map[string]any{}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestManualIsWhatConfigureApplies: the configuration Manual shows for a
// ctxc at a base URL is what Configure gives a CLI whose user has set
// nothing, the one as the user writes it, the other as wrap applies it.
func TestManualIsWhatConfigureApplies(t *testing.T) {
	args := map[string][]string{"pi": {"--provider", "openai"}, "opencode": {"run", "-m", "openai/gpt-4.1"}}
	for _, a := range Agents() {
		t.Run(a.Command, func(t *testing.T) {
			got, err := configureIn(t, a, nil, nil, Input{Window: 32000, Args: args[a.Command]})
			if err != nil {
				t.Fatal(err)
			}
			blocks := a.Manual(testProxy, 32000)
			var env, files []string
			for _, b := range blocks {
				switch b.Lang {
				case "console":
					env = append(env, b.Text)
				case "json":
					files = append(files, b.Text)
				case "toml":
					// Codex: each key of the provider's table is in the
					// -c table, with its value.
					table := strings.Join(got.Args, " ")
					for _, line := range strings.Split(strings.TrimSpace(b.Text), "\n") {
						if key, value, ok := strings.Cut(line, " = "); ok && !strings.HasPrefix(line, "model_provider ") {
							if !strings.Contains(table, key+" = "+value) {
								t.Errorf("%s = %s is not in the arguments %q", key, value, got.Args)
							}
						}
					}
					if !strings.Contains(b.Text, `model_provider = "ctxc"`) || !strings.Contains(table, `model_provider="ctxc"`) {
						t.Errorf("the provider is not selected alike: %q and %q", b.Text, got.Args)
					}
				default:
					t.Errorf("a block in %s", b.Lang)
				}
			}
			// The variables ctxc wrap sets are the manual's, but those
			// naming a file of wrap's own.
			var vars []kv
			for _, name := range sortedKeys(got.Env) {
				if got.Env[name] != "(read)" {
					vars = append(vars, kv{name, got.Env[name]})
				}
			}
			if diff := cmp.Diff(sortedEnvLines(strings.Join(env, "")), sortedEnvLines(envLines(vars))); diff != "" {
				t.Errorf("the environment (-manual +wrap):\n%s", diff)
			}
			if len(files) != len(got.Files) {
				t.Fatalf("the manual has %d files, wrap writes %d: %v", len(files), len(got.Files), got.Files)
			}
			for _, text := range files {
				var want any
				if err := json.Unmarshal([]byte(text), &want); err != nil {
					t.Fatal(err)
				}
				found := false
				for _, f := range got.Files {
					found = found || cmp.Equal(want, f)
				}
				if !found {
					t.Errorf("the manual's %s is not what wrap writes: %v", text, got.Files)
				}
			}
		})
	}
}

// sortedEnvLines sorts export lines, for comparing sets of them.
func sortedEnvLines(s string) string {
	lines := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l != "" {
			lines[l] = true
		}
	}
	return strings.Join(sortedKeys(lines), "\n")
}

func TestLookup(t *testing.T) {
	for _, tt := range []struct {
		program string
		want    string
	}{{"claude", "Claude Code"}, {"/opt/node/bin/codex", "Codex"}, {"./node_modules/.bin/gemini", "Gemini CLI"}, {"qwen", "Qwen Code"},
		{"opencode", "opencode"}, {"pi", "pi"}, {"aider", ""}, {"codex-wrapper", ""}} {
		a, ok := Lookup(tt.program)
		if got := ""; ok {
			got = a.Name
			if got != tt.want {
				t.Errorf("Lookup(%q) = %s, want %q", tt.program, got, tt.want)
			}
		} else if tt.want != "" {
			t.Errorf("Lookup(%q) found nothing, want %s", tt.program, tt.want)
		}
	}
	if diff := cmp.Diff([]string{"claude", "codex", "gemini", "qwen", "opencode", "pi"}, Commands()); diff != "" {
		t.Errorf("Commands (-want +got):\n%s", diff)
	}
}

func TestStripJSONC(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"a": 1, // one
"b": "x // not a comment", /* two */ "c": [1, 2,],}`, `{"a": 1, 
"b": "x // not a comment",  "c": [1, 2]}`},
		{`{"s": "a \"quoted\" /* text */"}`, `{"s": "a \"quoted\" /* text */"}`},
	} {
		if got := string(stripJSONC([]byte(tt.in))); got != tt.want {
			t.Errorf("stripJSONC(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
