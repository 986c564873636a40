package client

import (
	"errors"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// FieldViolations returns the bad fields an error names: the
// google.rpc.BadRequest detail of a gRPC status error (INVALID_ARGUMENT,
// NOT_FOUND, RESOURCE_EXHAUSTED), or the violations of a
// *verdictv1.ValidationError (NewRequest checks requests before they are
// sent). It returns nil for any other error.
func FieldViolations(err error) []*verdictv1.FieldViolation {
	var verr *verdictv1.ValidationError
	if errors.As(err, &verr) {
		return verr.Violations
	}
	st, ok := status.FromError(err)
	if !ok {
		return nil
	}
	var out []*verdictv1.FieldViolation
	for _, d := range st.Details() {
		br, ok := d.(*errdetails.BadRequest)
		if !ok {
			continue
		}
		for _, v := range br.GetFieldViolations() {
			out = append(out, &verdictv1.FieldViolation{Field: v.GetField(), Description: v.GetDescription(), Reason: v.GetReason()})
		}
	}
	return out
}

// itemStatus turns the error of one stream item into the status error
// Evaluate would have returned, field violations included.
func itemStatus(ie *verdictv1.ItemError) error {
	st := status.New(codes.Code(ie.GetCode()), ie.GetMessage())
	if st.Code() == codes.OK {
		// A server never sends an OK item error; keep it an error.
		st = status.New(codes.Unknown, ie.GetMessage())
	}
	if vs := ie.GetFieldViolations(); len(vs) > 0 {
		br := &errdetails.BadRequest{FieldViolations: make([]*errdetails.BadRequest_FieldViolation, len(vs))}
		for i, v := range vs {
			br.FieldViolations[i] = &errdetails.BadRequest_FieldViolation{Field: v.GetField(), Description: v.GetDescription(), Reason: v.GetReason()}
		}
		if withDetails, err := st.WithDetails(br); err == nil {
			st = withDetails
		}
	}
	return st.Err()
}
