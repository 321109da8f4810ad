package providers

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// lossOf applies to a view what the provider cannot carry, as the package doc's
// table lists it, so that Import(Render(view)) must equal lossOf(view) exactly.
//
//	provider   loss applied here
//	all        ids, kinds, pins, metadata cleared; tool messages split one per result;
//	           pending calls dropped; arguments canonicalized
//	openai     reasoning dropped; URL image media type cleared; data image type sniffed if empty
//	anthropic  system role -> user; blank text and unsigned reasoning dropped; same-role
//	           turns merged then re-split into tool / user runs; reasoning first in a turn;
//	           URL image media type cleared; LeadingUserText before a leading assistant
//	gemini     call ids renumbered by order on both sides; merging, roles, blank text and
//	           LeadingUserText as anthropic; reasoning without text dropped, order kept;
//	           URL image media type guessed
//	ollama     reasoning joined into one unsigned part first, text parts joined by "\n";
//	           URL images dropped; inline image types sniffed
//	openai_responses  reasoning dropped; an assistant message's text before its calls;
//	           images outside user messages dropped; a URL image's media type cleared
var lossOf = map[agentstate.RenderFormat]func([]agentstate.Message) []agentstate.Message{
	agentstate.RenderOpenAI: func(in []agentstate.Message) []agentstate.Message {
		return eachMessage(in, func(m agentstate.Message) []agentstate.Message {
			return []agentstate.Message{keepParts(m, func(p *agentstate.Part) bool {
				fixImage(p, false, false)
				return p.Kind != agentstate.PartReasoning && (p.Kind != agentstate.PartImage || m.Role == agentstate.RoleUser)
			})}
		})
	},
	agentstate.RenderAnthropic: func(in []agentstate.Message) []agentstate.Message {
		return turnsLoss(in, func(m agentstate.Message, p *agentstate.Part) bool {
			fixImage(p, false, false)
			return p.Kind != agentstate.PartReasoning || len(p.Reasoning.Signature) > 0
		}, true)
	},
	agentstate.RenderGemini: func(in []agentstate.Message) []agentstate.Message {
		return turnsLoss(in, func(m agentstate.Message, p *agentstate.Part) bool {
			if p.Kind == agentstate.PartImage && p.Image.Source == agentstate.ImageSourceURL {
				p.Image.MediaType = urlMediaType(p.Image)
			}
			fixImage(p, false, true)
			return p.Kind != agentstate.PartReasoning || p.Reasoning.Text != ""
		}, false)
	},
	agentstate.RenderOpenAIResponses: func(in []agentstate.Message) []agentstate.Message {
		return eachMessage(in, func(m agentstate.Message) []agentstate.Message {
			m = keepParts(m, func(p *agentstate.Part) bool {
				fixImage(p, false, false)
				return p.Kind != agentstate.PartReasoning && (p.Kind != agentstate.PartImage || m.Role == agentstate.RoleUser)
			})
			if m.Role == agentstate.RoleAssistant {
				var texts, calls []agentstate.Part
				for _, p := range m.Parts {
					if p.Kind == agentstate.PartToolCall {
						calls = append(calls, p)
					} else {
						texts = append(texts, p)
					}
				}
				m.Parts = append(texts, calls...)
			}
			return []agentstate.Message{m}
		})
	},
	agentstate.RenderOllama: func(in []agentstate.Message) []agentstate.Message {
		return eachMessage(in, func(m agentstate.Message) []agentstate.Message {
			if m.Role == agentstate.RoleTool {
				return []agentstate.Message{m}
			}
			var thinking, texts []string
			var images, calls []agentstate.Part
			for _, p := range m.Parts {
				switch p.Kind {
				case agentstate.PartReasoning:
					if p.Reasoning.Text != "" {
						thinking = append(thinking, p.Reasoning.Text)
					}
				case agentstate.PartText:
					texts = append(texts, p.Text)
				case agentstate.PartImage:
					if fixImage(&p, true, false) && m.Role == agentstate.RoleUser {
						images = append(images, p)
					}
				case agentstate.PartToolCall:
					calls = append(calls, p)
				}
			}
			var parts []agentstate.Part
			if len(thinking) > 0 {
				parts = append(parts, reasoning(strings.Join(thinking, "\n"), nil))
			}
			if content := strings.Join(texts, "\n"); content != "" || len(thinking)+len(images)+len(calls) == 0 {
				parts = append(parts, text(content))
			}
			m.Parts = append(append(parts, images...), calls...)
			return []agentstate.Message{m}
		})
	},
}

