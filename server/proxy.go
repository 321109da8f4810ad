package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/service"
	"github.com/contextcompiler/ctxc/internal/service/proxy"
)

// ProxyConfig is the proxy section of the configuration: the providers'
// upstreams (an endpoint is served only when its upstream is set) and how
// proxied calls are compiled and bounded.
type ProxyConfig struct {
	OpenAIUpstream    string `yaml:"openai_upstream"`
	AnthropicUpstream string `yaml:"anthropic_upstream"`
	GeminiUpstream    string `yaml:"gemini_upstream"`
	OllamaUpstream    string `yaml:"ollama_upstream"`
	// Profile is the profile of a call that names none; Profiles (YAML only)
	// overrides it per upstream: openai, anthropic, gemini, ollama.
	Profile            string            `yaml:"profile"`
	Profiles           map[string]string `yaml:"profiles"`
	MaxContextTokens   int               `yaml:"max_context_tokens"`
	OnCompileError     string            `yaml:"on_compile_error"`
	Timeout            time.Duration     `yaml:"timeout"`
	MaxConcurrentCalls int               `yaml:"max_concurrent_calls"`
}

// defaultProxyProfile compacts at compaction points, so a growing
// conversation keeps its cached prefix: what the proxy is for.
const defaultProxyProfile = "budget-aware"

func defaultProxyConfig() ProxyConfig {
	return ProxyConfig{Profile: defaultProxyProfile, OnCompileError: proxy.DefaultOnCompileError, Timeout: proxy.DefaultTimeout,
		MaxConcurrentCalls: proxy.DefaultMaxConcurrentCalls}
}

// upstreams are the configured upstreams by name.
func (p ProxyConfig) upstreams() map[proxy.Upstream]string {
	out := map[proxy.Upstream]string{}
	for u, raw := range map[proxy.Upstream]string{proxy.OpenAI: p.OpenAIUpstream, proxy.Anthropic: p.AnthropicUpstream,
		proxy.Gemini: p.GeminiUpstream, proxy.Ollama: p.OllamaUpstream} {
		if raw != "" {
			out[u] = raw
		}
	}
	return out
}

// validateProxy checks the proxy section; its profiles are checked against
// the catalog when the engine is built (checkProxyProfiles).
func (c *Config) validateProxy() []error {
	var problems []error
	bad := func(key, format string, args ...any) {
		problems = append(problems, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	p := c.Proxy
	ups := p.upstreams()
	for _, u := range proxy.Upstreams() {
		if raw, ok := ups[u]; ok {
			if err := proxy.CheckUpstream(raw); err != nil {
				bad("proxy."+string(u)+"_upstream", "%v", err)
			}
		}
	}
	if len(ups) > 0 && c.HTTPListen == "" {
		bad("proxy", "an upstream is set but http_listen is not: the proxy's endpoints are served on the HTTP port")
	}
	for name := range p.Profiles {
		if _, ok := map[proxy.Upstream]bool{proxy.OpenAI: true, proxy.Anthropic: true, proxy.Gemini: true, proxy.Ollama: true}[proxy.Upstream(name)]; !ok {
			bad("proxy.profiles", "%q is not an upstream: openai, anthropic, gemini or ollama", name)
		}
	}
	if p.MaxContextTokens < 0 || p.MaxContextTokens > 1<<31-1 {
		bad("proxy.max_context_tokens", "%d must be from 0 (the model's window) to 2147483647", p.MaxContextTokens)
	}
	if p.OnCompileError != proxy.OnErrorForward && p.OnCompileError != proxy.OnErrorRefuse {
		bad("proxy.on_compile_error", "%q must be %s or %s", p.OnCompileError, proxy.OnErrorForward, proxy.OnErrorRefuse)
	}
	if p.Timeout <= 0 {
		bad("proxy.timeout", "must be more than 0")
	}
	if p.MaxConcurrentCalls < 1 {
		bad("proxy.max_concurrent_calls", "%d must be at least 1", p.MaxConcurrentCalls)
	}
	return problems
}

// checkProxyProfiles reports proxy profiles the catalog lacks.
func (c *Config) checkProxyProfiles(known func(string) bool) error {
	var problems []error
	if c.Proxy.Profile != "" && !known(c.Proxy.Profile) {
		problems = append(problems, fmt.Errorf("proxy.profile: no profile %q", c.Proxy.Profile))
	}
	for u, name := range c.Proxy.Profiles {
		if !known(name) {
			problems = append(problems, fmt.Errorf("proxy.profiles.%s: no profile %q", u, name))
		}
	}
	return errors.Join(problems...)
}

// newProxy builds the proxy when an upstream is configured (nil otherwise),
// compiling through the gRPC server's direct calls; close releases it.
func newProxy(cfg Config, transport *service.Transport, observer proxy.Observer, log *slog.Logger) (p *proxy.Proxy, close func(), err error) {
	ups := cfg.Proxy.upstreams()
	if len(ups) == 0 {
		return nil, func() {}, nil
	}
	proxies, _ := trustedProxies(cfg.HTTPTrustedProxies) // validated with the config
	pc := proxy.Config{Upstreams: map[proxy.Upstream]*url.URL{}, Profile: cfg.Proxy.Profile, Profiles: map[proxy.Upstream]string{},
		MaxContextTokens: cfg.Proxy.MaxContextTokens, OnCompileError: cfg.Proxy.OnCompileError, Timeout: cfg.Proxy.Timeout,
		MaxConcurrentCalls: cfg.Proxy.MaxConcurrentCalls, MaxBodyBytes: proxyBodyLimit(cfg.MaxMessageBytes), TrustedProxies: proxies,
		Logger: log, Observer: observer}
	for u, raw := range ups {
		pc.Upstreams[u], _ = url.Parse(raw) // validated with the config
		if http := "http://"; len(raw) > len(http) && raw[:len(http)] == http && !localURL(pc.Upstreams[u]) {
			log.Warn("proxy upstream is plain HTTP on another host: callers' credentials are not sent to it", "upstream", string(u))
		}
	}
	for name, profile := range cfg.Proxy.Profiles {
		pc.Profiles[proxy.Upstream(name)] = profile
	}
	p, err = proxy.New(ctxcv1.NewContextCompilerServiceClient(transport.DirectConn()), pc)
	if err != nil {
		return nil, nil, err
	}
	return p, p.Close, nil
}

// proxyBodyLimit is the largest body the proxy takes: what fits one Compile
// request under max_message_bytes, with room for the rest of the request.
func proxyBodyLimit(maxMessageBytes int) int { return maxMessageBytes - 4<<10 }

// localURL reports whether a URL's host is this machine.
func localURL(u *url.URL) bool {
	return localAddress(u.Host) || localAddress(u.Hostname()+":0")
}
