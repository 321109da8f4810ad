package tokens

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"strconv"

	"github.com/zeebo/xxh3"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// counter is a agentstate.TokenCounter for one resolved model. Content counts
// (raw tiktoken counts of a message's text, before calibration and framing)
// are cached by (encoding, content hash), so counters of different models
// that share an encoding share cached counts.
type counter struct {
	enc    *encoder // nil for the chars estimator
	cache  *countCache
	seed   maphash.Seed
	xseed  uint64 // xxh3's seed, from seed
	exact  bool
	factor float64 // calibration; 1 when exact
	image  int     // tokens per image
	name   string
	// done, when closed, cuts counting short (Bound): counts made then
	// are approximate and neither cached nor remembered.
	done <-chan struct{}
}

var _ agentstate.BoundCounter = (*counter)(nil)

// Bound is the counter cutting its counts short once done is closed, so
// that a call that has ended stops tokenizing (a long text without a space
// takes seconds); nil done gives c itself.
func (c *counter) Bound(done <-chan struct{}) agentstate.TokenCounter {
	if done == nil || c.enc == nil {
		return c
	}
	bound := *c
	bound.done = done
	return &bound
}

func newCounter(s *Service, estimator, encoding string, factor float64, provider string) *counter {
	c := &counter{cache: s.cache, seed: s.seed, xseed: s.xseed, image: imageTokens(provider), factor: 1}
	switch estimator {
	case EstimatorExact:
		c.enc, c.exact, c.name = s.encoders[encoding], true, encoding
	case EstimatorCalibrated:
		if factor == 0 {
			factor = providerFactor(provider)
		}
		c.enc, c.factor = s.encoders[encoding], factor
		c.name = encoding + "*" + strconv.FormatFloat(factor, 'f', 2, 64)
	default:
		c.name = "chars/4"
	}
	return c
}

// Name names the encoding or estimator: "o200k_base", "cl100k_base*1.20", "chars/4".
func (c *counter) Name() string { return c.name }

func (c *counter) provenance() agentstate.Provenance {
	if c.exact {
		return agentstate.ProvenanceExact
	}
	return agentstate.ProvenanceEstimated
}

// scale applies the calibration factor, rounding up.
func (c *counter) scale(n int) int {
	if c.exact || c.enc == nil || c.factor == 1 {
		return n
	}
	return int(math.Ceil(float64(n) * c.factor))
}

// CountText counts bare text.
func (c *counter) CountText(s string) int { return c.scale(c.rawText(s)) }

// rawText is the uncalibrated count of s, cached for the tokenizing counters.
func (c *counter) rawText(s string) int {
	if c.enc == nil {
		return (len(s) + 3) / 4
	}
	if s == "" {
		return 0
	}
	if c.cache == nil {
		n, _ := c.enc.countUntil(s, c.done)
		return n
	}
	k := c.textKey(s)
	if n, ok := c.cache.get(k); ok {
		return n
	}
	n, complete := c.enc.countUntil(s, c.done)
	if complete {
		c.cache.add(k, n)
	}
	return n
}

// textKey hashes the encoding's id and a bare text.
func (c *counter) textKey(s string) cacheKey {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteByte(c.enc.id)
	h.WriteByte(0xff) // domain: bare text, never a message part's kind
	c.writeString(&h, s)
	return cacheKey(h.Sum64())
}

// CountMessage counts a message as the provider frames it: the per-message
// overhead, text, reasoning text, tool calls (name and arguments) and tool
// results (content) with their framing, and a fixed cost per image. A masked
// message counts as its placeholder text. Reasoning signatures and tool call
// ids are opaque to the model's tokenizer and not counted. Counts with
// images are estimates even for exact counters.
func (c *counter) CountMessage(m *agentstate.Message) (int, agentstate.Provenance) {
	if m.Mask != nil {
		return messageOverhead + c.CountText(m.Mask.Placeholder), c.provenance()
	}
	return c.framed(m, c.rawContent(m))
}

// CountCached counts, on the calling goroutine, each entry not yet counted
// whose content the cache holds, and leaves the others to CountMessage. A
// warm log is nearly all hits: looking them up on one goroutine costs half
// the CPU of splitting them among workers (the shards' lock words stay in
// one core's cache), and only what must be tokenized is worth splitting.
// CountMessage hashes a miss again; tokenizing it costs far more.
// A message whose memo (agentstate.CountMemo) holds its count is counted
// from it, without hashing its content.
func (c *counter) CountCached(entries []agentstate.Entry) {
	if c.enc == nil {
		return
	}
	for i := range entries {
		e := &entries[i]
		if e.Counted || e.Message.Mask != nil {
			continue
		}
		m := &e.Message
		raw, ok := m.Counts.Raw(m.Parts, c.enc.id)
		if !ok && c.cache != nil {
			if raw, ok = c.cache.get(c.contentKey(m)); ok {
				m.Counts.Remember(m.Parts, c.enc.id, raw)
			}
		}
		if ok {
			e.Tokens, e.Provenance = c.framed(m, raw)
			e.Counted = true
		}
	}
}

