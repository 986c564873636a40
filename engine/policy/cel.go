package policy

import (
	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/celrule"
	"github.com/verdict-policy/verdict/engine/kyverno"
)

// cel compiles a validate.cel rule. As in Kyverno, such a rule may not have
// context entries; its validate.message is the message of expressions
// that have none.
func (c *compiler) cel(raw *kyverno.Rule, rulePath, path string) *celrule.Rule {
	v := raw.Validate
	if len(raw.Context) > 0 {
		c.errorf(engine.CodeInvalidPolicy, rulePath+".context", "context variables are not supported for CEL expressions in validate rules")
	}
	r, err := celrule.Compile(celrule.Spec{Preconditions: raw.CELPreconditions, CEL: v.CEL, Message: v.Message, Deferred: c.opts.DeferCEL}, path+".cel")
	c.add(err, engine.CodeInvalidPolicy, path+".cel")
	return r
}

// celPreconditionsOutsideCEL rejects celPreconditions on a validate rule
// that is not a validate.cel rule, as Kyverno does.
func (c *compiler) celPreconditionsOutsideCEL(raw *kyverno.Rule, path string) {
	if raw.Validate != nil && raw.Validate.CEL == nil && raw.CELPreconditions != nil {
		c.errorf(engine.CodeInvalidPolicy, path+".celPreconditions", "celPrecondition can only be used with validate.cel")
	}
}
