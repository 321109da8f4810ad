package tokens

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// libraryCount counts with tiktoken-go itself, an implementation independent
// of ours (quadratic on long pieces: use on short texts only).
func libraryCount(t testing.TB, encoding, s string) int {
	t.Helper()
	return len(libraryEncoding(t, encoding).EncodeOrdinary(s))
}

var libraryEncodings sync.Map // encoding name -> *tiktoken.Tiktoken

func libraryEncoding(t testing.TB, encoding string) *tiktoken.Tiktoken {
	t.Helper()
	if tk, ok := libraryEncodings.Load(encoding); ok {
		return tk.(*tiktoken.Tiktoken)
	}
	service(t) // installs the offline loader
	tk, err := tiktoken.GetEncoding(encoding)
	if err != nil {
		t.Fatal(err)
	}
	libraryEncodings.Store(encoding, tk)
	return tk
}

func resolve(t *testing.T, name string) agentstate.TokenCounter {
	t.Helper()
	_, c, err := service(t).Resolve(agentstate.ModelSpec{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCountMessage(t *testing.T) {
	const text, args, result, thought, placeholder = "What is the weather in Paris today?", `{"city":"Paris","unit":"C"}`, "18°C, light rain, wind 12 km/h", "The user wants weather; call the tool.", "[masked: 2 KB of logs]"
	lib := func(s string) int { return libraryCount(t, EncodingO200K, s) }
	tests := []struct {
		name     string
		msg      agentstate.Message
		want     int
		wantProv agentstate.Provenance
	}{
		{"text", agentstate.Message{Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart(text)}},
			messageOverhead + lib(text), agentstate.ProvenanceExact},
		{"tool call with reasoning", agentstate.Message{Role: agentstate.RoleAssistant, Parts: []agentstate.Part{
			{Kind: agentstate.PartReasoning, Reasoning: agentstate.Reasoning{Text: thought, Signature: []byte("sig")}},
			{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: "call_1", Name: "get_weather", ArgumentsJSON: args}},
		}}, messageOverhead + lib(thought) + toolCallOverhead + lib("get_weather") + lib(args), agentstate.ProvenanceExact},
		{"tool result", agentstate.Message{Role: agentstate.RoleTool, Parts: []agentstate.Part{
			{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: "call_1", Name: "get_weather", Content: result}},
		}}, messageOverhead + toolResultOverhead + lib(result), agentstate.ProvenanceExact},
		{"image", agentstate.Message{Role: agentstate.RoleUser, Parts: []agentstate.Part{
			agentstate.TextPart(text), {Kind: agentstate.PartImage, Image: agentstate.Image{Source: agentstate.ImageSourceURL, URL: "https://x/y.png"}},
		}}, messageOverhead + lib(text) + 765, agentstate.ProvenanceEstimated},
		{"masked counts its placeholder", agentstate.Message{Role: agentstate.RoleTool, Parts: []agentstate.Part{
			{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{Content: strings.Repeat("log line\n", 200)}},
		}, Mask: &agentstate.Mask{Placeholder: placeholder}}, messageOverhead + lib(placeholder), agentstate.ProvenanceExact},
	}
	c := resolve(t, "gpt-4o")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 2 { // second pass is served by the cache
				got, prov := c.CountMessage(&tt.msg)
				if got != tt.want || prov != tt.wantProv {
					t.Errorf("CountMessage = %d, %v; want %d, %v", got, prov, tt.want, tt.wantProv)
				}
			}
		})
	}
}

