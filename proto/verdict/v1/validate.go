package verdictv1

import (
	"bytes"
	"fmt"
	"strings"
)

// ReasonInvalidArgument is the FieldViolation reason of a request field
// that breaks a rule of this API (as opposed to a policy error, whose reason
// is the policy error code).
const ReasonInvalidArgument = "invalid_argument"

// ValidationError lists the fields of a request that break a rule of this
// API. The server returns it as an INVALID_ARGUMENT status with a
// google.rpc.BadRequest detail; clients may call Validate before sending.
type ValidationError struct {
	Violations []*FieldViolation
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	for i, v := range e.Violations {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(v.GetField())
		b.WriteString(": ")
		b.WriteString(v.GetDescription())
	}
	return b.String()
}

// violations collects field violations under a field prefix.
type violations struct {
	prefix string
	list   []*FieldViolation
}

func (v *violations) add(field, format string, args ...any) {
	v.list = append(v.list, &FieldViolation{
		Field:       v.prefix + field,
		Description: fmt.Sprintf(format, args...),
		Reason:      ReasonInvalidArgument,
	})
}

func (v *violations) err() error {
	if len(v.list) == 0 {
		return nil
	}
	return &ValidationError{Violations: v.list}
}

// Validate checks the shape of the request without decoding its JSON
// payloads: known enum values, a JSON object where one is required, a
// non-empty policy selection. It returns a *ValidationError or nil.
func (x *EvaluateRequest) Validate() error {
	v := &violations{}
	x.validate(v)
	return v.err()
}

func (x *EvaluateRequest) validate(v *violations) {
	if _, ok := Operation_name[int32(x.GetOperation())]; !ok {
		v.add("operation", "unknown operation %d", x.GetOperation())
	}
	if _, ok := Mode_name[int32(x.GetMode())]; !ok {
		v.add("mode", "unknown mode %d", x.GetMode())
	}
	switch {
	case len(x.GetObject()) > 0:
		if !jsonObject(x.GetObject()) {
			v.add("object", "not a JSON object")
		}
	case x.GetOperation() == Operation_OPERATION_DELETE && len(x.GetOldObject()) > 0:
	case x.GetOperation() == Operation_OPERATION_DELETE:
		v.add("object", "required: the object, or for DELETE the old_object")
	default:
		v.add("object", "required")
	}
	if len(x.GetOldObject()) > 0 && !jsonObject(x.GetOldObject()) {
		v.add("old_object", "not a JSON object")
	}
	if k := x.GetKind(); k != nil && (k.GetKind() == "" || k.GetVersion() == "") {
		v.add("kind", "kind and version are required when kind is set")
	}
	if r := x.GetResource(); r != nil && (r.GetResource() == "" || r.GetVersion() == "") {
		v.add("resource", "resource and version are required when resource is set")
	}
	switch p := x.GetPolicies().(type) {
	case *EvaluateRequest_InlinePolicies:
		docs := p.InlinePolicies.GetDocuments()
		if len(docs) == 0 {
			v.add("inline_policies.documents", "at least one document is required")
		}
		for i, d := range docs {
			if len(bytes.TrimSpace(d)) == 0 {
				v.add(fmt.Sprintf("inline_policies.documents[%d]", i), "empty document")
			}
		}
	case *EvaluateRequest_PolicySelector:
		for i, n := range p.PolicySelector.GetNames() {
			if !validPolicyName(n) {
				v.add(fmt.Sprintf("policy_selector.names[%d]", i), "%q is not \"name\" or \"namespace/name\"", n)
			}
		}
	}
	for k, val := range x.GetVariables() {
		if k == "" {
			v.add("variables", "empty variable name")
			continue
		}
		if len(bytes.TrimSpace(val)) == 0 {
			v.add(fmt.Sprintf("variables[%q]", k), "empty value: want JSON")
		}
	}
}

// Validate checks that the request names a policy.
func (x *GetPolicyRequest) Validate() error {
	v := &violations{}
	if x.GetName() == "" {
		v.add("name", "required")
	}
	return v.err()
}

// jsonObject reports whether b starts, after white space, with '{'. The
// full JSON is checked when the server decodes it.
func jsonObject(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

func validPolicyName(n string) bool {
	ns, name, namespaced := strings.Cut(n, "/")
	if !namespaced {
		return n != ""
	}
	return ns != "" && name != "" && !strings.Contains(name, "/")
}
