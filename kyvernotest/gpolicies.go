package kyvernotest

import (
	"github.com/verdict-policy/verdict/engine/gpol"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/policy"
)

// generatingPolicyOf decodes and compiles a GeneratingPolicy or
// NamespacedGeneratingPolicy document into p. Kyverno's CLI gives no
// response for a resource the policy does not apply to.
func generatingPolicyOf(p *Policy, o kyverno.Object) *Policy {
	return celPolicyOf(p, o, gpol.Policies.DecodePolicy, policy.CompileGenerating, func(*policy.Policy) []bool {
		return []bool{true}
	})
}
