package adapter

import (
	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/adapter/stateblob"
	"github.com/contextcompiler/ctxc/internal/compiler"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// This file encodes the application layer's results as responses.

// compileResponse encodes a Compile's result; messages unchanged from the
// request's log are answered with the request's own (compiledToProto).
func compileResponse(req *ctxcv1.CompileRequest, res *compiler.CompileResult) *ctxcv1.CompileResponse {
	return &ctxcv1.CompileResponse{
		Messages:            compiledToProto(res.Messages, req.GetState().GetContext().GetMessages()),
		Budget:              budgetToProto(res.Budget),
		Report:              reportToProto(res.Report),
		HistoryDiscarded:    res.HistoryDiscarded,
		Rendered:            res.Rendered,
		OmittedMessageCount: u32(res.OmittedMessages),
	}
}

// routeResponse encodes a Route's result with the state as a message, or as
// a blob when asBlob.
func routeResponse(res *compiler.RouteResult, asBlob bool) (*ctxcv1.RouteResponse, *ctxcv1.AgentState, error) {
	resp := &ctxcv1.RouteResponse{
		AppendedMessageIds: res.AppendedIDs, ExecutionEnded: res.ExecutionEnded, HistoryDiscarded: res.HistoryDiscarded,
		InterruptedExecutionId: res.InterruptedExecutionID, SystemPromptReplaced: res.SystemPromptReplaced,
	}
	if res.Compaction != nil {
		resp.CompactionReport = reportToProto(res.Compaction)
	}
	state := StateToProto(res.State)
	if !asBlob {
		resp.State = state
		return resp, state, nil
	}
	blob, err := stateblob.Encode(state)
	if err != nil {
		return nil, nil, &agentstate.LimitError{Field: "state_blob", Limit: stateblob.MaxPayloadBytes, Got: -1}
	}
	resp.StateBlob = blob
	return resp, state, nil
}

// countResponse encodes a CountTokens' result.
func countResponse(res *compiler.CountResult) *ctxcv1.CountTokensResponse {
	resp := &ctxcv1.CountTokensResponse{Counter: res.Counter, TotalTokenCount: u32(res.Total), Provenance: ctxcv1.TokenCountProvenance(res.Provenance)}
	for _, c := range res.Texts {
		resp.Texts = append(resp.Texts, &ctxcv1.TokenCount{TokenCount: u32(c.Tokens), Provenance: ctxcv1.TokenCountProvenance(c.Provenance)})
	}
	for _, c := range res.Messages {
		resp.Messages = append(resp.Messages, &ctxcv1.TokenCount{TokenCount: u32(c.Tokens), Provenance: ctxcv1.TokenCountProvenance(c.Provenance)})
	}
	return resp
}
