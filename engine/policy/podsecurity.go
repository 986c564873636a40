package policy

import (
	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/podsecurity"
)

// podSecurity compiles a validate.podSecurity rule.
func (c *compiler) podSecurity(v *kyverno.Validation, path string) *podsecurity.Checker {
	r, err := podsecurity.Compile(v.PodSecurity, path+".podSecurity")
	c.add(err, engine.CodeInvalidPolicy, path+".podSecurity")
	return r
}
