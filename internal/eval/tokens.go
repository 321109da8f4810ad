package eval

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"

	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// contentKey identifies what a provider is sent of a message (role, kind and
// parts, not the id): equal keys are equal items of a prompt.
type contentKey [sha256.Size]byte

var deterministic = proto.MarshalOptions{Deterministic: true}

func keyOf(m *ctxcv1.Message) contentKey {
	raw, err := deterministic.Marshal(&ctxcv1.Message{Role: m.GetRole(), Kind: m.GetKind(), Parts: m.GetParts()})
	if err != nil {
		panic(err) // a decoded message always marshals
	}
	return sha256.Sum256(raw)
}

// toolsKey identifies the tool definitions and response format of a state.
func toolsKey(c *ctxcv1.AgentContext) contentKey {
	raw, err := deterministic.Marshal(&ctxcv1.AgentContext{Tools: c.GetTools(), ResponseFormat: c.GetResponseFormat()})
	if err != nil {
		panic(err)
	}
	return sha256.Sum256(raw)
}

// tokenCounter counts compiled messages with the CountTokens RPC, each
// distinct (model, content) once.
type tokenCounter struct {
	svc   Service
	cache map[string]map[contentKey]int
	calls int
}

func newTokenCounter(svc Service) *tokenCounter {
	return &tokenCounter{svc: svc, cache: map[string]map[contentKey]int{}}
}

// count returns the tokens of each message for model, asking the service
// only for contents it has not counted yet (in one call).
func (c *tokenCounter) count(ctx context.Context, model string, msgs []*ctxcv1.Message, keys []contentKey) ([]int, error) {
	known := c.cache[model]
	if known == nil {
		known = map[contentKey]int{}
		c.cache[model] = known
	}
	var ask []*ctxcv1.Message
	var askKeys []contentKey
	pending := map[contentKey]bool{}
	for i, m := range msgs {
		if _, ok := known[keys[i]]; ok || pending[keys[i]] {
			continue
		}
		pending[keys[i]] = true
		// Only what is sent counts; the id is there because requests need one.
		ask = append(ask, &ctxcv1.Message{Id: "m" + strconv.Itoa(len(ask)), Role: m.GetRole(), Kind: m.GetKind(), Parts: m.GetParts()})
		askKeys = append(askKeys, keys[i])
	}
	if len(ask) > 0 {
		c.calls++
		resp, err := c.svc.CountTokens(ctx, &ctxcv1.CountTokensRequest{Counter: &ctxcv1.CountTokensRequest_Model{Model: model}, Messages: ask})
		if err != nil {
			return nil, fmt.Errorf("CountTokens: %w", err)
		}
		if len(resp.GetMessages()) != len(ask) {
			return nil, fmt.Errorf("CountTokens: %d counts for %d messages", len(resp.GetMessages()), len(ask))
		}
		for i, tc := range resp.GetMessages() {
			known[askKeys[i]] = int(tc.GetTokenCount())
		}
	}
	out := make([]int, len(msgs))
	for i := range msgs {
		out[i] = known[keys[i]]
	}
	return out, nil
}
