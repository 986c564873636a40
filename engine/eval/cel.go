package eval

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/celrule"
	"github.com/verdict-policy/verdict/engine/match"
	"github.com/verdict-policy/verdict/engine/policy"
)

// ParamQuery asks the host for the params resources of a validate.cel rule
// (paramKind and paramRef), as Kyverno's CollectParams does.
type ParamQuery struct {
	// APIVersion and Kind are paramKind.
	APIVersion, Kind string
	// Name is paramRef.name. When it is empty, Selector selects the
	// resources by their labels.
	Name     string
	Selector *match.Selector
	// Namespace is paramRef.namespace. For a namespaced kind, an empty
	// Namespace means RequestNamespace, the namespace of the resource
	// under evaluation; a namespaced kind with neither, and a
	// cluster-scoped kind with a Namespace, are errors. Cluster-scoped
	// kinds ignore RequestNamespace.
	Namespace, RequestNamespace string
	// Binding is the ValidatingAdmissionPolicyBinding or
	// MutatingAdmissionPolicyBinding whose paramRef this is ("" for a
	// validate.cel rule). Kyverno's CLI finds the params of a binding
	// otherwise than those of validate.cel: by selector, else by name,
	// else by namespace, whatever their kind (Options.KyvernoCLI). A
	// cluster reads them as for the other rules.
	Binding string
}

// celRule evaluates a validate.cel rule, as Kyverno's validateCELHandler
// does once preconditions and exceptions are passed.
func (ev *evaluation) celRule(r *policy.Rule) *outcome {
	in, err := ev.celInput()
	if err != nil {
		return ruleError("Error getting the resource's namespace", err)
	}
	var params []map[string]any
	if p := r.CEL.Params; p != nil {
		var err error
		if params, err = ev.celParams(p); err != nil {
			return ruleError("error in parameterized resource", err)
		}
	}
	o := r.CEL.Evaluate(ev.ctx, in, params)
	switch o.Status {
	case celrule.Fail:
		return fail(o.Message)
	case celrule.Skip:
		return skip(o.Message)
	}
	return pass(fmt.Sprintf("Validation rule '%s' passed.", r.Name))
}

// celInput returns the CEL view of the request, built on first use. The
// request's Namespace object comes from Lookup; a host without one
// (ErrUndefined, engine.ErrNotFound) gives CEL a Namespace with only its name, as
// Kyverno's CLI does.
func (ev *evaluation) celInput() (*celrule.Input, error) {
	object := ev.object()
	if (ev.cel != nil || ev.celErr != nil) && sameMap(ev.celObject, object) {
		return ev.cel, ev.celErr
	}
	ev.celObject = object
	object, res := ev.subject(object)
	req := celrule.Request{
		Group: res.Group, Version: res.Version, Kind: res.Kind,
		Name: res.Name, Namespace: res.Namespace,
		Operation: ev.operation,
		User: celrule.UserInfo{
			Username: ev.req.UserInfo.Username,
			UID:      ev.req.UserInfo.UID,
			Groups:   ev.req.UserInfo.Groups,
			Extra:    ev.req.UserInfo.Extra,
		},
	}
	var ns map[string]any
	if req.Namespace != "" {
		var err error
		ns, err = ev.e.lookup.Namespace(ev.ctx, req.Namespace)
		switch {
		case errors.Is(err, ErrUndefined), errors.Is(err, engine.ErrNotFound):
			ns = nil
		case err != nil:
			ev.celErr = err
			return nil, err
		}
	}
	var old map[string]any
	if len(ev.req.OldObject) > 0 {
		old = ev.req.OldObject
	}
	ev.cel = celrule.NewInput(req, object, old, ns, nil)
	return ev.cel, nil
}

// celParams fetches the params resources of a rule through Lookup.
func (ev *evaluation) celParams(p *celrule.Params) ([]map[string]any, error) {
	q := ParamQuery{
		APIVersion:       p.APIVersion,
		Kind:             p.Kind,
		Name:             p.Name,
		Namespace:        p.Namespace,
		RequestNamespace: ev.celNamespace(),
		Selector:         p.Selector,
	}
	var params []map[string]any
	if p.Name != "" || p.Selector != nil {
		var err error
		if params, err = ev.e.lookup.Params(ev.ctx, q); err != nil {
			return nil, err
		}
	}
	if len(params) == 0 && p.DenyNotFound {
		return nil, errors.New("no params found")
	}
	return params, nil
}

// celNamespace is the namespace Kyverno gives CEL: the object's (the old
// object's for DELETE), none for a Namespace.
func (ev *evaluation) celNamespace() string {
	res := &ev.res
	if len(ev.object()) == 0 && ev.oldRes != nil {
		res = ev.oldRes
	}
	if res.Group == "" && res.Version == "v1" && res.Kind == "Namespace" {
		return ""
	}
	return res.Namespace
}

// Namespace and Params of an Engine without Lookup.
func (noLookup) Namespace(context.Context, string) (map[string]any, error) {
	return nil, fmt.Errorf("namespace lookups: %w", ErrUndefined)
}
func (noLookup) Params(context.Context, ParamQuery) ([]map[string]any, error) {
	return nil, fmt.Errorf("params lookups: %w", engine.ErrNotFound)
}

// object is the request's object as the validate rules see it: after the
// mutate phase, the mutated object (nil for DELETE).
func (ev *evaluation) object() map[string]any {
	req, _ := ev.base["request"].(map[string]any)
	obj, _ := req["object"].(map[string]any)
	return obj
}

// sameMap reports whether a and b are the same map (not equal content).
func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
