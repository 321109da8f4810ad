package client

import (
	"context"
	"errors"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// Session is a Route session whose state lives in the opaque blob ctxc
// returns: each call appends to it and keeps the next blob, which the caller
// persists with Blob and resumes with ResumeSession. A Session is not safe for
// concurrent use: steps of one agent happen in order.
type Session struct {
	client  *Client
	model   *ctxcv1.ModelSpec
	agentID string
	profile string
	blob    []byte
}

// NewSession starts an empty session for model; profile may be empty (the
// server's default), agentID names the agent in the server's logs and spans.
func (c *Client) NewSession(model *ctxcv1.ModelSpec, agentID, profile string) *Session {
	return &Session{client: c, model: model, agentID: agentID, profile: profile}
}

// ResumeSession continues the session whose latest blob is blob.
func (c *Client) ResumeSession(blob []byte, profile string) *Session {
	return &Session{client: c, profile: profile, blob: blob}
}

// Blob is the state to persist between steps.
func (s *Session) Blob() []byte { return s.blob }

// User routes a user turn, which starts a new execution; leading system
// messages replace the system prompt.
func (s *Session) User(ctx context.Context, messages ...*ctxcv1.Message) (*ctxcv1.RouteResponse, error) {
	return s.route(ctx, &ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_UserTurn{UserTurn: &ctxcv1.UserTurn{Messages: messages}}})
}

// Step routes one agent step: the assistant's output and its tool results.
// FINISH_REASON_STOP (a final answer) ends the execution.
func (s *Session) Step(ctx context.Context, step *ctxcv1.AgentStep) (*ctxcv1.RouteResponse, error) {
	return s.route(ctx, &ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_Step{Step: step}})
}

// Event routes out-of-band context, stored without a model call.
func (s *Session) Event(ctx context.Context, event *ctxcv1.Event) (*ctxcv1.RouteResponse, error) {
	return s.route(ctx, &ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_Event{Event: event}})
}

// errEmptySession is Compile before anything was routed.
var errEmptySession = errors.New("ctxc session: nothing routed yet; route a user turn first")

// Compile returns the context of the next model call.
func (s *Session) Compile(ctx context.Context, options *ctxcv1.CompileOptions) (*ctxcv1.CompileResponse, error) {
	if len(s.blob) == 0 {
		return nil, errEmptySession
	}
	return s.client.Compile(ctx, &ctxcv1.CompileRequest{StateBlob: s.blob, Profile: s.profile, Options: options})
}

func (s *Session) route(ctx context.Context, req *ctxcv1.RouteRequest) (*ctxcv1.RouteResponse, error) {
	req.Profile = s.profile
	if len(s.blob) == 0 {
		req.State = &ctxcv1.AgentState{AgentId: s.agentID, Model: s.model}
		req.WantStateBlob = true
	} else {
		req.StateBlob = s.blob
	}
	resp, err := s.client.Route(ctx, req)
	if err != nil {
		return nil, err
	}
	s.blob = resp.GetStateBlob()
	return resp, nil
}
