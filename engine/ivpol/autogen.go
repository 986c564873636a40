package ivpol

import (
	"encoding/json"

	policiesv1 "github.com/kyverno/api/api/policies.kyverno.io/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/verdict-policy/verdict/engine/vpol"
)

// autogenVariant is a spec generated for pod controllers.
type autogenVariant struct {
	config string
	spec   *policiesv1.ImageValidatingPolicySpec
}

// autogen computes the pod controller variants of a spec as Kyverno's
// ivpol autogen does (pkg/cel/policies/ivpol/autogen): for a policy on
// Pods only (vpol.CanAutogen), one per configuration of the controllers
// autogen.podControllers.controllers names (all six by default), in the
// order of the configurations' names, each with matchConstraints for its
// controllers (the policy's operations and namespaceSelector) and the
// whole spec rewritten for the pod template (vpol.AutogenRewrite:
// object.spec becomes object.spec.template.spec, ...).
func autogen(spec *policiesv1.ImageValidatingPolicySpec) ([]autogenVariant, error) {
	if spec.MatchConstraints == nil || !vpol.CanAutogen(spec.MatchConstraints) {
		return nil, nil
	}
	var pc *policiesv1.PodControllersGenerationConfiguration
	if a := spec.AutogenConfiguration; a != nil {
		pc = a.PodControllers
	}
	var out []autogenVariant
	for _, c := range vpol.AutogenConfigs(spec.MatchConstraints, pc) {
		cp := spec.DeepCopy()
		cp.MatchConstraints = c.MatchConstraints
		if cp.MatchConstraints == nil {
			cp.MatchConstraints = &admissionregistrationv1.MatchResources{} // no operation: matches nothing
		}
		raw, err := json.Marshal(cp)
		if err != nil {
			return nil, err
		}
		var rewritten policiesv1.ImageValidatingPolicySpec
		if err := json.Unmarshal(vpol.AutogenRewrite(raw, c.Name), &rewritten); err != nil {
			return nil, err
		}
		out = append(out, autogenVariant{config: c.Name, spec: &rewritten})
	}
	return out, nil
}
