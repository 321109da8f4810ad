package proxy

import (
	"net/http"
	"strings"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// Upstream names a provider the proxy forwards to: the key of its upstream
// in the configuration and the upstream label of the metrics.
type Upstream string

// The upstreams, in the order the configuration lists them.
const (
	OpenAI    Upstream = "openai"
	Anthropic Upstream = "anthropic"
	Gemini    Upstream = "gemini"
	Ollama    Upstream = "ollama"
)

// Upstreams lists every upstream.
func Upstreams() []Upstream { return []Upstream{OpenAI, Anthropic, Gemini, Ollama} }

// provider is the upstream's provider as the model registry names it.
func (u Upstream) provider() string {
	if u == Gemini {
		return "google"
	}
	return string(u)
}

// Endpoint is one provider API the proxy serves.
type Endpoint struct {
	// Path is the request path; {model} stands for Gemini's model name.
	Path string
	// Name is the endpoint label of the metrics.
	Name     string
	Upstream Upstream
	format   ctxcv1.InputFormat
}

// modelPlaceholder is where Gemini's paths name the model.
const modelPlaceholder = "{model}"

// endpoints is the one table of the endpoints: routing, the metrics' label
// values and the list in docs/proxy.md come from it.
var endpoints = []Endpoint{
	{"/v1/chat/completions", "chat_completions", OpenAI, ctxcv1.InputFormat_INPUT_FORMAT_OPENAI},
	{"/v1/responses", "responses", OpenAI, ctxcv1.InputFormat_INPUT_FORMAT_OPENAI_RESPONSES},
	{"/v1/messages", "messages", Anthropic, ctxcv1.InputFormat_INPUT_FORMAT_ANTHROPIC},
	{"/v1/messages/count_tokens", "count_tokens", Anthropic, ctxcv1.InputFormat_INPUT_FORMAT_ANTHROPIC},
	{"/v1beta/models/{model}:generateContent", "generate_content", Gemini, ctxcv1.InputFormat_INPUT_FORMAT_GEMINI},
	{"/v1beta/models/{model}:streamGenerateContent", "stream_generate_content", Gemini, ctxcv1.InputFormat_INPUT_FORMAT_GEMINI},
	{"/v1/models/{model}:generateContent", "generate_content", Gemini, ctxcv1.InputFormat_INPUT_FORMAT_GEMINI},
	{"/v1/models/{model}:streamGenerateContent", "stream_generate_content", Gemini, ctxcv1.InputFormat_INPUT_FORMAT_GEMINI},
	{"/api/chat", "chat", Ollama, ctxcv1.InputFormat_INPUT_FORMAT_OLLAMA},
}

// Endpoints lists every endpoint.
func Endpoints() []Endpoint { return append([]Endpoint(nil), endpoints...) }

// route finds the endpoint of a request path and, for Gemini, the model the
// path names.
func route(path string) (ep Endpoint, model string, ok bool) {
	for _, ep := range endpoints {
		before, after, templated := strings.Cut(ep.Path, modelPlaceholder)
		if !templated {
			if path == ep.Path {
				return ep, "", true
			}
			continue
		}
		rest, found := strings.CutPrefix(path, before)
		if !found {
			continue
		}
		model, found := strings.CutSuffix(rest, after)
		if found && model != "" && !strings.ContainsAny(model, "/:") {
			return ep, model, true
		}
	}
	return Endpoint{}, "", false
}

// Serves reports whether the proxy answers r: its path is an endpoint whose
// upstream is configured.
func (p *Proxy) Serves(r *http.Request) bool {
	ep, _, ok := route(r.URL.Path)
	return ok && p.upstreams[ep.Upstream] != nil
}
