package providers

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Measure counts at least the messages Import makes of a body, for every
// format and every generated state: what is held before decoding covers
// what decoding makes.
func TestMeasureBoundsImport(t *testing.T) {
	for seed := int64(0); seed < 100; seed++ {
		st := statetest.Generate(rand.New(rand.NewSource(seed)), statetest.DefaultOptions())
		w := normalizedWork(st)
		for _, f := range formats {
			body, _, err := Render(f, input(w))
			if err != nil {
				t.Fatalf("seed %d %s: %v", seed, f, err)
			}
			im, err := Import(f, body)
			if err != nil {
				t.Fatalf("seed %d %s: %v", seed, f, err)
			}
			n, err := Measure(context.Background(), f, body, 0)
			if err != nil || n < len(im.Messages) {
				t.Errorf("seed %d %s: Measure = %d, %v; Import made %d messages", seed, f, n, err, len(im.Messages))
			}
		}
	}
}

func TestMeasure(t *testing.T) {
	many := func(n int, elem string) string {
		return strings.TrimSuffix(strings.Repeat(elem+",", n), ",")
	}
	// What follows is not JSON: a measure that read it would not say LIMIT.
	const garbage = `,{"role":"user","content":` + "\x00 not json"
	tests := []struct {
		name   string
		format agentstate.RenderFormat
		body   string
		limit  int
		want   int
		err    error
	}{
		{"openai", agentstate.RenderOpenAI, `{"model":"m","messages":[` + many(5, `{"role":"user","content":"hi"}`) + `]}`, 10, 5, nil},
		{"names as encoding/json matches them", agentstate.RenderOpenAI, `{"Messages":[{"role":"user","content":"hi"}]}`, 10, 1, nil},
		{"anthropic counts blocks", agentstate.RenderAnthropic,
			`{"messages":[{"role":"user","content":"hi"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"x"},{"type":"text","text":"y"}]}]}`, 10, 3, nil},
		{"gemini counts parts", agentstate.RenderGemini, `{"contents":[{"role":"user","parts":[{"text":"a"},{"text":"b"},{"text":"c"}]}]}`, 10, 3, nil},
		{"ollama", agentstate.RenderOllama, `{"messages":[` + many(3, `{"role":"user","content":"hi"}`) + `]}`, 10, 3, nil},
		{"responses input string", agentstate.RenderOpenAIResponses, `{"input":"hello"}`, 10, 1, nil},
		{"responses items", agentstate.RenderOpenAIResponses, `{"input":[` + many(4, `{"role":"user","content":"hi"}`) + `]}`, 10, 4, nil},
		{"not JSON: Import says why", agentstate.RenderOpenAI, `{"messages":[{"role":"user"},`, 10, 1, nil},
		{"over the limit, stopped there", agentstate.RenderOpenAI, `{"messages":[` + many(3, `{"role":"user","content":"hi"}`) + garbage, 2, 3,
			&agentstate.LimitError{Field: "input_json.messages", Limit: 2, Got: 3, AtLeast: true}},
		{"one message of many blocks over the limit", agentstate.RenderAnthropic,
			`{"messages":[{"role":"user","content":[` + many(3, `{"type":"text","text":"y"}`) + garbage, 2, 3,
			&agentstate.LimitError{Field: "input_json.messages", Limit: 2, Got: 3, AtLeast: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Measure(context.Background(), tt.format, []byte(tt.body), tt.limit)
			if diff := cmp.Diff(tt.err, err); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if got != tt.want {
				t.Errorf("Measure = %d, want %d", got, tt.want)
			}
		})
	}
	if got, want := (&agentstate.LimitError{Field: "input_json.messages", Limit: 2, Got: 3, AtLeast: true}).Error(),
		"input_json.messages: more than the limit of 2 (counting stopped at 3; the rest was not read)"; got != want {
		t.Errorf("error text %q, want %q", got, want)
	}
}

// endsAfter is a context that ends (context.Canceled) after its Err has
// answered nil checks times, and counts the looks: what a call that ends
// part way through an import looks like, without timing anything.
type endsAfter struct {
	context.Context
	checks int64
	looks  atomic.Int64
}

func (c *endsAfter) Err() error {
	if c.looks.Add(1) > c.checks {
		return context.Canceled
	}
	return nil
}

// A call that ends while its body is measured or imported stops there with
// the context's error, nothing imported, having looked no further than the
// first look that saw the end.
func TestImportStopsWhenTheCallEnds(t *testing.T) {
	const messages = 20 * checkEvery
	var b strings.Builder
	b.WriteString(`{"model":"m","messages":[`)
	for i := range messages {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"role":"user","content":"message %d"}`, i)
	}
	b.WriteString(`]}`)
	body := []byte(b.String())
	for _, f := range []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"measure", func(ctx context.Context) error { _, err := Measure(ctx, agentstate.RenderOpenAI, body, 0); return err }},
		{"import", func(ctx context.Context) error {
			im, err := ImportContext(ctx, agentstate.RenderOpenAI, body, messages)
			if err != nil && im != nil {
				t.Errorf("an import that saw its call end returned %d messages", len(im.Messages))
			}
			return err
		}},
	} {
		t.Run(f.name, func(t *testing.T) {
			// Without an end, the whole body is read: more looks than three.
			whole := &endsAfter{Context: context.Background(), checks: 1 << 62}
			if err := f.run(whole); err != nil {
				t.Fatal(err)
			}
			ctx := &endsAfter{Context: context.Background(), checks: 2}
			err := f.run(ctx)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("error %v, want context.Canceled", err)
			}
			if got, all := ctx.looks.Load(), whole.looks.Load(); got != 3 || all <= 3 {
				t.Errorf("looked at the context %d times (a whole read: %d), want 3: it went on after the call ended", got, all)
			}
		})
	}
}
