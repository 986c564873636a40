package vap

import (
	"context"
	"errors"
	"fmt"

	"github.com/verdict-policy/verdict/engine/vpol"
)

// Status is the result of a policy on a resource, as for a
// ValidatingPolicy.
type Status = vpol.Status

// The results of a ValidatingAdmissionPolicy.
const (
	StatusPass  = vpol.StatusPass
	StatusFail  = vpol.StatusFail
	StatusError = vpol.StatusError
	StatusSkip  = vpol.StatusSkip
)

// MessageNoMatch is Kyverno's message for a policy whose match conditions
// do not hold.
const MessageNoMatch = "match conditions aren't met"

// Result is what a policy decided for a resource: Kyverno's one rule
// response, named after the policy.
type Result struct {
	Status  Status
	Message string
	// Binding is the name of the binding the result was evaluated for
	// ("" for a policy without bindings).
	Binding string
}

// ParamsFunc returns the params objects of a binding's paramRef for a
// policy's paramKind, as the host finds them; namespace is the resource's
// namespace ("" for a cluster-scoped resource or a Namespace), where a
// namespaced paramKind is looked up when ref.Namespace is empty.
type ParamsFunc func(ctx context.Context, kind *ParamKind, b *Binding, namespace string) ([]map[string]any, error)

// Options of an evaluation.
type Options struct {
	// CLI evaluates as Kyverno's CLI does (processVAPWithoutClient)
	// rather than as Kyverno's background scans (processVAPWithClient):
	//
	//   - a policy with bindings is not matched against its own
	//     matchConstraints, only against each binding's matchResources;
	//   - params: the first object Params returns (the CLI's host returns
	//     those that match paramRef), or, for a paramRef with a selector,
	//     a list of all of them, even one; none gives params null, whatever
	//     parameterNotFoundAction says.
	//
	// In a background scan, a binding's params are the object Params
	// returns, or a list when it returns several; none fails the binding
	// with parameterNotFoundAction: Deny ("no params found") and skips it
	// otherwise (Kubernetes' behaviour: Kyverno stops there); an error of
	// Params is an error result.
	CLI bool
	// Params finds params objects. nil: none are found. Outside Kyverno's
	// CLI their whole numbers are made ints, as for the object (NewInput).
	Params ParamsFunc
}

// Evaluate runs the policy on a request as Kyverno does
// (pkg/admissionpolicy.Validate): without bindings (those that name the
// policy), when its matchConstraints match; with bindings, once per
// binding whose matchResources match (a binding without matchResources
// matches everything its policy does), with that binding's params, the
// last one evaluated giving the result. ok is false when nothing was
// evaluated (the resource is not matched). A result is skip when the
// match conditions do not hold ("match conditions aren't met"), error
// with the message of the first validation that errored, fail with the
// message of the first that is false (its messageExpression's, its
// message, or "failed expression: <expression>"), pass otherwise, with an
// empty message. Bindings' validationActions do not change it. It never
// fails: problems are error results.
func (p *Policy) Evaluate(ctx context.Context, in *Input, bindings []*Binding) (r Result, ok bool) {
	opts := in.opts
	var own []*Binding
	for _, b := range bindings {
		if b.PolicyName() == p.Name() {
			own = append(own, b)
		}
	}
	if len(own) == 0 || !opts.CLI {
		matched, err := p.match.Matches(in.match)
		if err != nil {
			return Result{Status: StatusError, Message: "failed to match: " + err.Error()}, true
		}
		if !matched {
			return Result{}, false
		}
	}
	if len(own) == 0 {
		return p.validate(ctx, in, nil), true
	}
	for _, b := range own {
		if ctx.Err() != nil {
			break
		}
		if b.match != nil {
			matched, err := b.match.Matches(in.match)
			if err != nil || !matched {
				// Kyverno skips a binding whose selectors do not parse.
				continue
			}
		}
		var params map[string]any
		if b.ParamRef != nil && p.ParamKind != nil {
			var err error
			var found bool
			params, found, err = p.params(ctx, in, b, opts)
			if err != nil {
				return Result{Status: StatusError, Message: err.Error(), Binding: b.Name()}, true
			}
			if !found {
				continue
			}
		}
		r, ok = p.validate(ctx, in, params), true
		r.Binding = b.Name()
	}
	return r, ok
}

// params returns the params of a binding (see Options). found is false
// when the binding is not evaluated.
func (p *Policy) params(ctx context.Context, in *Input, b *Binding, opts Options) (params map[string]any, found bool, err error) {
	var objs []map[string]any
	if opts.Params != nil {
		if objs, err = opts.Params(ctx, p.ParamKind, b, in.namespace); err != nil {
			return nil, false, fmt.Errorf("failed to collect params of binding %s: %w", b.Name(), err)
		}
	}
	ref := b.ParamRef
	switch {
	case opts.CLI && ref.LabelSelector != nil:
		if len(objs) == 0 {
			return nil, true, nil
		}
		return paramList(objs, false), true, nil
	case opts.CLI:
		if len(objs) == 0 {
			return nil, true, nil
		}
		return objs[0], true, nil
	case len(objs) == 0 && ref.DenyNotFound:
		return nil, false, errors.New("no params found")
	case len(objs) == 0:
		return nil, false, nil
	case len(objs) == 1:
		return normalized(objs[0]), true, nil
	}
	return paramList(objs, true), true, nil
}

// paramList is a list of params as Kubernetes converts an
// UnstructuredList for CEL: {"items": [...]}, normalized or not.
func paramList(objs []map[string]any, normalize bool) map[string]any {
	items := make([]any, len(objs))
	for i, o := range objs {
		if normalize {
			items[i] = normalized(o)
		} else {
			items[i] = o
		}
	}
	return map[string]any{"items": items}
}

// normalized is a params object with its numbers as Kubernetes decodes
// JSON (whole numbers int64).
func normalized(o map[string]any) map[string]any {
	n, _ := vpol.Normalize(o).(map[string]any)
	return n
}

// validate is Kyverno's validateResource: Kubernetes' validator with the
// policy's failure policy, its decisions read in order.
func (p *Policy) validate(ctx context.Context, in *Input, params map[string]any) Result {
	decisions, matched := p.rule.Validate(ctx, in.cel, params, p.FailurePolicyIgnore)
	if !matched {
		return Result{Status: StatusSkip, Message: MessageNoMatch}
	}
	for _, d := range decisions {
		switch {
		case d.Error:
			return Result{Status: StatusError, Message: d.Message}
		case d.Deny:
			return Result{Status: StatusFail, Message: d.Message}
		}
	}
	return Result{Status: StatusPass}
}
