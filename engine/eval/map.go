package eval

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/match"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// mutatingAdmissionPolicies runs the MutatingAdmissionPolicies
// (engine/mpol) on obj, in order, before the MutatingPolicies, as
// Kyverno's CLI does: each with its bindings, on the object the ones
// before it left, its params read through Lookup.Params. A policy's
// result has type Mutation and the policy's name as rule name;
// Response.Mutations holds the object after it. It returns the object
// after all of them.
func (ev *evaluation) mutatingAdmissionPolicies(policies []*policy.Policy, obj map[string]any, resp *Response) map[string]any {
	var in *vpol.Input
	for _, p := range policies {
		if p.MutatingAdmission == nil || !ev.admits(p) {
			continue
		}
		if ev.ctx.Err() != nil || ev.budget.Poll() != nil {
			break
		}
		if in == nil {
			in = ev.vpolInput()
		}
		r, out := p.MutatingAdmission.Evaluate(ev.ctx, ev.admissionRequest(in.WithObject(obj), obj))
		if r != nil {
			resp.Results = append(resp.Results, RuleResult{
				Policy: p.Name(), Rule: r.Rule, Type: RuleMutation, Status: Status(r.Status), Message: r.Message,
				Scored: p.Scored, Category: p.Category, Severity: p.Severity, Path: r.Path,
			})
		}
		obj = out
		resp.Mutations = append(resp.Mutations, Mutation{Policy: p.Name(), Object: obj})
	}
	return obj
}

// admissionRequest describes the request to a MutatingAdmissionPolicy.
func (ev *evaluation) admissionRequest(in *vpol.Input, obj map[string]any) *mpol.AdmissionRequest {
	req, res := ev.req, ev.res
	gvk := schema.GroupVersionKind{Group: res.Group, Version: res.Version, Kind: res.Kind}
	resource := req.Resource
	if resource == "" {
		gvr, _ := meta.UnsafeGuessKindToResource(gvk)
		resource = gvr.Resource
	}
	nsLabels := req.NamespaceLabels
	if nsLabels == nil && req.NamespaceObject != nil {
		nsLabels = stringMap(mapOf(mapOf(req.NamespaceObject)["metadata"])["labels"])
	}
	return &mpol.AdmissionRequest{
		In: in, Object: obj, OldObject: req.OldObject,
		Kind: gvk, Resource: resource, Subresource: req.Subresource,
		Namespace: res.Namespace, Name: res.Name, Operation: ev.operation, DryRun: req.DryRun,
		UserInfo:        vpol.UserInfo{Username: req.UserInfo.Username, UID: req.UserInfo.UID, Groups: req.UserInfo.Groups, Extra: req.UserInfo.Extra},
		NamespaceLabels: nsLabels,
		Params:          ev.admissionParams,
	}
}

// admissionParams reads the params of a binding's paramRef through
// Lookup.Params.
func (ev *evaluation) admissionParams(binding string, kind *admissionregistrationv1.ParamKind, ref *admissionregistrationv1.ParamRef) ([]map[string]any, error) {
	q := ParamQuery{Name: ref.Name, Namespace: ref.Namespace, RequestNamespace: ev.celNamespace(), Binding: binding}
	if kind != nil {
		q.APIVersion, q.Kind = kind.APIVersion, kind.Kind
	}
	if s := ref.Selector; s != nil {
		ls := &kyverno.LabelSelector{MatchLabels: s.MatchLabels}
		for _, e := range s.MatchExpressions {
			ls.MatchExpressions = append(ls.MatchExpressions, kyverno.LabelSelectorRequirement{Key: e.Key, Operator: string(e.Operator), Values: e.Values})
		}
		sel, err := match.CompileSelector(ls, "paramRef.selector")
		if err != nil {
			return nil, err
		}
		q.Selector = sel
	}
	return ev.e.lookup.Params(ev.ctx, q)
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