func TestCalibratedAndCharsCounters(t *testing.T) {
	text := "The quick brown fox jumps over the lazy dog, again and again."
	msg := agentstate.Message{Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart(text)}}
	raw := libraryCount(t, EncodingCL100K, text)

	claude := resolve(t, "claude-sonnet-4-20250514")
	if got, want := claude.Name(), "cl100k_base*1.20"; got != want {
		t.Errorf("Name = %q, want %q", got, want)
	}
	n, prov := claude.CountMessage(&msg)
	if want := messageOverhead + int(math.Ceil(float64(raw)*1.2)); n != want || prov != agentstate.ProvenanceEstimated {
		t.Errorf("claude CountMessage = %d, %v; want %d, estimated", n, prov, want)
	}

	s, err := NewService(ServiceConfig{Models: []ModelEntry{{Name: "tiny", Provider: "local", Estimator: EstimatorChars, ContextWindow: 1000}}})
	if err != nil {
		t.Fatal(err)
	}
	_, chars, err := s.Resolve(agentstate.ModelSpec{Name: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := chars.CountText(text), (len(text)+3)/4; got != want || chars.Name() != "chars/4" {
		t.Errorf("chars CountText = %d (%s), want %d", got, chars.Name(), want)
	}
}

func TestCountPreamble(t *testing.T) {
	c := resolve(t, "gpt-4o")
	lib := func(s string) int { return libraryCount(t, EncodingO200K, s) }
	ctx := agentstate.Context{
		SystemPrompt:   "You are a careful assistant.",
		Tools:          []agentstate.ToolDefinition{{Name: "search", Description: "Search the web.", ParametersJSON: `{"type":"object","properties":{"q":{"type":"string"}}}`}},
		ResponseFormat: `{"type":"object"}`,
	}
	sys, tools := c.CountPreamble(&ctx)
	wantSys := replyPriming + messageOverhead + lib(ctx.SystemPrompt)
	wantTools := toolsBlockOverhead + toolDefinitionOverhead + lib("search") + lib("Search the web.") + lib(ctx.Tools[0].ParametersJSON) + responseFormatOverhead + lib(ctx.ResponseFormat)
	if sys != wantSys || tools != wantTools {
		t.Errorf("CountPreamble = %d, %d; want %d, %d", sys, tools, wantSys, wantTools)
	}
	if sys, tools := c.CountPreamble(&agentstate.Context{}); sys != replyPriming || tools != 0 {
		t.Errorf("empty preamble = %d, %d; want %d, 0", sys, tools, replyPriming)
	}
}

// TestHeapMergeMatchesScan checks the O(n log n) merge against tiktoken-go's
// own quadratic merge on pieces of random bytes and repetitive runs.
func TestHeapMergeMatchesScan(t *testing.T) {
	s := service(t)
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", " ", "e", "th", "中", "\n", "0", "é", "😀"}
	for _, name := range KnownEncodings() {
		enc := s.encoders[name]
		for i := range 200 {
			var b strings.Builder
			n := smallPiece + 1 + rng.IntN(300)
			for b.Len() < n {
				if i%2 == 0 {
					b.WriteByte(byte(rng.IntN(256)))
				} else {
					b.WriteString(alphabet[rng.IntN(len(alphabet))])
				}
			}
			piece := b.String()
			if got, want := mergeHeapCount(enc, piece), libraryPieceCount(t, name, piece); got != want {
				t.Fatalf("%s piece %q: heap merge = %d, library = %d", name, piece, got, want)
			}
		}
	}
}

// libraryPieceCount counts one piece with tiktoken-go's merge, through an
// encoder whose pattern makes the whole piece one match. The library works on
// runes, so invalid UTF-8 goes to scanMerge, a port of its merge loop.
func libraryPieceCount(t testing.TB, encoding, piece string) int {
	t.Helper()
	ranks := loaderRanks(t, encoding)
	if !utf8.ValidString(piece) {
		return scanMerge(ranks, piece)
	}
	tk, ok := wholePieceEncodings.Load(encoding)
	if !ok {
		bpe, err := tiktoken.NewCoreBPE(ranks, map[string]int{"<|never|>": 1 << 30}, `(?s).+`)
		if err != nil {
			t.Fatal(err)
		}
		tk, _ = wholePieceEncodings.LoadOrStore(encoding, tiktoken.NewTiktoken(bpe, &tiktoken.Encoding{}, map[string]any{}))
	}
	return len(tk.(*tiktoken.Tiktoken).EncodeOrdinary(piece))
}

var wholePieceEncodings sync.Map // encoding name -> *tiktoken.Tiktoken

var rawRanks sync.Map // encoding name -> map[string]int

// loaderRanks is an encoding's rank map as the loader gives it, for
// tiktoken-go: the service keeps ranks in its own table.
func loaderRanks(t testing.TB, encoding string) map[string]int {
	t.Helper()
	if r, ok := rawRanks.Load(encoding); ok {
		return r.(map[string]int)
	}
	for _, s := range encodingSpecs {
		if s.name == encoding {
			ranks, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(s.bpeFile)
			if err != nil {
				t.Fatal(err)
			}
			r, _ := rawRanks.LoadOrStore(encoding, ranks)
			return r.(map[string]int)
		}
	}
	t.Fatalf("unknown encoding %q", encoding)
	return nil
}

// scanMerge is tiktoken's byte_pair_merge loop, written plainly.
func scanMerge(ranks map[string]int, p string) int {
	starts := make([]int, len(p)+1)
	for i := range starts {
		starts[i] = i
	}
	rank := func(i int) int {
		if i+2 < len(starts) {
			if r, ok := ranks[p[starts[i]:starts[i+2]]]; ok {
				return r
			}
		}
		return math.MaxInt
	}
	for {
		best, at := math.MaxInt, -1
		for i := 0; i+2 < len(starts); i++ {
			if r := rank(i); r < best {
				best, at = r, i
			}
		}
		if at < 0 {
			return len(starts) - 1
		}
		starts = append(starts[:at+1], starts[at+2:]...)
	}
}

func TestResolveRegistry(t *testing.T) {
	window := uint32(32000)
	out := uint32(1000)
	s, err := NewService(ServiceConfig{Models: []ModelEntry{
		{Name: "gpt-4o", Prefix: true, ContextWindow: 64000, InputPricePerMTok: 9}, // override fields
		{Name: "acme-", Prefix: true, Provider: "acme", Encoding: EncodingO200K, Estimator: EstimatorCalibrated, Factor: 1.5, ContextWindow: 10000, MaxOutputTokens: 500},
	}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		spec        agentstate.ModelSpec
		want        agentstate.ModelInfo
		wantCounter string
		wantErr     bool
	}{
		{"exact name", agentstate.ModelSpec{Name: "gpt-4"},
			agentstate.ModelInfo{Name: "gpt-4", Provider: "openai", ContextWindow: 8192, MaxOutputTokens: 8192, InputPricePerMTok: 30, OutputPricePerMTok: 60}, "cl100k_base", false},
		{"longest prefix", agentstate.ModelSpec{Name: "gpt-4o-mini-2024-07-18"},
			agentstate.ModelInfo{Name: "gpt-4o-mini-2024-07-18", Provider: "openai", ContextWindow: 128000, MaxOutputTokens: 16384, InputPricePerMTok: 0.15, OutputPricePerMTok: 0.6}, "o200k_base", false},
		{"gpt-4 dated uses gpt-4- prefix", agentstate.ModelSpec{Name: "gpt-4-0613"},
			agentstate.ModelInfo{Name: "gpt-4-0613", Provider: "openai", ContextWindow: 8192, MaxOutputTokens: 8192, InputPricePerMTok: 30, OutputPricePerMTok: 60}, "cl100k_base", false},
		{"config override of a built-in", agentstate.ModelSpec{Name: "gpt-4o-2024-08-06"},
			agentstate.ModelInfo{Name: "gpt-4o-2024-08-06", Provider: "openai", ContextWindow: 64000, MaxOutputTokens: 16384, InputPricePerMTok: 9, OutputPricePerMTok: 10}, "o200k_base", false},
		{"config addition", agentstate.ModelSpec{Name: "acme-large"},
			agentstate.ModelInfo{Name: "acme-large", Provider: "acme", ContextWindow: 10000, MaxOutputTokens: 500}, "o200k_base*1.50", false},
		{"ollama tag and request overrides", agentstate.ModelSpec{Name: "llama3.1:8b", ContextWindowTokens: &window, MaxOutputTokens: &out},
			agentstate.ModelInfo{Name: "llama3.1:8b", Provider: "ollama", ContextWindow: 32000, MaxOutputTokens: 1000}, "cl100k_base*1.00", false},
		{"provider-qualified name", agentstate.ModelSpec{Name: "anthropic/claude-3-5-haiku-latest"},
			agentstate.ModelInfo{Name: "anthropic/claude-3-5-haiku-latest", Provider: "anthropic", ContextWindow: 200000, MaxOutputTokens: 8192, InputPricePerMTok: 0.8, OutputPricePerMTok: 4}, "cl100k_base*1.20", false},
		{"unknown with window", agentstate.ModelSpec{Name: "my-finetune", ContextWindowTokens: &window},
			agentstate.ModelInfo{Name: "my-finetune", Provider: "unknown", ContextWindow: 32000, MaxOutputTokens: 4096}, "cl100k_base*1.10", false},
		{"unknown with window and provider", agentstate.ModelSpec{Name: "my-finetune", Provider: "Anthropic", ContextWindowTokens: &window},
			agentstate.ModelInfo{Name: "my-finetune", Provider: "anthropic", ContextWindow: 32000, MaxOutputTokens: 4096,
				Assumption: `model "my-finetune" is not in the model registry: counted with provider anthropic's defaults (cl100k_base*1.20, an estimate)`},
			"cl100k_base*1.20 (anthropic default)", false},
		{"unknown without window", agentstate.ModelSpec{Name: "my-finetune"}, agentstate.ModelInfo{}, "", true},
		{"unknown without window, of an unknown provider", agentstate.ModelSpec{Name: "my-finetune", Provider: "acme-cloud"}, agentstate.ModelInfo{}, "", true},
		// Seed 004, "works with no configuration": the provider's defaults.
		{"unknown with a known provider", agentstate.ModelSpec{Name: "my-finetune", Provider: "openai"},
			byDefaults("my-finetune", "openai", "o200k_base*1.00", 128000, 16384),
			"o200k_base*1.00 (openai default)", false},
		{"unknown claude- name", agentstate.ModelSpec{Name: "claude-opus-7"},
			byDefaults("claude-opus-7", "anthropic", "cl100k_base*1.20", 200000, 8192),
			"cl100k_base*1.20 (anthropic default)", false},
		{"unknown gpt- name", agentstate.ModelSpec{Name: "GPT-7-turbo"},
			byDefaults("GPT-7-turbo", "openai", "o200k_base*1.00", 128000, 16384),
			"o200k_base*1.00 (openai default)", false},
		{"unknown o-series name", agentstate.ModelSpec{Name: "o4-pro"},
			byDefaults("o4-pro", "openai", "o200k_base*1.00", 128000, 16384),
			"o200k_base*1.00 (openai default)", false},
		{"unknown gemini- name behind models/", agentstate.ModelSpec{Name: "models/gemini-3.0-ultra"},
			byDefaults("models/gemini-3.0-ultra", "google", "o200k_base*1.10", 1048576, 8192),
			"o200k_base*1.10 (google default)", false},
		{"unknown ollama tag", agentstate.ModelSpec{Name: "qwen4:14b"},
			byDefaults("qwen4:14b", "ollama", "cl100k_base*1.10", 8192, 2048),
			"cl100k_base*1.10 (ollama default)", false},
		{"a provider qualifier names the provider", agentstate.ModelSpec{Name: "ollama/my-finetune"},
			byDefaults("ollama/my-finetune", "ollama", "cl100k_base*1.10", 8192, 2048),
			"cl100k_base*1.10 (ollama default)", false},
		{"the request's provider wins over the name", agentstate.ModelSpec{Name: "llama-next", Provider: "google"},
			byDefaults("llama-next", "google", "o200k_base*1.10", 1048576, 8192),
			"o200k_base*1.10 (google default)", false},
		// Provider lock (issue 15): the counter is the model's own provider's.
		{"a registered model is counted as its own provider's", agentstate.ModelSpec{Name: "claude-sonnet-4-5", Provider: "openai"},
			agentstate.ModelInfo{Name: "claude-sonnet-4-5", Provider: "openai", ContextWindow: 200000, MaxOutputTokens: 64000, InputPricePerMTok: 3, OutputPricePerMTok: 15}, "cl100k_base*1.20", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, c, err := s.Resolve(tt.spec)
			if tt.wantErr {
				want := &agentstate.UnknownModelError{Field: "state.model.name", Model: tt.spec.Name}
				if diff := cmp.Diff(error(want), err, cmp.Comparer(func(a, b error) bool { return a.Error() == b.Error() })); diff != "" {
					t.Errorf("err (-want +got):\n%s", diff)
				}
				if _, ok := err.(*agentstate.UnknownModelError); !ok {
					t.Errorf("err is %T", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, info); diff != "" {
				t.Errorf("info (-want +got):\n%s", diff)
			}
			if c.Name() != tt.wantCounter {
				t.Errorf("counter = %q, want %q", c.Name(), tt.wantCounter)
			}
		})
	}
}

// byDefaults is the ModelInfo of an unregistered model counted with its
// provider's defaults, with no window in the request.
func byDefaults(model, provider, counter string, window, maxOut int) agentstate.ModelInfo {
	return agentstate.ModelInfo{Name: model, Provider: provider, ContextWindow: window, MaxOutputTokens: maxOut, Assumption: fmt.Sprintf("model %q is not in the model registry: counted with provider %s's defaults (%s, an estimate), in the provider's default window of %d tokens with %d reserved for output; "+
		"add the model to the config file's model_registry, or give state.model.context_window_token_count, for its own figures", model, provider, counter, window, maxOut)}
}

func TestProviderOf(t *testing.T) {
	s := service(t)
	got := map[string]string{}
	for _, name := range []string{"gpt-4o", "claude-sonnet-4-5", "gemini-2.5-pro", "mistral-large-latest", "llama3.1:8b", "GPT-9", "o3-ultra",
		"claude-next", "anthropic/whatever", "qwen9:4b", "devstral-medium", "my-finetune", ""} {
		got[name] = s.ProviderOf(name)
	}
	want := map[string]string{"gpt-4o": "openai", "claude-sonnet-4-5": "anthropic", "gemini-2.5-pro": "google", "mistral-large-latest": "mistral",
		"llama3.1:8b": "ollama", "GPT-9": "openai", "o3-ultra": "openai", "claude-next": "anthropic", "anthropic/whatever": "anthropic",
		"qwen9:4b": "ollama", "devstral-medium": "mistral", "my-finetune": "", "": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ProviderOf (-want +got):\n%s", diff)
	}
}

func TestRegistryCoverage(t *testing.T) {
	for _, name := range []string{
		"gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "o1", "o3", "o3-mini", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-3.5-turbo", "gpt-4",
		"claude-opus-4-1-20250805", "claude-sonnet-4-5", "claude-3-5-sonnet-20241022", "claude-3-7-sonnet-latest", "claude-haiku-4-5",
		"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.0-flash", "gemini-1.5-pro-002", "gemini-1.5-flash",
		"mistral-large-latest", "mistral-small-2503", "codestral-latest", "ministral-8b-latest",
		"llama3.1", "llama3.2:3b", "llama3.3:70b", "qwen2.5:14b", "qwen3:8b", "gemma2:9b", "gemma3:27b", "mistral:7b", "phi3", "phi4", "deepseek-r1:32b",
	} {
		if _, _, err := service(t).Resolve(agentstate.ModelSpec{Name: name}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestServiceConfigValidate(t *testing.T) {
	cfg := ServiceConfig{CacheEntries: -1, Models: []ModelEntry{
		{Name: ""},
		{Name: "new-model", Estimator: "magic", Encoding: "r99k", ContextWindow: 0},
	}}
	err := cfg.Validate()
	if err == nil {
		t.Fatal("Validate() = nil")
	}
	for _, want := range []string{"cache_entries", "models[0]: name is empty", `estimator "magic" unknown`, `context_window must be positive`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v; missing %q", err, want)
		}
	}
}

func TestCounterForEncoding(t *testing.T) {
	s := service(t)
	c, err := s.CounterForEncoding(EncodingP50K)
	if err != nil || c.Name() != EncodingP50K {
		t.Fatalf("CounterForEncoding(p50k_base) = %v, %v", c, err)
	}
	_, err = s.CounterForEncoding("r99k")
	ia, ok := err.(*agentstate.InvalidArgumentError)
	if !ok || ia.Reason != agentstate.ReasonUnknownEncoding || len(ia.Violations) != 1 || ia.Violations[0].Field != "encoding" ||
		!strings.Contains(ia.Violations[0].Description, "cl100k_base, o200k_base, p50k_base") {
		t.Errorf("CounterForEncoding(r99k) err = %#v", err)
	}
}

func TestCacheBounded(t *testing.T) {
	c := newCountCache(1000)
	for i := range 100_000 {
		c.put(cacheKey(uint64(i)*0x9e3779b97f4a7c15), i)
	}
	if n := c.len(); n > 1000 {
		t.Errorf("cache holds %d entries, bound 1000", n)
	}
	last := uint64(99_999)
	k := cacheKey(last * 0x9e3779b97f4a7c15)
	if v, ok := c.get(k); !ok || v != 99_999 {
		t.Errorf("newest entry = %d, %v", v, ok)
	}
}

// TestCacheKeyedByEncoding: the same content counted under two encodings
// gets two keys, so one encoding's count is never served for another's.
func TestCacheKeyedByEncoding(t *testing.T) {
	svc, err := NewService(DefaultServiceConfig())
	if err != nil {
		t.Fatal(err)
	}
	o200k, err := svc.CounterForEncoding("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	cl100k, err := svc.CounterForEncoding("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	m := &agentstate.Message{Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart("héllo wörld, ünïcode tokenizes differently")}}
	a, b := o200k.(*counter), cl100k.(*counter)
	if a.contentKey(m) == b.contentKey(m) {
		t.Error("o200k_base and cl100k_base share a message key")
	}
	const s = "the same bare text"
	if a.textKey(s) == b.textKey(s) {
		t.Error("o200k_base and cl100k_base share a text key")
	}
	if a.textKey(s) == a.contentKey(&agentstate.Message{Parts: []agentstate.Part{agentstate.TextPart(s)}}) {
		t.Error("bare text and a message of that text share a key")
	}
}

// FuzzCount feeds arbitrary strings to the counter: it must not panic, and on
// short valid UTF-8 it must agree with tiktoken-go itself.
func FuzzCount(f *testing.F) {
	for _, s := range []string{"", "hello world", "  \n\t ", "中文 😀 é", "'s'T'RE", strings.Repeat("a", 300), "\xff\xfe\x00abc", "<|endoftext|>"} {
		f.Add(s)
	}
	s := service(f)
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 4096 {
			text = text[:4096]
		}
		for _, name := range KnownEncodings() {
			got := s.encoders[name].count(text)
			if got < 0 || got > len(text) {
				t.Fatalf("%s: count %d out of [0, %d]", name, got, len(text))
			}
			// The library's merge is quadratic: compare on short texts only.
			if len(text) <= 512 && utf8.ValidString(text) {
				if want := libraryCount(t, name, text); got != want {
					t.Fatalf("%s %q: count = %d, tiktoken-go = %d", name, text, got, want)
				}
			}
		}
	})
}

// TestRankTableHoldsEveryRank: the table answers every token of every
// encoding with the loader's rank, and no near miss (a token with a byte
// added or cut) with a rank the loader does not have.
func TestRankTableHoldsEveryRank(t *testing.T) {
	for _, spec := range encodingSpecs {
		want := loaderRanks(t, spec.name)
		table := service(t).encoders[spec.name].ranks
		for tok, r := range want {
			got, ok := table.get(tok)
			if !ok || int(got) != r {
				t.Fatalf("%s: token %q: got %d, %v; want %d", spec.name, tok, got, ok, r)
			}
			for _, near := range []string{tok + "\x00", tok[:len(tok)-1]} {
				r, inLoader := want[near]
				got, ok := table.get(near)
				if ok != inLoader || (ok && int(got) != r) {
					t.Fatalf("%s: near miss %q: got %d, %v; loader has %d, %v", spec.name, near, got, ok, r, inLoader)
				}
			}
		}
	}
}

func TestCacheShardIsOneCacheLine(t *testing.T) {
	if n := unsafe.Sizeof(cacheShard{}); n != 64 {
		t.Errorf("cacheShard is %d bytes, want 64: shards would share cache lines", n)
	}
}

// TestCacheStats: a count tokenized is one miss, a count served from the
// cache one hit; looking a message up cached-first and then counting it
// (CountEntries) is still one miss; a service without a cache reports zero.
func TestCacheStats(t *testing.T) {
	svc, err := NewService(DefaultServiceConfig())
	if err != nil {
		t.Fatal(err)
	}
	c, err := svc.CounterForEncoding("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	entries := func() []agentstate.Entry {
		return agentstate.EntriesFromLog([]agentstate.Message{
			{ID: "a", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart("first message of the stats test")}},
			{ID: "b", Role: agentstate.RoleAssistant, Parts: []agentstate.Part{agentstate.TextPart("second message of the stats test")}},
		})
	}
	steps := []struct {
		name string
		do   func()
		want CacheStats
	}{
		{"text, cold", func() { c.CountText("a bare text") }, CacheStats{Misses: 1, Entries: 1}},
		{"text, warm", func() { c.CountText("a bare text") }, CacheStats{Hits: 1, Misses: 1, Entries: 1}},
		{"view, cold", func() { CountEntries(c, entries(), 2) }, CacheStats{Hits: 1, Misses: 3, Entries: 3}},
		{"view, warm", func() { CountEntries(c, entries(), 2) }, CacheStats{Hits: 3, Misses: 3, Entries: 3}},
	}
	for _, s := range steps {
		s.do()
		got := svc.CacheStats()
		s.want.Capacity = got.Capacity
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("after %s (-want +got):\n%s", s.name, diff)
		}
	}
	if got := svc.CacheStats().Capacity; got <= 0 || got > DefaultCacheEntries {
		t.Errorf("capacity %d, want within the configured %d", got, DefaultCacheEntries)
	}
	off, err := NewService(ServiceConfig{})
	if err != nil {
		t.Fatal(err)
	}
	oc, _ := off.CounterForEncoding("o200k_base")
	oc.CountText("no cache")
	if got := off.CacheStats(); got != (CacheStats{}) {
		t.Errorf("without a cache: %+v, want zero", got)
	}
}

// TestEncodingsBuiltOnFirstUse: a new service has built no tokenizer; a
// count builds its encoding's only, and Preload builds the others.
func TestEncodingsBuiltOnFirstUse(t *testing.T) {
	s, err := NewService(ServiceConfig{})
	if err != nil {
		t.Fatal(err)
	}
	built := func() []string {
		var names []string
		for name, e := range s.encoders {
			if e.ranks != nil {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		return names
	}
	if got := built(); len(got) != 0 {
		t.Errorf("built at start: %v, want none", got)
	}
	c, err := s.CounterForEncoding(EncodingCL100K)
	if err != nil {
		t.Fatal(err)
	}
	if n := c.CountText("hello world"); n != 2 {
		t.Errorf("hello world: %d tokens, want 2", n)
	}
	if got := built(); !slices.Equal(got, []string{EncodingCL100K}) {
		t.Errorf("built after a count: %v, want %s only", got, EncodingCL100K)
	}
	if err := s.Preload(); err != nil {
		t.Fatal(err)
	}
	if got := built(); len(got) != len(s.encoders) {
		t.Errorf("built after Preload: %v, want all %d", got, len(s.encoders))
	}
}

// mergeHeapCount is mergeHeap run to its end.
func mergeHeapCount(e *encoder, piece string) int {
	n, _ := e.mergeHeap(piece, nil)
	return n
}
