package statetest

import "github.com/contextcompiler/ctxc/policies"

// MessageOverhead is what FakeCounter adds per message for its framing.
const MessageOverhead = 3

// FakeCounter is a deterministic policies.TokenCounter for tests: one token per
// 4 bytes of content, rounded up, plus MessageOverhead per message. A masked
// message counts as its placeholder. Images count 85 tokens each.
type FakeCounter struct{}

var _ policies.TokenCounter = FakeCounter{}

// CountText counts bare text: ceil(len(s)/4).
func (FakeCounter) CountText(s string) int { return (len(s) + 3) / 4 }

// CountMessage counts every byte a provider would see of m, plus the overhead.
func (c FakeCounter) CountMessage(m *policies.Message) (int, policies.Provenance) {
	if m.Mask != nil {
		return c.CountText(m.Mask.Placeholder) + MessageOverhead, policies.ProvenanceEstimated
	}
	bytes, images := 0, 0
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Kind {
		case policies.PartText:
			bytes += len(p.Text)
		case policies.PartToolCall:
			bytes += len(p.ToolCall.ID) + len(p.ToolCall.Name) + len(p.ToolCall.ArgumentsJSON)
		case policies.PartToolResult:
			bytes += len(p.ToolResult.ToolCallID) + len(p.ToolResult.Name) + len(p.ToolResult.Content)
		case policies.PartReasoning:
			bytes += len(p.Reasoning.Text) + len(p.Reasoning.Signature)
		case policies.PartImage:
			images++
		}
	}
	return (bytes+3)/4 + 85*images + MessageOverhead, policies.ProvenanceEstimated
}

// CountPreamble counts the system prompt, and the tools plus response format.
func (c FakeCounter) CountPreamble(ctx *policies.Context) (system int, tools int) {
	if ctx.SystemPrompt != "" {
		system = c.CountText(ctx.SystemPrompt) + MessageOverhead
	}
	for _, t := range ctx.Tools {
		tools += c.CountText(t.Name + t.Description + t.ParametersJSON)
	}
	if ctx.ResponseFormat != "" {
		tools += c.CountText(ctx.ResponseFormat)
	}
	return system, tools
}

// Name names the estimator.
func (FakeCounter) Name() string { return "fake_4_bytes" }
