package vpol

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/verdict-policy/verdict/engine/kyvernocel"
)

// Status is the result of a policy on a resource.
type Status string

// The results of a ValidatingPolicy.
const (
	StatusPass  Status = "pass"
	StatusFail  Status = "fail"
	StatusError Status = "error"
	StatusSkip  Status = "skip"
)

// Rule names of results, as Kyverno names them: a ValidatingPolicy has no
// rules, so its results have the empty name, except these.
const (
	// RuleException is the result of a PolicyException that exempts the
	// resource.
	RuleException = "exception"
	// RuleEvaluation is the error of a match condition (of the policy or
	// of an exception) or of an audit annotation after the validations
	// passed.
	RuleEvaluation = "evaluation"
	// RuleMatch is the error of matchConstraints (a selector that does not
	// parse).
	RuleMatch = "match"
)

// PropertyValidationIndex is the property that holds the index of the
// validation that failed or errored.
const PropertyValidationIndex = "cel.validationIndex"

// Result is what a policy (one of its variants) decided for a resource.
type Result struct {
	// Rule is "" or one of RuleException, RuleEvaluation, RuleMatch.
	Rule    string
	Status  Status
	Message string
	// Properties are the audit annotations, and PropertyValidationIndex
	// on a fail or error of a validation.
	Properties map[string]string
	// Exceptions are the keys of the exceptions that applied.
	Exceptions []string
	// Autogen is the variant that gave the result ("" for the policy as
	// written).
	Autogen string
}

// Evaluate runs the policy on a request: each variant whose
// matchConstraints match (every variant in JSON mode) gives one result,
// as Kyverno's vpol engine does. exceptions are the PolicyExceptions in
// force; those that name the policy and have not expired apply. It never
// fails: problems are error results. in is used by one goroutine at a
// time; the Policy by any number.
func (p *Policy) Evaluate(ctx context.Context, in *Input, exceptions []*Exception) []Result {
	var excs []*Exception
	for _, e := range exceptions {
		if e.AppliesTo(p.Kind(), p.Name()) && !e.Expired(in.req.Now) {
			excs = append(excs, e)
		}
	}
	var out []Result
	for _, v := range p.variants {
		if ctx.Err() != nil {
			break
		}
		if p.Mode != ModeJSON {
			ok, err := v.match.matches(in)
			if err != nil {
				out = append(out, Result{Rule: RuleMatch, Status: StatusError, Message: "failed to execute matching: " + err.Error(), Autogen: v.Autogen})
				continue
			}
			if !ok {
				continue
			}
		}
		r := p.evaluate(ctx, v, in, excs)
		r.Autogen = v.Autogen
		out = append(out, r)
	}
	return out
}

// run is the evaluation of one variant on an Input: its activation and
// its variables, kept by the Input and reset for each variant, so that
// the policies evaluated on a request share them instead of allocating
// them.
type run struct {
	ctx       context.Context
	act       kyvernocel.Activation
	vars      kyvernocel.Variables
	variables []*expr
}

// newRun returns the Input's run, reset for an evaluation with ctx.
func (in *Input) newRun(ctx context.Context) *run {
	r := &in.run
	r.ctx, r.variables = ctx, nil
	r.act.Reset(in.libraries(ctx), in.req.Now)
	return r
}

// EvalVariable evaluates the variable of declaration i, as Kyverno's
// lazy variables do: a value, or the error as a value.
func (r *run) EvalVariable(i int) ref.Val {
	out, _, err := r.variables[i].prog.ContextEval(r.ctx, &r.act)
	if out != nil {
		return out
	}
	if err != nil {
		return types.WrapErr(err)
	}
	return nil
}

// evaluate is Kyverno's evaluateWithData for one variant.
func (p *Policy) evaluate(ctx context.Context, v *Variant, in *Input, excs []*Exception) Result {
	r := in.newRun(ctx)
	act := &r.act
	act.SetPolicy(&p.ref)
	if p.Mode == ModeJSON {
		act.Object = in.json
	} else {
		act.Object, act.OldObject, act.NamespaceObject = in.object, in.oldObject, in.namespaceObject
		act.RequestFunc = in.requestFunc
	}

	// Exceptions first: one that matches and allows nothing in particular
	// exempts the resource; the others hand their images and values to
	// the expressions.
	var allowedImages, allowedValues []string
	var matched []*Exception
	exempt := false
	for _, e := range excs {
		ok, err := MatchConditions(ctx, act, e.matchConditions, p.FailurePolicyIgnore)
		if err != nil {
			if exempt {
				continue
			}
			return evaluationError(err)
		}
		if !ok {
			continue
		}
		matched = append(matched, e)
		if e.exempts() {
			exempt = true
		} else if !exempt {
			allowedImages = append(allowedImages, e.doc.Spec.Images...)
			allowedValues = append(allowedValues, e.doc.Spec.AllowedValues...)
		}
	}
	if exempt {
		return exceptionResult(matched)
	}
	act.SetExceptions(allowedImages, allowedValues)

	ok, err := MatchConditions(ctx, act, v.matchConditions, p.FailurePolicyIgnore)
	if err != nil {
		return evaluationError(err)
	}
	if !ok {
		return Result{Status: StatusSkip, Message: "skip"}
	}

	r.variables = v.variables
	r.vars.Reset(v.varNames, r)
	act.Variables = &r.vars

	for i, val := range v.validations {
		out, _, err := val.prog.ContextEval(ctx, act)
		if err != nil {
			return validationError(i, err)
		}
		b, err := out.ConvertToNative(reflect.TypeFor[bool]())
		if err != nil {
			return validationError(i, err)
		}
		if b.(bool) {
			continue
		}
		msg := val.message
		if val.messageExpr != nil {
			mo, _, err := val.messageExpr.ContextEval(ctx, act)
			if err != nil {
				msg = fmt.Sprintf("failed to evaluate message expression: %s", err)
			} else if s, err := mo.ConvertToNative(reflect.TypeFor[string]()); err != nil {
				msg = fmt.Sprintf("failed to convert message expression to string: %s", err)
			} else {
				msg = s.(string)
			}
		}
		if msg == "" {
			msg = fmt.Sprintf("CEL expression validation failed at index %d", i)
		}
		props, _, err := v.auditAnnots.Eval(ctx, act, KeySingleQuoted)
		if err != nil {
			return validationError(i, err)
		}
		if props == nil {
			props = map[string]string{}
		}
		props[PropertyValidationIndex] = strconv.Itoa(i)
		return Result{Status: StatusFail, Message: msg, Properties: props}
	}
	props, _, err := v.auditAnnots.Eval(ctx, act, KeySingleQuoted)
	if err != nil {
		return evaluationError(err)
	}
	return Result{Status: StatusPass, Message: "success", Properties: props}
}

