package providers

import (
	"bytes"
	"context"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// checkEvery is how many conversation elements Measure and Import read
// between two looks at the call's context.
const checkEvery = 1 << 10

// Measure counts, before anything is decoded, the messages Import would
// make of body at most: each element of the conversation (messages,
// contents, input), or, for Anthropic and Gemini, whose messages split at
// their tool results, each block of it. It reads the body as a stream of
// tokens, materializing nothing, and stops at the first message past
// maxMessages (0: no limit) with an *agentstate.LimitError on
// input_json.messages (AtLeast: the rest is unread), or with ctx's error
// once ctx ends. A body it cannot read gives what it counted so far and no
// error: Import says what is wrong with it.
func Measure(ctx context.Context, format agentstate.RenderFormat, body []byte, maxMessages int) (messages int, err error) {
	key, _ := conversationKey(format)
	if key == "" {
		return 0, nil // Import names the format
	}
	blocks := ""
	switch format {
	case agentstate.RenderAnthropic:
		blocks = "content"
	case agentstate.RenderGemini:
		blocks = "parts"
	}
	m := measurer{ctx: ctx, limit: maxMessages,
		// What encoding/json, which Import uses, takes: duplicate names, invalid UTF-8.
		dec: jsontext.NewDecoder(bytes.NewBuffer(body), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))}
	err = m.body(key, blocks)
	if _, ok := err.(stop); ok {
		err = nil
	}
	return m.n, err
}

// stop ends a measure at a body it cannot read.
type stop struct{ error }

type measurer struct {
	ctx   context.Context
	dec   *jsontext.Decoder
	limit int
	n     int // messages counted
	seen  int // elements read, for the context checks
}

// count adds n messages, refusing past the limit.
func (m *measurer) count(n int) error {
	m.n += n
	if m.limit > 0 && m.n > m.limit {
		return &agentstate.LimitError{Field: "input_json.messages", Limit: m.limit, Got: m.n, AtLeast: true}
	}
	m.seen++
	if m.seen%checkEvery == 0 {
		return m.ctx.Err()
	}
	return nil
}

// token reads the next token; a body that is not JSON stops the measure.
func (m *measurer) token() (jsontext.Token, error) {
	t, err := m.dec.ReadToken()
	if err != nil {
		return t, stop{err}
	}
	return t, nil
}

func (m *measurer) skip() error {
	if err := m.dec.SkipValue(); err != nil {
		return stop{err}
	}
	return nil
}

// body reads the top-level object, measuring each member named key (names
// match as encoding/json matches them: ignoring case).
func (m *measurer) body(key, blocks string) error {
	if err := m.ctx.Err(); err != nil {
		return err
	}
	t, err := m.token()
	if err != nil || t.Kind() != '{' {
		return err
	}
	for m.dec.PeekKind() != '}' {
		name, err := m.token()
		if err != nil {
			return err
		}
		if !strings.EqualFold(name.String(), key) {
			if err := m.skip(); err != nil {
				return err
			}
			continue
		}
		if err := m.conversation(blocks); err != nil {
			return err
		}
	}
	return nil
}

// conversation measures the conversation value: an array of messages (an
// OpenAI Responses input may be a string: one message).
func (m *measurer) conversation(blocks string) error {
	if m.dec.PeekKind() != '[' {
		if m.dec.PeekKind() == '"' {
			if err := m.count(1); err != nil {
				return err
			}
		}
		return m.skip()
	}
	if _, err := m.token(); err != nil {
		return err
	}
	for m.dec.PeekKind() != ']' {
		if m.dec.PeekKind() == 0 {
			return stop{m.dec.SkipValue()}
		}
		n, err := m.message(blocks)
		if err != nil {
			return err
		}
		if err := m.count(max(n, 1)); err != nil {
			return err
		}
	}
	_, err := m.token()
	return err
}

// message reads one element, counting the blocks of its member named blocks
// ("" for a provider whose messages do not split: the element is skipped).
func (m *measurer) message(blocks string) (int, error) {
	if blocks == "" || m.dec.PeekKind() != '{' {
		return 0, m.skip()
	}
	if _, err := m.token(); err != nil {
		return 0, err
	}
	n := 0
	for m.dec.PeekKind() != '}' {
		name, err := m.token()
		if err != nil {
			return 0, err
		}
		if !strings.EqualFold(name.String(), blocks) || m.dec.PeekKind() != '[' {
			if err := m.skip(); err != nil {
				return 0, err
			}
			continue
		}
		if _, err := m.token(); err != nil {
			return 0, err
		}
		for m.dec.PeekKind() != ']' {
			if m.dec.PeekKind() == 0 {
				return 0, stop{m.dec.SkipValue()}
			}
			if err := m.skip(); err != nil {
				return 0, err
			}
			n++
			// A message of many blocks counts them as it goes, against the limit.
			if m.limit > 0 && m.n+n > m.limit {
				return n, nil
			}
		}
		if _, err := m.token(); err != nil {
			return 0, err
		}
	}
	_, err := m.token()
	return n, err
}
