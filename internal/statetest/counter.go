package statetest

import "github.com/contextcompiler/ctxc/policies/agentstate"

// MessageOverhead is what FakeCounter adds per message for its framing.
const MessageOverhead = 3

// FakeCounter is a deterministic agentstate.TokenCounter for tests: one token per
// 4 bytes of content, rounded up, plus MessageOverhead per message. A masked
// message counts as its placeholder. Images count 85 tokens each.
type FakeCounter struct{}

var _ agentstate.TokenCounter = FakeCounter{}

// CountText counts bare text: ceil(len(s)/4).
func (FakeCounter) CountText(s string) int { return (len(s) + 3) / 4 }

// CountMessage counts every byte a provider would see of m, plus the overhead.
func (c FakeCounter) CountMessage(m *agentstate.Message) (int, agentstate.Provenance) {
	if m.Mask != nil {
		return c.CountText(m.Mask.Placeholder) + MessageOverhead, agentstate.ProvenanceEstimated
	}
	bytes, images := 0, 0
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Kind {
		case agentstate.PartText:
			bytes += len(p.Text)
		case agentstate.PartToolCall:
			bytes += len(p.ToolCall.ID) + len(p.ToolCall.Name) + len(p.ToolCall.ArgumentsJSON)
		case agentstate.PartToolResult:
			bytes += len(p.ToolResult.ToolCallID) + len(p.ToolResult.Name) + len(p.ToolResult.Content)
		case agentstate.PartReasoning:
			bytes += len(p.Reasoning.Text) + len(p.Reasoning.Signature)
		case agentstate.PartImage:
			images++
		}
	}
	return (bytes+3)/4 + 85*images + MessageOverhead, agentstate.ProvenanceEstimated
}

// CountPreamble counts the system prompt, and the tools plus response format.
func (c FakeCounter) CountPreamble(ctx *agentstate.Context) (system int, tools int) {
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