// MatchConditions is the match of Kyverno's CEL policies (its vpol,
// ivpol, mpol and gpol compilers' match): any false condition is false;
// otherwise the errors (of a condition that fails, or of one whose value
// is not a bool, in CEL's conversion words) are returned joined with
// "; " as multierr joins them, or make it false when ignore (failurePolicy
// Ignore; mpol and gpol have none). The other kinds of the group use it.
func MatchConditions(ctx context.Context, act *kyvernocel.Activation, conds []cel.Program, ignore bool) (bool, error) {
	var errs []string
	for _, c := range conds {
		out, _, err := c.ContextEval(ctx, act)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		b, err := out.ConvertToNative(reflect.TypeFor[bool]())
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if !b.(bool) {
			return false, nil
		}
	}
	switch {
	case len(errs) == 0:
		return true, nil
	case ignore:
		return false, nil
	}
	return false, errors.New(strings.Join(errs, "; "))
}

// The ways Kyverno's CEL policies quote the key of an audit annotation in
// their errors (AuditAnnotations.Eval): '%s' in its vpol and ivpol code,
// %q in its mpol and gpol code.
const (
	KeySingleQuoted = "'%s'"
	KeyGoQuoted     = "%q"
)

// AuditAnnotations are the compiled audit annotations of a policy of the
// group: Keys[i] is the key of Progs[i].
type AuditAnnotations struct {
	Keys  []string
	Progs []cel.Program
}

// Add appends the annotation key with its program.
func (a *AuditAnnotations) Add(key string, prog cel.Program) {
	a.Keys, a.Progs = append(a.Keys, key), append(a.Progs, prog)
}

// Eval evaluates the annotations as Kyverno's CEL policies do: a
// non-empty string is kept, an empty one dropped, anything else (null
// too) is an error naming the key as keyFormat quotes it
// (KeySingleQuoted or KeyGoQuoted). It returns nil without annotations,
// and the index of the annotation that failed with its error.
func (a *AuditAnnotations) Eval(ctx context.Context, act *kyvernocel.Activation, keyFormat string) (map[string]string, int, error) {
	if len(a.Progs) == 0 {
		return nil, 0, nil
	}
	out := make(map[string]string, len(a.Progs))
	for i, prog := range a.Progs {
		val, _, err := prog.ContextEval(ctx, act)
		if err != nil {
			return nil, i, fmt.Errorf("failed to evaluate auditAnnotation %s: %w", fmt.Sprintf(keyFormat, a.Keys[i]), err)
		}
		s, err := val.ConvertToNative(reflect.TypeFor[string]())
		if err != nil {
			return nil, i, fmt.Errorf("failed to convert auditAnnotation %s expression: %w", fmt.Sprintf(keyFormat, a.Keys[i]), err)
		}
		if s.(string) != "" {
			out[a.Keys[i]] = s.(string)
		}
	}
	return out, 0, nil
}

func evaluationError(err error) Result {
	return Result{Rule: RuleEvaluation, Status: StatusError, Message: "failed to load context: " + err.Error()}
}

func validationError(i int, err error) Result {
	return Result{Status: StatusError, Message: "error: " + err.Error(), Properties: map[string]string{PropertyValidationIndex: strconv.Itoa(i)}}
}

// exceptionResult is the result of a resource exempted by exceptions: the
// reportResult of the one with the highest priority (the first without
// priorities) decides between skip (default) and pass.
func exceptionResult(matched []*Exception) Result {
	keys := make([]string, len(matched))
	selected, highest := 0, 0
	for i, e := range matched {
		keys[i] = e.Key
		if e.priority > highest {
			highest, selected = e.priority, i
		}
	}
	r := Result{Rule: RuleException, Status: StatusSkip, Exceptions: keys}
	verb := "skipped"
	if matched[selected].doc.Spec.ReportResult == string(StatusPass) {
		r.Status, verb = StatusPass, "passed"
	}
	r.Message = fmt.Sprintf("rule is %s due to policy exception: %s", verb, strings.Join(keys, ", "))
	return r
}
