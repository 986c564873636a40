package kyverno

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/verdict-policy/verdict/engine"
)

// The PolicyException versions DecodeExceptions reads.
const (
	GroupVersionV2      = "kyverno.io/v2"
	KindPolicyException = "PolicyException"
)

// PolicyException is a kyverno.io/v2 (or v2beta1) PolicyException as
// written: resources it matches are exempt from the listed rules.
type PolicyException struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Metadata   ObjectMeta          `json:"metadata"`
	Spec       PolicyExceptionSpec `json:"spec"`
}

// PolicyExceptionSpec is the spec of a PolicyException.
type PolicyExceptionSpec struct {
	// Background (default true): the exception also applies in background
	// scans.
	Background *bool `json:"background,omitempty"`
	// Match selects the resources (any/all of resource filters).
	Match ExceptionMatch `json:"match"`
	// Conditions must hold too (evaluated with the rule's variables).
	Conditions *AnyAllConditions `json:"conditions,omitempty"`
	// Exceptions name the policies and rules exempted.
	Exceptions []ExceptionRef `json:"exceptions"`
	// PodSecurity exempts controls of podSecurity rules only.
	PodSecurity []PodSecurityStandard `json:"podSecurity,omitempty"`
}

// ExceptionMatch is the match block of a PolicyException
// (kyverno.io/v2beta1 MatchResources: any or all).
type ExceptionMatch struct {
	Any []ResourceFilter `json:"any,omitempty"`
	All []ResourceFilter `json:"all,omitempty"`
}

// ExceptionRef names a policy ("name" for a ClusterPolicy,
// "namespace/name" for a Policy) and rules of it (wildcards allowed).
type ExceptionRef struct {
	PolicyName string   `json:"policyName"`
	RuleNames  []string `json:"ruleNames"`
}

// DecodeExceptions reads every PolicyException of kyverno.io/v2 or
// kyverno.io/v2beta1 in data (multi-document YAML or JSON, Lists
// included). As in Kyverno's CLI, a document of another kind is an error
// (Code engine.CodeUnsupported), except the PolicyExceptions of
// policies.kyverno.io, which apply to the policies.kyverno.io policy types
// and are skipped. Decoding is strict: an unknown field or a value of the
// wrong type is an error with Code engine.CodeDecode and the field path.
func DecodeExceptions(source string, data []byte) ([]*PolicyException, error) {
	objs, err := SplitDocuments(source, data)
	if err != nil {
		return nil, err
	}
	var out []*PolicyException
	var errs []error
	for i, o := range objs {
		apiVersion, _ := o.Value["apiVersion"].(string)
		kind, _ := o.Value["kind"].(string)
		switch {
		case kind == KindPolicyException && (apiVersion == GroupVersionV2 || apiVersion == GroupVersionV2beta1):
		case kind == KindPolicyException && strings.HasPrefix(apiVersion, "policies.kyverno.io/"):
			continue
		default:
			errs = append(errs, docError(source, i+1, o.Line, engine.Errorf(engine.CodeUnsupported, "kind",
				fmt.Sprintf("%s %s is not a PolicyException of %s or %s", apiVersion, kind, GroupVersionV2, GroupVersionV2beta1))))
			continue
		}
		if err := checkDocumentDepth(o.Value, MaxDocumentDepth); err != nil {
			errs = append(errs, docError(source, i+1, o.Line, err))
			continue
		}
		ex := new(PolicyException)
		var es engine.Errors
		rv := reflect.ValueOf(ex).Elem()
		checkFields(o.Value, rv.Type(), "", &es)
		decodeInto(o.Value, rv, "", &es)
		if err := es.Err(); err != nil {
			errs = append(errs, docError(source, i+1, o.Line, err))
			continue
		}
		out = append(out, ex)
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	return out, nil
}

// checkFields reports the keys of v that the Go type t has no field for,
// recursively: the types stand in for the CRD schema. Free-form fields
// (any) accept anything.
func checkFields(v any, t reflect.Type, path string, errs *engine.Errors) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return // decodeInto reports the type
		}
		fields := map[string]reflect.Type{}
		exceptionFields(t, fields)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			ft, ok := fields[k]
			if !ok {
				*errs = append(*errs, engine.Errorf(engine.CodeDecode, joinPath(path, k), "unknown field"))
				continue
			}
			checkFields(m[k], ft, joinPath(path, k), errs)
		}
	case reflect.Slice:
		if l, ok := v.([]any); ok {
			for i, e := range l {
				checkFields(e, t.Elem(), indexPath(path, i), errs)
			}
		}
	case reflect.Map:
		if m, ok := v.(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				checkFields(m[k], t.Elem(), joinPath(path, k), errs)
			}
		}
	}
}

func exceptionFields(t reflect.Type, out map[string]reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			exceptionFields(f.Type, out)
			continue
		}
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out[name] = f.Type
	}
}