// fixImage applies the image losses: URL images lose their media type (unless
// keepURLType), inline ones get a sniffed type when empty (or
// always, with resniff). It reports whether the image is inline.
func fixImage(p *agentstate.Part, resniff, keepURLType bool) bool {
	if p.Kind != agentstate.PartImage {
		return false
	}
	if p.Image.Source == agentstate.ImageSourceData {
		if resniff || p.Image.MediaType == "" {
			p.Image.MediaType = http.DetectContentType(p.Image.Data)
		}
		return true
	}
	if !keepURLType {
		p.Image.MediaType = ""
	}
	return false
}

func eachMessage(in []agentstate.Message, f func(agentstate.Message) []agentstate.Message) []agentstate.Message {
	var out []agentstate.Message
	for _, m := range in {
		for _, got := range f(m) {
			if len(got.Parts) > 0 {
				out = append(out, got)
			}
		}
	}
	return out
}

func keepParts(m agentstate.Message, keep func(p *agentstate.Part) bool) agentstate.Message {
	parts := make([]agentstate.Part, 0, len(m.Parts))
	for _, p := range m.Parts {
		if keep(&p) {
			parts = append(parts, p)
		}
	}
	m.Parts = parts
	return m
}

// turnsLoss is the Anthropic/Gemini loss: merge same-side messages into
// alternating turns, then split user turns back into runs as Import does.
func turnsLoss(in []agentstate.Message, keep func(agentstate.Message, *agentstate.Part) bool, thinkingFirst bool) []agentstate.Message {
	type turn struct {
		assistant bool
		parts     []agentstate.Part
	}
	var turns []turn
	for _, m := range in {
		assistant := m.Role == agentstate.RoleAssistant
		var parts []agentstate.Part
		for _, p := range m.Parts {
			if p.Kind == agentstate.PartText && blank(p.Text) || (p.Kind == agentstate.PartImage && assistant) {
				continue
			}
			if keep(m, &p) {
				parts = append(parts, p)
			}
		}
		if len(parts) == 0 {
			continue
		}
		if n := len(turns); n > 0 && turns[n-1].assistant == assistant {
			turns[n-1].parts = append(turns[n-1].parts, parts...)
		} else {
			turns = append(turns, turn{assistant, parts})
		}
	}
	if len(turns) > 0 && turns[0].assistant {
		turns = append([]turn{{false, []agentstate.Part{text(LeadingUserText)}}}, turns...)
	}
	var out []agentstate.Message
	for _, t := range turns {
		if t.assistant {
			parts := t.parts
			if thinkingFirst {
				var first, rest []agentstate.Part
				for _, p := range parts {
					if p.Kind == agentstate.PartReasoning {
						first = append(first, p)
					} else {
						rest = append(rest, p)
					}
				}
				parts = append(first, rest...)
			}
			out = append(out, agentstate.Message{Role: agentstate.RoleAssistant, Parts: parts})
			continue
		}
		var run []agentstate.Part
		flush := func() {
			if len(run) > 0 {
				out = append(out, agentstate.Message{Role: agentstate.RoleUser, Parts: run})
				run = nil
			}
		}
		for _, p := range t.parts {
			if p.Kind == agentstate.PartToolResult {
				flush()
				out = append(out, agentstate.Message{Role: agentstate.RoleTool, Parts: []agentstate.Part{p}})
			} else {
				run = append(run, p)
			}
		}
		flush()
	}
	return out
}

// comparable reduces a conversation to what Import can give back for every
// provider: no ids or annotations, one result per tool message, canonical
// arguments, and (for Gemini) call ids renumbered by order.
func comparable(in []agentstate.Message, format agentstate.RenderFormat) []agentstate.Message {
	answered := make(map[string]bool)
	for _, m := range in {
		for _, p := range m.Parts {
			if p.Kind == agentstate.PartToolResult {
				answered[p.ToolResult.ToolCallID] = true
			}
		}
	}
	var out []agentstate.Message
	for _, m := range in {
		base := agentstate.Message{Role: m.Role}
		var parts []agentstate.Part
		for _, p := range m.Parts {
			switch {
			case p.Kind == agentstate.PartToolCall && !answered[p.ToolCall.ID]:
				continue
			case p.Kind == agentstate.PartToolCall:
				p.ToolCall.ArgumentsJSON = canonicalArgs(p.ToolCall.ArgumentsJSON, format)
			case p.Kind == agentstate.PartToolResult:
				out = append(out, agentstate.Message{Role: agentstate.RoleTool, Parts: []agentstate.Part{p}})
				continue
			}
			if m.Role != agentstate.RoleTool {
				parts = append(parts, p)
			}
		}
		if len(parts) > 0 {
			base.Parts = parts
			out = append(out, base)
		}
	}
	return out
}

