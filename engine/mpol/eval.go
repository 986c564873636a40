package mpol

import (
	"context"

	"github.com/google/cel-go/cel"

	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// Result is what a policy (one of its variants) decided for a resource,
// with Kyverno's rule names and statuses (a MutatingPolicy has no rules):
// "" pass ("success") when the variant ran its mutations, "" skip
// ("skip") when a match condition did not hold, vpol.RuleEvaluation
// error when an expression or a patch failed, vpol.RuleMatch error when
// the constraints could not be matched, vpol.RuleException skip or pass
// when an exception exempted the resource. Properties are the audit
// annotations of a pass.
type Result struct {
	vpol.Result
	// Path is the field of the variant that failed, for an evaluation
	// error ("spec.mutations[1].jsonPatch.expression", prefixed with
	// "autogen[<configuration>]." for an autogen variant): Kyverno's
	// message does not say.
	Path string
}

// Outcome is the evaluation of a policy: a result per variant that
// matched, and the object after the policy (the object given when no
// mutation changed it, or when none ran).
type Outcome struct {
	Results []Result
	Object  map[string]any
}

// MessageEvaluation prefixes the message of an evaluation error, as
// Kyverno words it.
const MessageEvaluation = "failed to evaluate policy: "

// Evaluate runs the policy on a request whose object is obj (the object
// as the mutations before this policy left it; in's object is the object
// admitted, which request.object keeps): each variant whose
// matchConstraints match gives one result and mutates the object the
// variants after it see, as Kyverno's mpol engine does. exceptions are
// the policies.kyverno.io PolicyExceptions in force; those that name the
// policy and have not expired apply. A variant that fails changes
// nothing: its mutations are applied to a copy, kept only when all of
// them applied. It never fails: problems are error results. in is used by
// one goroutine at a time; the Policy by any number.
func (p *Policy) Evaluate(ctx context.Context, in *vpol.Input, obj map[string]any, exceptions []*vpol.Exception) Outcome {
	var excs []*vpol.Exception
	for _, e := range exceptions {
		if e.AppliesTo(p.Kind, p.Name) && !e.Expired(in.Now()) {
			excs = append(excs, e)
		}
	}
	out := Outcome{Object: obj}
	cur := in
	if obj != nil {
		cur = in.WithObject(obj)
	}
	for _, v := range p.variants {
		if ctx.Err() != nil {
			break
		}
		ok, err := v.match.Matches(cur)
		if err != nil {
			r := vpol.Result{Rule: vpol.RuleMatch, Status: vpol.StatusError, Message: "failed to execute matching: " + err.Error(), Autogen: v.Autogen}
			out.Results = append(out.Results, Result{Result: r, Path: "spec.matchConstraints"})
			continue
		}
		if !ok {
			continue
		}
		r, patched := p.evaluate(ctx, v, cur, out.Object, excs)
		r.Autogen = v.Autogen
		out.Results = append(out.Results, r)
		if patched != nil {
			out.Object = patched
			cur = in.WithObject(patched)
		}
	}
	return out
}

// evaluate is Kyverno's mpol Policy.evaluate for one variant: the
// exceptions, the variables and match conditions, the mutations in order
// (each sees the object as the one before it left it), then the audit
// annotations. It returns the patched object: nil unless every mutation
// applied.
func (p *Policy) evaluate(ctx context.Context, v *Variant, in *vpol.Input, obj map[string]any, excs []*vpol.Exception) (Result, map[string]any) {
	return v.run(ctx, in.Activation(ctx), in.ApplyTypes(), obj, excs, v.matchConditions, "spec.matchConditions", v.prefix)
}

// run evaluates v on obj once it matched: the exceptions, the variables
// (bound before the conditions, which may read them: Kyverno's mpol;
// Kubernetes' MAPs bind them after), conds (at condPath), the mutations in
// order (each sees the object as the one before it left it), then the
// audit annotations. The path of an error starts with prefix. It returns
// the patched object: nil unless every mutation applied.
func (v *Variant) run(ctx context.Context, act *kyvernocel.Activation, types vpol.ApplyTypes, obj map[string]any, excs []*vpol.Exception, conds []cel.Program, condPath, prefix string) (Result, map[string]any) {
	fail := func(path string, err error) (Result, map[string]any) {
		r := vpol.Result{Rule: vpol.RuleEvaluation, Status: vpol.StatusError, Message: MessageEvaluation + err.Error()}
		return Result{Result: r, Path: prefix + path}, nil
	}
	if r, err := exempt(ctx, act, excs); err != nil {
		return fail("spec.matchConditions", err) // of an exception
	} else if r != nil {
		return Result{Result: *r}, nil
	}
	act.Variables = kyvernocel.NewVariables()
	for _, e := range v.variables {
		act.BindVariable(ctx, e.name, e.prog)
	}
	if ok, err := vpol.MatchConditions(ctx, act, conds, false); err != nil {
		return fail(condPath, err)
	} else if !ok {
		return Result{Result: vpol.Result{Status: vpol.StatusSkip, Message: "skip"}}, nil
	}
	for _, m := range v.mutations {
		patched, err := m.apply(ctx, act, obj, types)
		if err != nil {
			return fail(m.path, err)
		}
		obj = patched
		act.Object = obj
	}
	props, _, err := v.auditAnnots.Eval(ctx, act, vpol.KeyGoQuoted)
	if err != nil {
		return fail("spec.auditAnnotations", err)
	}
	return Result{Result: vpol.Result{Status: vpol.StatusPass, Message: "success", Properties: props}}, obj
}

// exempt applies the exceptions as Kyverno's CEL policies do: one that
// matches and allows nothing in particular exempts the resource (the
// result is returned); the others hand their images and values to the
// expressions (`exceptions`). An exception whose match conditions fail is
// an error, unless an exception before it exempted the resource.
func exempt(ctx context.Context, act *kyvernocel.Activation, excs []*vpol.Exception) (*vpol.Result, error) {
	var images, values []string
	var matched []*vpol.Exception
	full := false
	for _, e := range excs {
		ok, err := e.Matches(ctx, act)
		switch {
		case err != nil && full:
			continue
		case err != nil:
			return nil, err
		case !ok:
			continue
		}
		matched = append(matched, e)
		if e.Exempts() {
			full = true
		} else if !full {
			spec := &e.Document().Spec
			images, values = append(images, spec.Images...), append(values, spec.AllowedValues...)
		}
	}
	if full {
		r := vpol.ExceptionResult(matched)
		return &r, nil
	}
	act.SetExceptions(images, values)
	return nil, nil
}

// The hook below gives the other kinds of the group (engine/gpol) this
// package's exception step.

// Exempt applies the exceptions as Kyverno's CEL policies do (see
// exempt): the result of a resource they exempt, or nil after handing
// the images and values of the others to the expressions.
func Exempt(ctx context.Context, act *kyvernocel.Activation, excs []*vpol.Exception) (*vpol.Result, error) {
	return exempt(ctx, act, excs)
}
