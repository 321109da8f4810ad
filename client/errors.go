package client

import (
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"
)

// ErrorInfo is the google.rpc.ErrorInfo of a failed call (domain "ctxc",
// reason such as INVALID_STATE or CONTEXT_IRREDUCIBLE, metadata such as
// needed_tokens), or nil when the error carries none.
func ErrorInfo(err error) *errdetails.ErrorInfo {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	return nil
}

// Reason is the ErrorInfo reason of a failed call, or "" when it has none.
func Reason(err error) string { return ErrorInfo(err).GetReason() }

// FieldViolations are the bad fields an INVALID_ARGUMENT answer names.
func FieldViolations(err error) []*errdetails.BadRequest_FieldViolation {
	var out []*errdetails.BadRequest_FieldViolation
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			out = append(out, br.GetFieldViolations()...)
		}
	}
	return out
}