// framed adds to raw, the uncalibrated count of m's content, the calibration
// and the provider's framing of m's parts and images.
func (c *counter) framed(m *agentstate.Message, raw int) (int, agentstate.Provenance) {
	framing, images := messageOverhead, 0
	for i := range m.Parts {
		switch m.Parts[i].Kind {
		case agentstate.PartToolCall:
			framing += toolCallOverhead
		case agentstate.PartToolResult:
			framing += toolResultOverhead
		case agentstate.PartImage:
			images++
		}
	}
	n := framing + images*c.image + c.scale(raw)
	if images > 0 {
		return n, agentstate.ProvenanceEstimated
	}
	return n, c.provenance()
}

// rawContent is the uncalibrated count of a message's countable content.
func (c *counter) rawContent(m *agentstate.Message) int {
	if c.enc == nil {
		return (contentBytes(m) + 3) / 4
	}
	if n, ok := m.Counts.Raw(m.Parts, c.enc.id); ok {
		return n
	}
	n, complete := c.cachedContent(m)
	if complete {
		m.Counts.Remember(m.Parts, c.enc.id, n)
	}
	return n
}

// cachedContent is rawContent through the count cache; complete is false
// for a count cut short (Bound), which is not cached.
func (c *counter) cachedContent(m *agentstate.Message) (n int, complete bool) {
	if c.cache == nil {
		return c.tokenizeContent(m)
	}
	k := c.contentKey(m)
	if n, ok := c.cache.get(k); ok {
		return n, true
	}
	n, complete = c.tokenizeContent(m)
	if complete {
		c.cache.add(k, n)
	}
	return n, complete
}

func (c *counter) tokenizeContent(m *agentstate.Message) (int, bool) {
	n := 0
	count := func(s string) {
		k, _ := c.enc.countUntil(s, c.done)
		n += k
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Kind {
		case agentstate.PartText:
			count(p.Text)
		case agentstate.PartToolCall:
			count(p.ToolCall.Name)
			count(p.ToolCall.ArgumentsJSON)
		case agentstate.PartToolResult:
			// Through the text cache: observation masking counts tool outputs
			// as bare text before the estimate stage counts their messages, and
			// a large output must not be tokenized twice.
			n += c.rawText(p.ToolResult.Content)
		case agentstate.PartReasoning:
			count(p.Reasoning.Text)
		}
	}
	// Whatever was cut short, the whole count is: done only closes.
	return n, c.done == nil || !stopped(c.done)
}

func contentBytes(m *agentstate.Message) int {
	n := 0
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Kind {
		case agentstate.PartText:
			n += len(p.Text)
		case agentstate.PartToolCall:
			n += len(p.ToolCall.Name) + len(p.ToolCall.ArgumentsJSON)
		case agentstate.PartToolResult:
			n += len(p.ToolResult.Content)
		case agentstate.PartReasoning:
			n += len(p.Reasoning.Text)
		}
	}
	return n
}

// contentKey hashes the encoding's id and exactly what tokenizeContent reads,
// each string length-prefixed and tagged with its part kind so that no two
// different contents hash the same input. maphash on the stack allocates nothing.
func (c *counter) contentKey(m *agentstate.Message) cacheKey {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteByte(c.enc.id)
	for i := range m.Parts {
		p := &m.Parts[i]
		h.WriteByte(byte(p.Kind))
		switch p.Kind {
		case agentstate.PartText:
			c.writeString(&h, p.Text)
		case agentstate.PartToolCall:
			c.writeString(&h, p.ToolCall.Name)
			c.writeString(&h, p.ToolCall.ArgumentsJSON)
		case agentstate.PartToolResult:
			c.writeString(&h, p.ToolResult.Content)
		case agentstate.PartReasoning:
			c.writeString(&h, p.Reasoning.Text)
		}
	}
	return cacheKey(h.Sum64())
}

// writeString adds s as its length and its xxh3 hash: the content of every
// message without a count memo is hashed on every compile, and xxh3 hashes a log about twice as fast as maphash
// (BenchmarkContentKey). Its seed is derived from the
// service's random maphash seed, so a client cannot aim a collision at
// another client's content.
func (c *counter) writeString(h *maphash.Hash, s string) {
	var n [16]byte
	binary.LittleEndian.PutUint64(n[:8], uint64(len(s)))
	binary.LittleEndian.PutUint64(n[8:], xxh3.HashStringSeed(s, c.xseed))
	h.Write(n[:])
}

// CountPreamble counts the system prompt (as a system message, plus the
// once-per-request reply priming) and the tool definitions plus response
// format, each with its framing.
func (c *counter) CountPreamble(ctx *agentstate.Context) (system int, tools int) {
	system = replyPriming
	if ctx.SystemPrompt != "" {
		system += messageOverhead + c.CountText(ctx.SystemPrompt)
	}
	if len(ctx.Tools) > 0 {
		tools = toolsBlockOverhead
		for i := range ctx.Tools {
			t := &ctx.Tools[i]
			tools += toolDefinitionOverhead + c.CountText(t.Name) + c.CountText(t.Description) + c.CountText(t.ParametersJSON)
		}
	}
	if ctx.ResponseFormat != "" {
		tools += responseFormatOverhead + c.CountText(ctx.ResponseFormat)
	}
	return system, tools
}
