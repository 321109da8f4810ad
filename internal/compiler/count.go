package compiler

import (
	"context"
	"errors"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// CountRequest is one CountTokens: texts and messages counted with the
// counter of Model, or of Encoding when Model is empty.
type CountRequest struct {
	Model    string
	Encoding string
	Texts    []string
	Messages []agentstate.Message
}

// TokenCount is one count and how it was obtained.
type TokenCount struct {
	Tokens     int
	Provenance agentstate.Provenance
}

// CountResult is what CountTokens produced.
type CountResult struct {
	// Counter names the counter used (its encoding, or the heuristic).
	Counter string
	// Texts and Messages count each text and message, in request order.
	Texts, Messages []TokenCount
	// Total is the sum; Provenance the least exact of all counts.
	Total      int
	Provenance agentstate.Provenance
}

// CountTokens counts each text and message with the model's or encoding's
// counter. It stops at the call's deadline between one text or message and
// the next, and inside one (a text of megabytes without a space takes
// seconds); the server's admission limits bound how many run at once.
func (s *Service) CountTokens(ctx context.Context, req CountRequest) (*CountResult, error) {
	counter, err := s.counter(&req)
	if err != nil {
		return nil, err
	}
	if b, ok := counter.(agentstate.BoundCounter); ok {
		counter = b.Bound(ctx.Done())
	}
	textProvenance := counterProvenance(counter)
	res := &CountResult{Counter: counter.Name()}
	for _, t := range req.Texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := counter.CountText(t)
		res.Total += n
		res.Provenance = max(res.Provenance, textProvenance)
		res.Texts = append(res.Texts, TokenCount{Tokens: n, Provenance: textProvenance})
	}
	for i := range req.Messages {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, p := counter.CountMessage(&req.Messages[i])
		res.Total += n
		res.Provenance = max(res.Provenance, p)
		res.Messages = append(res.Messages, TokenCount{Tokens: n, Provenance: p})
	}
	// A count cut short when the call ended is approximate: never answered.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// counter finds the request's counter.
func (s *Service) counter(req *CountRequest) (agentstate.TokenCounter, error) {
	if req.Model == "" {
		return s.counters.CounterForEncoding(req.Encoding)
	}
	_, counter, err := s.counters.Resolve(agentstate.ModelSpec{Name: req.Model})
	var unknown *agentstate.UnknownModelError
	if errors.As(err, &unknown) {
		// The resolver names the state's field; here the model is a request field.
		err = &agentstate.UnknownModelError{Field: "model", Model: unknown.Model}
	}
	return counter, err
}

// counterProvenance is how a counter's bare-text counts are obtained; the
// TokenCounter interface reports it only with message counts.
func counterProvenance(c agentstate.TokenCounter) agentstate.Provenance {
	_, p := c.CountMessage(&agentstate.Message{Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart("")}})
	return p
}
