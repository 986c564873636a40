package policy

import (
	"github.com/verdict-policy/verdict/engine/celrule"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
)

// Shared returns the values that compiled policies reference but do not
// own: the CEL environments the engine builds once and keeps for the
// whole process (celrule's admission environments for validate.cel, and
// kyvernocel's per-namespace environments for the policies.kyverno.io
// kinds). A host that measures the memory a compiled policy holds (the
// decision server's cache of inline policies) leaves them out: they stay
// when the policy goes. The list grows as policies of new namespaces are
// compiled.
func Shared() []any {
	var out []any
	for _, e := range celrule.SharedEnvs() {
		out = append(out, e)
	}
	for _, e := range kyvernocel.SharedEnvs() {
		out = append(out, e)
	}
	return out
}
