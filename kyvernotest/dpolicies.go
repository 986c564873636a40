package kyvernotest

import (
	"github.com/verdict-policy/verdict/engine/dpol"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/policy"
)

// deletingPolicyOf decodes and compiles a DeletingPolicy or
// NamespacedDeletingPolicy document into p. Kyverno's CLI reports, for
// each resource the policy's matchConstraints select, whether the policy
// would delete it, and nothing for the others.
func deletingPolicyOf(p *Policy, o kyverno.Object) *Policy {
	return celPolicyOf(p, o, dpol.Policies.DecodePolicy, policy.CompileDeleting, func(*policy.Policy) []bool {
		return []bool{true}
	})
}
