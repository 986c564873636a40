package eval

import (
	"github.com/verdict-policy/verdict/engine/match"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// validatingPolicy appends the results of a ValidatingPolicy or
// NamespacedValidatingPolicy (engine/vpol): one per variant (the policy,
// its autogen variants) that matches, with Kyverno's rule names ("" for
// the validations, "exception", "evaluation", "match") and Kyverno's
// messages. Enforce is set when spec.validationActions holds Deny; a fail
// of a policy annotated policies.kyverno.io/scored: "false" is a warn.
func (ev *evaluation) validatingPolicy(p *policy.Policy, out []RuleResult) []RuleResult {
	in := ev.vpolInput()
	for _, r := range p.Validating.Evaluate(ev.ctx, in, ev.req.CELExceptions) {
		res := celResult(p, &r, RuleValidation, "")
		res.Enforce = p.Action == policy.Enforce
		if !p.Scored && res.Status == StatusFail {
			res.Status = StatusWarn
		}
		out = append(out, res)
	}
	return out
}

// subject is what the CEL views of the request show for object, the
// current object: on a request without one (DELETE) a nil object and the
// old resource.
func (ev *evaluation) subject(object map[string]any) (map[string]any, match.Resource) {
	if len(object) > 0 {
		return object, ev.res
	}
	if ev.oldRes != nil {
		return nil, *ev.oldRes
	}
	return nil, ev.res
}

// celResult is the RuleResult of r, a result of p (a policies.kyverno.io
// policy), as a rule of type typ at path.
func celResult(p *policy.Policy, r *vpol.Result, typ RuleType, path string) RuleResult {
	res := RuleResult{
		Policy:     p.Name(),
		Rule:       r.Rule,
		Type:       typ,
		Status:     Status(r.Status),
		Message:    r.Message,
		Scored:     p.Scored,
		Category:   p.Category,
		Severity:   p.Severity,
		Properties: r.Properties,
		Path:       path,
	}
	if p.Namespaced() {
		res.PolicyNamespace = p.Namespace()
	}
	return res
}

// vpolInput returns the request as ValidatingPolicies see it, built on
// first use and again when the mutate phase changed the object. The
// request's Namespace object is Request.NamespaceObject, or the one Lookup
// gives; without one namespaceObject is null, as in Kyverno.
func (ev *evaluation) vpolInput() *vpol.Input {
	object := ev.object()
	if ev.vpIn != nil && sameMap(ev.vpObject, object) {
		return ev.vpIn
	}
	ev.vpObject = object
	object, res := ev.subject(object)
	req := ev.req
	r := vpol.Request{
		Group: res.Group, Version: res.Version, Kind: res.Kind,
		Resource:        req.Resource,
		ResourceGroup:   req.ResourceGroup,
		ResourceVersion: req.ResourceVersion,
		Subresource:     req.Subresource,
		Name:            res.Name,
		Namespace:       res.Namespace,
		Operation:       ev.operation,
		UserInfo: vpol.UserInfo{
			Username: req.UserInfo.Username,
			UID:      req.UserInfo.UID,
			Groups:   req.UserInfo.Groups,
			Extra:    req.UserInfo.Extra,
		},
		DryRun:          req.DryRun,
		Object:          object,
		OldObject:       req.OldObject,
		NamespaceObject: req.NamespaceObject,
		NamespaceLabels: req.NamespaceLabels,
		Sources:         ev.e.celData,
		ApplyTypes:      ev.e.applyTypes,
		Now:             ev.e.now(),
	}
	if r.NamespaceObject == nil && r.Namespace != "" {
		if ns, err := ev.e.lookup.Namespace(ev.ctx, r.Namespace); err == nil {
			r.NamespaceObject = ns
		}
	}
	ev.vpIn = vpol.NewInput(r)
	return ev.vpIn
}