func canonicalArgs(args string, format agentstate.RenderFormat) string {
	if format == agentstate.RenderOpenAI {
		if blank(args) {
			return "{}"
		}
		return args
	}
	return argumentsFromObject(argumentsObject(args))
}

// renumberCalls names calls "call-<k>" in order of appearance, results after
// the call they answer: pairing survives, the provider's ids do not matter.
func renumberCalls(in []agentstate.Message) []agentstate.Message {
	ids := make(map[string]string)
	out := make([]agentstate.Message, len(in))
	for i, m := range in {
		parts := make([]agentstate.Part, len(m.Parts))
		for j, p := range m.Parts {
			switch p.Kind {
			case agentstate.PartToolCall:
				ids[p.ToolCall.ID] = fmt.Sprintf("call-%d", len(ids))
				p.ToolCall.ID = ids[p.ToolCall.ID]
			case agentstate.PartToolResult:
				if id, ok := ids[p.ToolResult.ToolCallID]; ok {
					p.ToolResult.ToolCallID = id
				} else {
					p.ToolResult.ToolCallID = "unpaired:" + p.ToolResult.ToolCallID
				}
			}
			parts[j] = p
		}
		out[i] = agentstate.Message{Role: m.Role, Parts: parts}
	}
	return out
}

func entriesOf(w *policies.Work) []agentstate.Message {
	out := make([]agentstate.Message, len(w.Entries))
	for i := range w.Entries {
		out[i] = w.Entries[i].Message
	}
	return out
}

func stripIDs(in []agentstate.Message) []agentstate.Message {
	out := make([]agentstate.Message, len(in))
	for i, m := range in {
		out[i] = agentstate.Message{Role: m.Role, Parts: m.Parts}
	}
	return out
}

func checkRoundTrip(t *testing.T, format agentstate.RenderFormat, w *policies.Work) {
	t.Helper()
	body, _, err := Render(format, input(w))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Import(format, body)
	if err != nil {
		t.Fatalf("Import(Render): %v", err)
	}
	for i, m := range got.Messages {
		if want := fmt.Sprintf("in-%d", i+1); m.ID != want {
			t.Fatalf("message %d has id %q, want %q", i, m.ID, want)
		}
	}
	want := lossOf[format](comparable(entriesOf(w), format))
	gotMsgs := stripIDs(got.Messages)
	if format == agentstate.RenderGemini {
		want, gotMsgs = renumberCalls(want), renumberCalls(gotMsgs)
	}
	if diff := cmp.Diff(want, gotMsgs); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if got.SystemPrompt != w.State().Context.SystemPrompt {
		t.Errorf("system prompt %q, want %q", got.SystemPrompt, w.State().Context.SystemPrompt)
	}
	wantTools := append([]agentstate.ToolDefinition(nil), w.State().Context.Tools...)
	for i := range wantTools {
		if p, ok := jsonObject(wantTools[i].ParametersJSON); ok {
			wantTools[i].ParametersJSON = string(p)
		} else if format == agentstate.RenderAnthropic || format == agentstate.RenderOpenAIResponses {
			wantTools[i].ParametersJSON = string(emptyInputSchema)
		}
	}
	if diff := cmp.Diff(wantTools, got.Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if wantModel := map[bool]string{true: "", false: w.Model().Name}[format == agentstate.RenderGemini]; got.Model != wantModel {
		t.Errorf("model %q, want %q", got.Model, wantModel)
	}
}

func TestRoundTripExamples(t *testing.T) {
	for name, state := range goldenStates {
		for _, f := range formats {
			t.Run(f.String()+"_"+name, func(t *testing.T) {
				checkRoundTrip(t, f, normalizedWork(state(t)))
			})
		}
	}
}

// TestGeneratedStates renders normalized generated states: every body passes
// its provider's validator (Render returns none that does not), is JSON, and
// imports back to the same conversation up to the documented losses.
func TestGeneratedStates(t *testing.T) {
	// -short renders the first 40 states in a second; make test all 300.
	states := int64(300)
	if testing.Short() {
		states = 40
	}
	for seed := int64(0); seed < states; seed++ {
		st := statetest.Generate(rand.New(rand.NewSource(seed)), statetest.DefaultOptions())
		w := normalizedWork(st)
		for _, f := range formats {
			body, _, err := Render(f, input(w))
			if err != nil {
				t.Fatalf("seed %d %s: %v", seed, f, err)
			}
			if !json.Valid(body) {
				t.Fatalf("seed %d %s: not JSON", seed, f)
			}
			t.Run(fmt.Sprintf("%s_seed%d", f, seed), func(t *testing.T) { checkRoundTrip(t, f, w) })
		}
	}
}
