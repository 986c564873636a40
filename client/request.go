package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// RequestOption sets a field of an EvaluateRequest built by NewRequest.
type RequestOption func(*verdictv1.EvaluateRequest) error

// NewRequest builds an EvaluateRequest for resource, which is anything
// that encodes as a JSON object: a map[string]any, a typed Kubernetes
// object, an unstructured.Unstructured, or JSON bytes ([]byte or
// json.RawMessage, sent as they are). The request is a CREATE in
// admission mode unless opts say otherwise; it is checked with Validate
// before it is returned.
func NewRequest(resource any, opts ...RequestOption) (*verdictv1.EvaluateRequest, error) {
	obj, err := jsonObject("resource", resource)
	if err != nil {
		return nil, err
	}
	req := &verdictv1.EvaluateRequest{Object: obj}
	for _, o := range opts {
		if err := o(req); err != nil {
			return nil, err
		}
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return req, nil
}

// jsonObject encodes v as JSON, or returns JSON bytes as they are. A nil v
// gives nil.
func jsonObject(what string, v any) ([]byte, error) {
	var b []byte
	switch v := v.(type) {
	case nil:
		return nil, nil
	case []byte:
		b = v
	case json.RawMessage:
		b = v
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("encode %s: %w", what, err)
		}
	}
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("encode %s: not a JSON object", what)
	}
	return b, nil
}

// Operation sets the admission operation (default CREATE).
func Operation(op verdictv1.Operation) RequestOption {
	return func(r *verdictv1.EvaluateRequest) error {
		r.Operation = op
		return nil
	}
}

// OldObject sets the previous state of the resource, for UPDATE and
// DELETE; it takes the same values as NewRequest's resource. For a DELETE
// of which only the old object is known, pass a nil resource to
// NewRequest.
func OldObject(old any) RequestOption {
	return func(r *verdictv1.EvaluateRequest) error {
		b, err := jsonObject("old object", old)
		if err != nil {
			return err
		}
		r.OldObject = b
		return nil
	}
}

// Namespace sets the namespace of the request and the labels of that
// namespace (for namespaceSelector).
func Namespace(name string, labels map[string]string) RequestOption {
	return func(r *verdictv1.EvaluateRequest) error {
		r.Namespace, r.NamespaceLabels = name, labels
		return nil
	}
}

// User sets the requester.
func User(u *verdictv1.UserInfo) RequestOption {
	return func(r *verdictv1.EvaluateRequest) error {
		r.UserInfo = u
		return nil
	}
}

// Background evaluates the resource as a background scan does: rules that
// need admission data are skipped, and the decision is always allowed.
func Background() RequestOption {
	return func(r *verdictv1.EvaluateRequest) error {
		r.Mode = verdictv1.Mode_MODE_BACKGROUND
		return nil
	}
}

// DryRun sets the admission dryRun flag.
func DryRun() RequestOption {
	return func(r *verdictv1.EvaluateRequest) error {
		r.DryRun = true
		return nil
	}
}

// Policies evaluates only the named policies of the server ("name" for a
// ClusterPolicy, "namespace/name" for a Policy).
func Policies(names ...string) RequestOption {
	return func(r *verdictv1.EvaluateRequest) error {
		if len(names) == 0 {
			return errors.New("Policies: no policy name")
		}
		r.Policies = &verdictv1.EvaluateRequest_PolicySelector{PolicySelector: &verdictv1.PolicySelector{Names: names}}
		return nil
	}
}

// PolicyLabels evaluates only the server's policies that carry every one
// of labels.
func PolicyLabels(labels map[string]string) RequestOption {
	return func(r *verdictv1.EvaluateRequest) error {
		r.Policies = &verdictv1.EvaluateRequest_PolicySelector{PolicySelector: &verdictv1.PolicySelector{Labels: labels}}
		return nil
	}
}

// InlinePolicies evaluates the given policy documents (YAML or JSON, each
// possibly holding several policies) instead of the server's. The server
// compiles each distinct document once and caches it.
func InlinePolicies(documents ...[]byte) RequestOption {
	return func(r *verdictv1.EvaluateRequest) error {
		r.Policies = &verdictv1.EvaluateRequest_InlinePolicies{InlinePolicies: &verdictv1.InlinePolicies{Documents: documents}}
		return nil
	}
}

// Resource sets the group, version and plural name of the request's
// resource (AdmissionRequest.resource), which the resourceRules of
// ValidatingPolicies match; without it the server guesses the plural from
// the kind.
func Resource(group, version, resource string) RequestOption {
	return func(r *verdictv1.EvaluateRequest) error {
		if version == "" || resource == "" {
			return fmt.Errorf("Resource(%q, %q, %q): version and resource are required", group, version, resource)
		}
		r.Resource = &verdictv1.GroupVersionResource{Group: group, Version: version, Resource: resource}
		return nil
	}
}

// Variable sets a variable of the evaluation scope (a dotted name such as
// "request.operation", or the name of a context entry, which is then not
// loaded) to value, encoded as JSON.
func Variable(name string, value any) RequestOption {
	return func(r *verdictv1.EvaluateRequest) error {
		b, err := json.Marshal(value)
		if err != nil {
			return fmt.Errorf("encode variable %s: %w", name, err)
		}
		if r.Variables == nil {
			r.Variables = map[string][]byte{}
		}
		r.Variables[name] = b
		return nil
	}
}
