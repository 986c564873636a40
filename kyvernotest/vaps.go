package kyvernotest

import (
	"fmt"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/vap"
)

// This file holds what the test runner does for Kubernetes'
// ValidatingAdmissionPolicies: the policies (compiled by celPolicyOf) and
// their bindings, loaded from the policy files with the other kinds, and
// the params of the bindings, found among the test's paramResources as
// Kyverno's CLI finds them. The engine runs them as Kyverno's CLI does (eval.Options.KyvernoCLI).

// bindingOf decodes and compiles a ValidatingAdmissionPolicyBinding
// document into p.binding.
func bindingOf(p *Policy, o kyverno.Object) *Policy {
	doc, err := vap.DecodeBinding(o.Value)
	if err != nil {
		p.Err = kyverno.NewDocumentError(p.Path, 1, o.Line, err)
		return p
	}
	b, err := vap.CompileBinding(doc)
	if err != nil {
		p.Err = fmt.Errorf("%s:%d: %w", p.Path, o.Line, err)
		return p
	}
	p.binding = b
	return p
}

// isBinding reports whether a loaded document is a
// ValidatingAdmissionPolicyBinding.
func (p *Policy) isBinding() bool { return vap.IsBinding(p.APIVersion, p.Kind) }

// splitBindings separates the ValidatingAdmissionPolicyBindings of the
// loaded documents from the policies. A binding that does not decode or
// compile is an error, as in Kyverno's CLI.
func splitBindings(docs []*Policy) ([]*Policy, []*vap.Binding, error) {
	var pols []*Policy
	var bindings []*vap.Binding
	for _, d := range docs {
		if !d.isBinding() {
			pols = append(pols, d)
			continue
		}
		if d.Err != nil {
			return nil, nil, fmt.Errorf("load policies: %w", d.Err)
		}
		bindings = append(bindings, d.binding)
	}
	return pols, bindings, nil
}

// errVAPExceptions is Kyverno's CLI's refusal of a test with both
// ValidatingAdmissionPolicies and kyverno.io PolicyExceptions.
var errVAPExceptions = fmt.Errorf("use of exceptions with ValidatingAdmissionPolicies is not supported")

// hasVAP reports whether one of the policies is a
// ValidatingAdmissionPolicy.
func hasVAP(pols []*Policy) bool {
	for _, p := range pols {
		if vap.IsPolicy(p.APIVersion, p.Kind) {
			return true
		}
	}
	return false
}

// bindingParams are the params of a ValidatingAdmissionPolicyBinding or
// MutatingAdmissionPolicyBinding as
// Kyverno's CLI finds them among the params resources (matchesSelector in
// pkg/admissionpolicy): whatever their kind, by selector (every object
// whose labels match), else the first by name (its namespace not
// compared), else the first in paramRef.namespace; none matches a
// paramRef with neither.
func (l *lookup) bindingParams(q eval.ParamQuery) []map[string]any {
	var out []map[string]any
	for _, r := range l.params {
		var ok bool
		switch {
		case q.Selector != nil:
			ok = q.Selector.Matches(kyverno.MetadataStrings(r.Object, "labels"))
		case q.Name != "":
			ok = r.Name == q.Name
		case q.Namespace != "":
			ok = r.Namespace == q.Namespace
		}
		if !ok {
			continue
		}
		out = append(out, r.Object)
		if q.Selector == nil {
			break
		}
	}
	return out
}
