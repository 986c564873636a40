package eval

import (
	"context"

	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vap"
)

// PropertyBinding is the property of a ValidatingAdmissionPolicy's result
// that names the binding it was evaluated for, as in Kyverno's reports.
const PropertyBinding = "binding"

// admissionPolicy appends the result of a Kubernetes
// ValidatingAdmissionPolicy (engine/vap) with the request's
// ValidatingAdmissionPolicyBindings, as Kyverno's CLI (Options.KyvernoCLI)
// or its background scans evaluate it: at most one result, its rule named
// after the policy, with the binding as property. Nothing is evaluated for
// a request without object (a DELETE). A fail of a policy annotated
// policies.kyverno.io/scored: "false" is a warn; nothing is Enforce:
// Kubernetes enforces these policies itself.
func (ev *evaluation) admissionPolicy(p *policy.Policy, out []RuleResult) []RuleResult {
	in := ev.vapInput()
	if in == nil {
		return out
	}
	res := RuleResult{
		Policy:   p.Name(),
		Rule:     p.Name(),
		Type:     RuleValidation,
		Scored:   p.Scored,
		Category: p.Category,
		Severity: p.Severity,
	}
	if err := ev.budget.Poll(); err != nil {
		res.Status, res.Message = StatusError, err.Error()
		return append(out, res)
	}
	r, ok := p.VAP.Evaluate(ev.ctx, in, ev.req.VAPBindings)
	if !ok {
		return out
	}
	res.Status, res.Message = Status(r.Status), r.Message
	if r.Binding != "" {
		res.Properties = map[string]string{PropertyBinding: r.Binding}
	}
	if !p.Scored && res.Status == StatusFail {
		res.Status = StatusWarn
	}
	return append(out, res)
}

// vapInput returns the resource as ValidatingAdmissionPolicies see it,
// built on first use and again when the mutate phase changed the object;
// nil for a request without object. The Namespace object is, outside
// Kyverno's CLI, Request.NamespaceObject or the one Lookup gives.
func (ev *evaluation) vapInput() *vap.Input {
	object := ev.object()
	if len(object) == 0 {
		return nil
	}
	if ev.vapIn != nil && sameMap(ev.vapObject, object) {
		return ev.vapIn
	}
	ev.vapObject = object
	req := ev.req
	r := vap.Request{
		Group: ev.res.Group, Version: ev.res.Version, Kind: ev.res.Kind,
		Resource:  req.Resource,
		Name:      ev.res.Name,
		Namespace: ev.res.Namespace,
		UserInfo: vap.UserInfo{
			Username: req.UserInfo.Username,
			UID:      req.UserInfo.UID,
			Groups:   req.UserInfo.Groups,
			Extra:    req.UserInfo.Extra,
		},
		Object:          object,
		NamespaceLabels: req.NamespaceLabels,
	}
	if !ev.e.kyvernoCLI && r.Namespace != "" {
		r.NamespaceObject = req.NamespaceObject
		if r.NamespaceObject == nil {
			if ns, err := ev.e.lookup.Namespace(ev.ctx, r.Namespace); err == nil {
				r.NamespaceObject = ns
			}
		}
	}
	ev.vapIn = vap.NewInput(r, vap.Options{CLI: ev.e.kyvernoCLI, Params: ev.vapParams})
	return ev.vapIn
}

// vapParams finds the params of a binding through Lookup.Params.
func (ev *evaluation) vapParams(ctx context.Context, kind *vap.ParamKind, b *vap.Binding, namespace string) ([]map[string]any, error) {
	ref := b.ParamRef
	q := ParamQuery{
		APIVersion:       kind.APIVersion,
		Kind:             kind.Kind,
		Name:             ref.Name,
		Namespace:        ref.Namespace,
		RequestNamespace: namespace,
		Selector:         ref.Selector,
		Binding:          b.Name(),
	}
	if ref.Selector != nil {
		q.Name = ""
	}
	if !ev.e.kyvernoCLI && q.Name == "" && q.Selector == nil {
		return nil, nil
	}
	return ev.e.lookup.Params(ctx, q)
}
