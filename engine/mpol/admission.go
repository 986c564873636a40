package mpol

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// The Kubernetes kinds of mutating admission policies.
const (
	AdmissionGroup                     = "admissionregistration.k8s.io"
	KindMutatingAdmissionPolicy        = "MutatingAdmissionPolicy"
	KindMutatingAdmissionPolicyBinding = "MutatingAdmissionPolicyBinding"
)

// admissionVersions are the versions of admissionregistration.k8s.io
// Kyverno's CLI loads mutating admission policies and bindings in (it
// converts them to one version; they have the same fields).
var admissionVersions = []string{"v1", "v1beta1", "v1alpha1"}

// AdmissionDocument is a Kubernetes admission object as written, in any
// version Kyverno's CLI loads, with the v1 spec (the versions have the
// same fields).
type AdmissionDocument[S any] struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       S                 `json:"spec"`
}

// AdmissionPolicyDocument is a MutatingAdmissionPolicy, BindingDocument a
// MutatingAdmissionPolicyBinding.
type (
	AdmissionPolicyDocument = AdmissionDocument[admissionregistrationv1.MutatingAdmissionPolicySpec]
	BindingDocument         = AdmissionDocument[admissionregistrationv1.MutatingAdmissionPolicyBindingSpec]
)

// IsAdmissionPolicy reports whether apiVersion and kind name a
// MutatingAdmissionPolicy, and IsBinding a binding of one, in any
// version (a version Kyverno's CLI does not load is a decoding error).
func IsAdmissionPolicy(apiVersion, kind string) bool {
	return kind == KindMutatingAdmissionPolicy && strings.HasPrefix(apiVersion, AdmissionGroup+"/")
}

// IsBinding: see IsAdmissionPolicy.
func IsBinding(apiVersion, kind string) bool {
	return kind == KindMutatingAdmissionPolicyBinding && strings.HasPrefix(apiVersion, AdmissionGroup+"/")
}

// DecodeAdmissionPolicy decodes one MutatingAdmissionPolicy (a JSON
// object, as kyverno.SplitDocuments returns it) strictly: an unknown
// field, or a value of the wrong type, is an error with Code
// engine.CodeDecode and the field path; a version Kyverno's CLI does not
// load is an error with Code engine.CodeUnsupported at "apiVersion".
func DecodeAdmissionPolicy(m map[string]any) (*AdmissionPolicyDocument, error) {
	return decodeAdmission[admissionregistrationv1.MutatingAdmissionPolicySpec](m, KindMutatingAdmissionPolicy)
}

// DecodeBinding decodes one MutatingAdmissionPolicyBinding as
// DecodeAdmissionPolicy decodes policies.
func DecodeBinding(m map[string]any) (*BindingDocument, error) {
	return decodeAdmission[admissionregistrationv1.MutatingAdmissionPolicyBindingSpec](m, KindMutatingAdmissionPolicyBinding)
}

// DecodeAdmission reads every MutatingAdmissionPolicy and binding of data
// (multi-document YAML or JSON); other documents are skipped.
func DecodeAdmission(source string, data []byte) ([]*AdmissionPolicyDocument, []*BindingDocument, error) {
	pols, err := vpol.DecodeAll(source, data, IsAdmissionPolicy, DecodeAdmissionPolicy)
	if err != nil {
		return nil, nil, err
	}
	binds, err := vpol.DecodeAll(source, data, IsBinding, DecodeBinding)
	if err != nil {
		return nil, nil, err
	}
	return pols, binds, nil
}

// quoted finds the field path of a strict decoding error ("unknown field
// \"spec.x\"").
var quoted = regexp.MustCompile(`"([^"]*)"`)

// decodeAdmission checks the group, version and kind of m and decodes it
// with unknown and duplicate fields refused.
func decodeAdmission[S any](m map[string]any, kind string) (*AdmissionDocument[S], error) {
	out := &AdmissionDocument[S]{}
	if err := decodeAdmissionInto(m, kind, out); err != nil {
		return nil, err
	}
	return out, nil
}

func decodeAdmissionInto(m map[string]any, kind string, out any) error {
	apiVersion, _ := m["apiVersion"].(string)
	group, version, _ := strings.Cut(apiVersion, "/")
	if k, _ := m["kind"].(string); k != kind || group != AdmissionGroup {
		return engine.Errorf(engine.CodeUnsupported, "kind", fmt.Sprintf("%s %s is not a %s", apiVersion, k, kind))
	}
	if !slices.Contains(admissionVersions, version) {
		return engine.Errorf(engine.CodeUnsupported, "apiVersion",
			fmt.Sprintf("%s is not a version of %s Kyverno's CLI loads (%s/%s)", apiVersion, kind, AdmissionGroup, strings.Join(admissionVersions, ", "+AdmissionGroup+"/")))
	}
	data, err := json.Marshal(m)
	if err != nil {
		return &engine.Error{Code: engine.CodeDecode, Message: err.Error(), Err: err}
	}
	strict, err := kjson.UnmarshalStrict(data, out)
	if err != nil {
		path := ""
		if te, ok := err.(*json.UnmarshalTypeError); ok {
			path = te.Field
		}
		return &engine.Error{Code: engine.CodeDecode, Path: path, Message: err.Error(), Err: err}
	}
	var errs engine.Errors
	for _, e := range strict {
		path := ""
		if q := quoted.FindStringSubmatch(e.Error()); q != nil {
			path = q[1]
		}
		errs = append(errs, &engine.Error{Code: engine.CodeDecode, Path: path, Message: e.Error(), Err: e})
	}
	return errs.Err()
}
