package server

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/verdict-policy/verdict/engine"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// Errors of the server that are not about one field.
var (
	errNotReady     = errors.New("policies are not loaded yet")
	errShuttingDown = errors.New("server is shutting down; retry on another replica")
)

// reasonNotFound is the FieldViolation reason of a name the server does not
// know.
const reasonNotFound = "not_found"

// notFoundError says that request fields name something the server does
// not hold.
type notFoundError struct {
	violations []*verdictv1.FieldViolation
}

func (e *notFoundError) Error() string {
	return (&verdictv1.ValidationError{Violations: e.violations}).Error()
}

// limitError says that a request exceeds a limit of the server.
type limitError struct {
	field, description string
}

func (e *limitError) Error() string { return e.field + ": " + e.description }

// sentinelCodes maps the server's sentinel errors to status codes.
var sentinelCodes = []struct {
	err  error
	code codes.Code
}{
	{errNotReady, codes.Unavailable},
	{errShuttingDown, codes.Unavailable},
}

// toStatus is the one place that turns an error into a gRPC status error:
//
//   - a status error is returned as is;
//   - context errors become CANCELLED or DEADLINE_EXCEEDED;
//   - the sentinel errors map through sentinelCodes;
//   - *verdictv1.ValidationError and *engine.Error / engine.Errors become
//     INVALID_ARGUMENT, *notFoundError NOT_FOUND and *limitError
//     RESOURCE_EXHAUSTED, each with a google.rpc.BadRequest detail whose
//     field violations name the fields (and carry the engine error code as
//     reason);
//   - anything else is INTERNAL.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return status.FromContextError(err).Err()
	}
	for _, s := range sentinelCodes {
		if errors.Is(err, s.err) {
			return status.Error(s.code, err.Error())
		}
	}
	var (
		verr *verdictv1.ValidationError
		nf   *notFoundError
		lim  *limitError
	)
	switch {
	case errors.As(err, &verr):
		return withViolations(codes.InvalidArgument, err.Error(), verr.Violations)
	case errors.As(err, &nf):
		return withViolations(codes.NotFound, err.Error(), nf.violations)
	case errors.As(err, &lim):
		return withViolations(codes.ResourceExhausted, err.Error(), []*verdictv1.FieldViolation{
			{Field: lim.field, Description: lim.description, Reason: "limit_exceeded"},
		})
	}
	if es := engine.As(err); len(es) > 0 {
		vs := make([]*verdictv1.FieldViolation, len(es))
		for i, e := range es {
			vs[i] = &verdictv1.FieldViolation{Field: e.Path, Description: e.Message, Reason: string(e.Code)}
		}
		return withViolations(codes.InvalidArgument, err.Error(), vs)
	}
	return status.Error(codes.Internal, err.Error())
}

func withViolations(code codes.Code, msg string, vs []*verdictv1.FieldViolation) error {
	br := &errdetails.BadRequest{FieldViolations: make([]*errdetails.BadRequest_FieldViolation, len(vs))}
	for i, v := range vs {
		br.FieldViolations[i] = &errdetails.BadRequest_FieldViolation{
			Field:       v.GetField(),
			Description: v.GetDescription(),
			Reason:      v.GetReason(),
		}
	}
	st, err := status.New(code, msg).WithDetails(br)
	if err != nil {
		// WithDetails fails only for a code OK or a detail that does not
		// marshal; keep the code and message.
		return status.Error(code, msg)
	}
	return st.Err()
}

// itemError is the stream form of an error: the status toStatus gives,
// with its field violations.
func itemError(err error, fieldPrefix string) *verdictv1.ItemError {
	st := status.Convert(toStatus(err))
	ie := &verdictv1.ItemError{Code: int32(st.Code()), Message: st.Message()}
	for _, d := range st.Details() {
		br, ok := d.(*errdetails.BadRequest)
		if !ok {
			continue
		}
		for _, v := range br.GetFieldViolations() {
			ie.FieldViolations = append(ie.FieldViolations, &verdictv1.FieldViolation{
				Field:       fieldPrefix + v.GetField(),
				Description: v.GetDescription(),
				Reason:      v.GetReason(),
			})
		}
	}
	return ie
}

// fieldError is a *verdictv1.ValidationError for one field.
func fieldError(field, format string, args ...any) error {
	return &verdictv1.ValidationError{Violations: []*verdictv1.FieldViolation{{
		Field:       field,
		Description: fmt.Sprintf(format, args...),
		Reason:      verdictv1.ReasonInvalidArgument,
	}}}
}
