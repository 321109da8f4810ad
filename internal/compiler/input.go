package compiler

import (
	"context"

	"github.com/contextcompiler/ctxc/internal/providers"
	"github.com/contextcompiler/ctxc/internal/tokens"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// WorkingBytesPerMessage is what compiling a log holds per message beyond
// the request's bytes (entries, counts, reports), measured on logs of
// 100,000 small messages (make abuse).
const WorkingBytesPerMessage = 2 << 10

// What importing and compiling a provider body (input_json) holds beyond
// the request's own bytes, besides WorkingBytesPerMessage per message,
// measured: the live heap of a Compile with render_into_input peaks at
// 3.8–4.1 times a 30 MB body above the request, and at 137 MB for 99,999
// short messages (272 MB held); make abuse's input probe checks the
// server's RSS against what is held.
const (
	// InputCopies is how many times the body's size is held beyond the
	// request's: the texts imported from it, the body spliced with the
	// compiled context, the reply carrying it, and what decoding makes and
	// drops on the way (the import's own values, a rendered body checked
	// by its provider's validator).
	InputCopies = 4
	// ImportBytesPerMessage is what each imported message holds of its
	// own (its struct, id and origin in the body; ~400 bytes measured).
	ImportBytesPerMessage = 512
)

// InputHeldBytes is what a provider body of size bytes with messages
// messages (providers.Measure) holds while it is imported and compiled,
// beyond the request's own bytes.
func InputHeldBytes(size, messages int) int64 {
	return int64(size)*InputCopies + int64(messages)*(WorkingBytesPerMessage+ImportBytesPerMessage)
}

// importInput imports a Compile's provider body once it is known to fit:
// its messages are counted first, materializing nothing and stopping at
// Limits.MaxMessages; what it will hold is reserved (req.ReserveInput)
// before it is decoded, and what counting its longest run of text without
// a space holds before anything is counted. The import stops when ctx
// ends.
func (s *Service) importInput(ctx context.Context, req *CompileRequest) (*providers.Imported, error) {
	in := req.Input
	messages, err := providers.Measure(ctx, in.Format, in.Body, s.limits.MaxMessages)
	if err != nil {
		return nil, err
	}
	if req.ReserveInput != nil {
		if err := req.ReserveInput("input_json", InputHeldBytes(len(in.Body), messages)); err != nil {
			return nil, err
		}
	}
	imported, err := providers.ImportContext(ctx, in.Format, in.Body, messages)
	if err != nil {
		return nil, err
	}
	if n := len(imported.Messages); n > s.limits.MaxMessages {
		return nil, &agentstate.LimitError{Field: "input_json.messages", Limit: s.limits.MaxMessages, Got: n}
	}
	if longest := longestPiece(imported); longest > 0 && req.ReserveInput != nil {
		// Counting a long run of text without a space (one piece) holds
		// memory in proportion to it, as for a state.
		if err := req.ReserveInput("input_json (its longest run of text without a space)", int64(longest)*tokens.PieceWorkingBytes); err != nil {
			return nil, err
		}
	}
	return imported, nil
}

// longestPiece bounds the longest piece any text of an imported body may
// pre-tokenize to (tokens.LongestPiece).
func longestPiece(im *providers.Imported) int {
	longest := tokens.LongestPiece(im.SystemPrompt)
	for i := range im.Tools {
		longest = max(longest, tokens.LongestPiece(im.Tools[i].Description), tokens.LongestPiece(im.Tools[i].ParametersJSON))
	}
	for i := range im.Messages {
		for j := range im.Messages[i].Parts {
			p := &im.Messages[i].Parts[j]
			switch p.Kind {
			case agentstate.PartText:
				longest = max(longest, tokens.LongestPiece(p.Text))
			case agentstate.PartToolCall:
				longest = max(longest, tokens.LongestPiece(p.ToolCall.ArgumentsJSON))
			case agentstate.PartToolResult:
				longest = max(longest, tokens.LongestPiece(p.ToolResult.Content))
			case agentstate.PartReasoning:
				longest = max(longest, tokens.LongestPiece(p.Reasoning.Text))
			}
		}
	}
	return longest
}
