package compiler

import (
	"context"
	"errors"
	"testing"

	"github.com/contextcompiler/ctxc/internal/compiler/compilertest"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// endingCounter is a counter bound to the call (agentstate.BoundCounter)
// whose count of a text ends the call half way, as a deadline passing in
// the middle of a long text does, and answers the approximate count a
// counter cut short answers.
type endingCounter struct {
	agentstate.TokenCounter
	end   context.CancelFunc
	bound <-chan struct{}
}

func (c *endingCounter) Bound(done <-chan struct{}) agentstate.TokenCounter {
	c.bound = done
	return c
}

func (c *endingCounter) CountText(s string) int {
	c.end()
	return len(s) // cut short: a token a byte
}

type endingCounters struct {
	compilertest.Counters
	c *endingCounter
}

func (e endingCounters) CounterForEncoding(string) (agentstate.TokenCounter, error) { return e.c, nil }

// CountTokens binds its counter to the call, and a count cut short by the
// call's end is not answered: the call's error is.
func TestCountTokensStopsWhenTheCallEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	counter := &endingCounter{TokenCounter: compilertest.Counter{}, end: cancel}
	s, err := New(Config{Catalog: compilertest.NewCatalog(), Counters: endingCounters{c: counter}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.CountTokens(ctx, CountRequest{Encoding: "o200k_base", Texts: []string{"a long text"}})
	if !errors.Is(err, context.Canceled) || got != nil {
		t.Errorf("CountTokens = %+v, %v; want nothing and context.Canceled", got, err)
	}
	if counter.bound != ctx.Done() {
		t.Error("the counter was not bound to the call's context")
	}
}
