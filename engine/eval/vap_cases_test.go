package eval_test

import (
	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vap"
)

// caseVAP compiles a ValidatingAdmissionPolicy document of a case (nil
// for a binding: caseBindings compiles those). In a case run as Kyverno's
// CLI (kyvernoCLI: true) the policy is evaluated at admission, as the CLI
// evaluates it; otherwise only in background mode.
func caseVAP(tc testCase, o kyverno.Object) (*policy.Policy, error) {
	apiVersion, _ := o.Value["apiVersion"].(string)
	kind, _ := o.Value["kind"].(string)
	if !vap.IsPolicy(apiVersion, kind) {
		return nil, nil
	}
	doc, err := vap.DecodePolicy(o.Value)
	if err != nil {
		return nil, err
	}
	p, err := policy.CompileVAP(doc)
	if err != nil {
		return nil, err
	}
	p.Admission = tc.KyvernoCLI
	return p, nil
}

// caseBindings compiles the ValidatingAdmissionPolicyBindings of a case's
// policy documents, in order.
func caseBindings(tc testCase) ([]*vap.Binding, error) {
	docs, err := vap.DecodeBindings(tc.Note, []byte(tc.Policy))
	if err != nil {
		return nil, err
	}
	var out []*vap.Binding
	for _, d := range docs {
		b, err := vap.CompileBinding(d)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// cliBindingParams are the params of a binding as Kyverno's CLI finds them
// among the params resources (matchesSelector in pkg/admissionpolicy):
// whatever their kind, by selector, else by name (namespace ignored then),
// else by namespace.
func (m mapLookup) cliBindingParams(q eval.ParamQuery) []map[string]any {
	var out []map[string]any
	for _, p := range m.params {
		meta, _ := p["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		ns, _ := meta["namespace"].(string)
		labels := map[string]string{}
		if l, ok := meta["labels"].(map[string]any); ok {
			for k, v := range l {
				labels[k], _ = v.(string)
			}
		}
		var ok bool
		switch {
		case q.Selector != nil:
			ok = q.Selector.Matches(labels)
		case q.Name != "":
			ok = name == q.Name
		case q.Namespace != "":
			ok = ns == q.Namespace
		}
		if ok {
			out = append(out, p)
		}
	}
	return out
}
