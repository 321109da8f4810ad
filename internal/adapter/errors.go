package adapter

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// ErrorDomain is google.rpc.ErrorInfo.domain on every error ctxc returns.
const ErrorDomain = "ctxc"

// Reasons the server adds to the domain's (agentstate.Reason*).
const (
	ReasonInvalidArgument  = "INVALID_ARGUMENT"
	reasonInternal         = "INTERNAL"
	reasonDeadlineExceeded = "DEADLINE_EXCEEDED"
	reasonCanceled         = "CANCELED"
)

// ToStatus is the one place where errors become gRPC statuses. Typed domain
// errors carry what the client needs to fix the request; anything else is a
// bug or an outage, logged with its detail and returned without it.
func ToStatus(ctx context.Context, log *slog.Logger, method string, err error) error {
	if err == nil {
		return nil
	}
	var (
		invalid      *agentstate.InvalidArgumentError
		profile      *agentstate.UnknownProfileError
		model        *agentstate.UnknownModelError
		irreducible  *agentstate.IrreducibleError
		limit        *agentstate.LimitError
		precondition *agentstate.PreconditionError
		unavailable  *agentstate.UnavailableError
	)
	switch {
	case errors.As(err, &invalid):
		reason := invalid.Reason
		if reason == "" {
			reason = ReasonInvalidArgument
		}
		return newStatus(codes.InvalidArgument, invalid.Error(), reason, invalid.Metadata, badRequest(invalid.Violations...))
	case errors.As(err, &profile):
		return newStatus(codes.InvalidArgument, profile.Error(), agentstate.ReasonUnknownProfile,
			map[string]string{"profile": profile.Name, "known_profiles": strings.Join(profile.Known, ",")},
			badRequest(agentstate.FieldViolation{Field: "profile", Description: profile.Error()}))
	case errors.As(err, &model):
		field := model.Field
		if field == "" {
			field = "state.model.name"
		}
		return newStatus(codes.InvalidArgument, model.Error(), agentstate.ReasonUnknownModel,
			map[string]string{"model": model.Model},
			badRequest(agentstate.FieldViolation{Field: field, Description: model.Error()}))
	case errors.As(err, &irreducible):
		return newStatus(codes.ResourceExhausted, irreducible.Error(), agentstate.ReasonContextIrreducible, map[string]string{
			"needed_tokens":    strconv.Itoa(irreducible.NeededTokens),
			"available_tokens": strconv.Itoa(irreducible.AvailableTokens),
		})
	case errors.As(err, &limit):
		return newStatus(codes.ResourceExhausted, limit.Error(), agentstate.ReasonLimitExceeded, map[string]string{
			"field": limit.Field,
			"limit": strconv.Itoa(limit.Limit),
			"got":   strconv.Itoa(limit.Got),
		})
	case errors.As(err, &precondition):
		return newStatus(codes.FailedPrecondition, precondition.Error(), precondition.Reason, map[string]string{"field": precondition.Field},
			&errdetails.PreconditionFailure{Violations: []*errdetails.PreconditionFailure_Violation{{
				Type: precondition.Reason, Subject: precondition.Field, Description: precondition.Detail,
			}}})
	case errors.As(err, &unavailable):
		return newStatus(codes.Unavailable, unavailable.Error(), agentstate.ReasonBackendUnavailable, map[string]string{"backend": unavailable.Backend})
	case errors.Is(err, context.DeadlineExceeded):
		return newStatus(codes.DeadlineExceeded, "deadline exceeded before the call completed", reasonDeadlineExceeded, nil)
	case errors.Is(err, context.Canceled):
		return newStatus(codes.Canceled, "call canceled by the client", reasonCanceled, nil)
	}
	if s, ok := status.FromError(err); ok {
		return s.Err() // already a status, made by this package
	}
	log.ErrorContext(ctx, "internal error", "method", method, "error", err.Error(), "invariant", errors.Is(err, agentstate.ErrInvariant))
	return InternalStatus()
}

// InternalStatus is what a client sees of a bug: no detail, just the reason.
func InternalStatus() error {
	return newStatus(codes.Internal, "internal error; the server logged the details", reasonInternal, nil)
}

// Bounds of what a status repeats of a request. Error texts quote client
// values (ids, names, paths); a status travels in HTTP/2 trailers, which
// clients on gRPC's C core (Python, PHP) refuse past a few kilobytes with an
// opaque RST_STREAM, and it is logged. So a status says at most
// MaxStatusMessageBytes, and its details stay within a few kilobytes.
const (
	// MaxStatusMessageBytes bounds a status message.
	MaxStatusMessageBytes = 1024
	// MaxViolations bounds the field violations of a BadRequest; the last
	// one says how many more there were.
	MaxViolations = 10
	// maxFieldBytes and maxDescriptionBytes bound a violation's texts,
	// maxMetadataBytes an ErrorInfo metadata value.
	maxFieldBytes, maxDescriptionBytes, maxMetadataBytes = 128, 256, 128
)

// Clip is s cut to at most n bytes on a character boundary, saying how long
// it was when it is cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	suffix := "… (" + strconv.Itoa(len(s)) + " bytes)"
	cut := max(n-len(suffix), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.ToValidUTF8(s[:cut], "") + suffix
}

func badRequest(violations ...agentstate.FieldViolation) *errdetails.BadRequest {
	shown := violations
	if len(shown) > MaxViolations {
		shown = shown[:MaxViolations-1]
	}
	br := &errdetails.BadRequest{FieldViolations: make([]*errdetails.BadRequest_FieldViolation, 0, len(shown)+1)}
	for _, v := range shown {
		br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{
			Field: Clip(v.Field, maxFieldBytes), Description: Clip(v.Description, maxDescriptionBytes)})
	}
	if more := len(violations) - len(shown); more > 0 {
		br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{
			Description: strconv.Itoa(more) + " more problems of the same request are not listed"})
	}
	return br
}

// newStatus builds a status with ErrorInfo first, then the given details,
// within the bounds above.
func newStatus(code codes.Code, msg, reason string, metadata map[string]string, details ...protoadapt.MessageV1) error {
	st := status.New(code, Clip(msg, MaxStatusMessageBytes))
	for k, v := range metadata {
		metadata[k] = Clip(v, maxMetadataBytes)
	}
	all := append([]protoadapt.MessageV1{&errdetails.ErrorInfo{Reason: reason, Domain: ErrorDomain, Metadata: metadata}}, details...)
	withDetails, err := st.WithDetails(all...)
	if err != nil {
		return st.Err() // only fails for an OK code, which no caller passes
	}
	return withDetails.Err()
}
