package adapter

import (
	"bytes"
	"maps"
	"slices"

	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// compiledToProto converts compiled messages for a response. A compiled
// message that is, field for field, a message of the request's log (the
// usual case: most of a context is the log as it was) is answered with the
// request's own proto message instead of a converted copy; gRPC encodes the
// same bytes, and a long log costs no allocation per message and part.
// Equality is checked, never assumed from an id or a report, so a policy that
// changed a message in any way gets a converted one.
func compiledToProto(in []agentstate.Message, log []*ctxcv1.Message) []*ctxcv1.Message {
	if len(in) == 0 {
		return nil
	}
	out := make([]*ctxcv1.Message, len(in))
	find := logFinder{log: log}
	for i := range in {
		m := &in[i]
		if pm := find.byID(m.ID); pm != nil && sameAsProto(m, pm) {
			out[i] = pm
		} else {
			out[i] = messageToProto(m)
		}
	}
	return out
}

// logFinder finds a log message by id. Compiled messages keep log order, so
// asked in order the answer is nearly always the message after the last one
// found; a map is built only when the order breaks.
type logFinder struct {
	log  []*ctxcv1.Message
	next int
	byIx map[string]int
}

func (f *logFinder) byID(id string) *ctxcv1.Message {
	if f.next < len(f.log) && f.log[f.next].GetId() == id {
		f.next++
		return f.log[f.next-1]
	}
	if f.byIx == nil {
		f.byIx = make(map[string]int, len(f.log))
		for i, m := range f.log {
			if _, dup := f.byIx[m.GetId()]; !dup {
				f.byIx[m.GetId()] = i
			}
		}
	}
	i, ok := f.byIx[id]
	if !ok {
		return nil
	}
	f.next = i + 1
	return f.log[i]
}

// known reports whether a proto message holds no fields this build does not
// know: messageToProto would drop them, so such a message is not reused.
func known(m proto.Message) bool { return len(m.ProtoReflect().GetUnknown()) == 0 }

// sameAsProto reports whether messageToProto(m) would equal pm. Strings that
// the decoder took from pm share its memory, so comparing them is a pointer
// comparison, not a read of the content.
func sameAsProto(m *agentstate.Message, pm *ctxcv1.Message) bool {
	if m.ID != pm.GetId() || ctxcv1.Role(m.Role) != pm.GetRole() || ctxcv1.MessageKind(m.Kind) != pm.GetKind() ||
		m.Pinned != pm.GetPinned() || m.Importance != pm.GetImportance() || m.ExecutionID != pm.GetExecutionId() ||
		!maps.Equal(m.Metadata, pm.GetMetadata()) || !slices.Equal(m.CoversMessageIDs, pm.GetCoversMessageIds()) ||
		len(m.Parts) != len(pm.GetParts()) || !known(pm) {
		return false
	}
	if u := pm.GetUsage(); (m.Usage == nil) != (u == nil) || u != nil && (!known(u) ||
		*m.Usage != agentstate.Usage{InputTokens: u.GetInputTokenCount(), CachedInputTokens: u.GetCachedInputTokenCount(), OutputTokens: u.GetOutputTokenCount()}) {
		return false
	}
	if mk := pm.GetMask(); (m.Mask == nil) != (mk == nil) || mk != nil && (!known(mk) ||
		*m.Mask != agentstate.Mask{Reason: mk.GetReason(), Placeholder: mk.GetPlaceholder(), OriginalTokenCount: mk.GetOriginalTokenCount()}) {
		return false
	}
	if ts := pm.GetCreateTime(); (m.CreateTime == nil) != (ts == nil) || ts != nil && (!known(ts) ||
		ts.GetSeconds() != m.CreateTime.Unix() || ts.GetNanos() != int32(m.CreateTime.Nanosecond())) {
		return false
	}
	for k, pp := range pm.GetParts() {
		if !partSameAsProto(&m.Parts[k], pp) {
			return false
		}
	}
	return true
}

// partSameAsProto reports whether partToProto(p) would equal pp.
func partSameAsProto(p *agentstate.Part, pp *ctxcv1.Part) bool {
	if !known(pp) {
		return false
	}
	switch c := pp.GetContent().(type) {
	case *ctxcv1.Part_Text:
		return p.Kind == agentstate.PartText && p.Text == c.Text
	case *ctxcv1.Part_ToolCall:
		tc := c.ToolCall
		return p.Kind == agentstate.PartToolCall && tc != nil && known(tc) &&
			p.ToolCall == agentstate.ToolCall{ID: tc.GetId(), Name: tc.GetName(), ArgumentsJSON: tc.GetArgumentsJson()}
	case *ctxcv1.Part_ToolResult:
		tr := c.ToolResult
		return p.Kind == agentstate.PartToolResult && tr != nil && known(tr) &&
			p.ToolResult == agentstate.ToolResult{ToolCallID: tr.GetToolCallId(), Name: tr.GetName(), Content: tr.GetContent(), IsError: tr.GetIsError()}
	case *ctxcv1.Part_Image:
		img := c.Image
		if p.Kind != agentstate.PartImage || img == nil || !known(img) || p.Image.MediaType != img.GetMediaType() {
			return false
		}
		switch s := img.GetSource().(type) {
		case *ctxcv1.Image_Url:
			return p.Image.Source == agentstate.ImageSourceURL && p.Image.URL == s.Url
		case *ctxcv1.Image_Data:
			return p.Image.Source == agentstate.ImageSourceData && bytes.Equal(p.Image.Data, s.Data)
		}
		return false
	case *ctxcv1.Part_Reasoning:
		r := c.Reasoning
		return p.Kind == agentstate.PartReasoning && r != nil && known(r) &&
			p.Reasoning.Text == r.GetText() && bytes.Equal(p.Reasoning.Signature, r.GetSignature())
	}
	return false
}
