package eval

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/match"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/vpol"
)

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
		nsLabels = kyverno.MetadataStrings(mapOf(req.NamespaceObject), "labels")
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
