package eval

import (
	"github.com/verdict-policy/verdict/engine/generate"
	"github.com/verdict-policy/verdict/engine/gpol"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// generatingPolicies runs the GeneratingPolicies and
// NamespacedGeneratingPolicies (engine/gpol) after the generate rules of
// the kyverno.io kinds, as Kyverno's CLI does: one result per policy that
// applies (type Generation, rule the policy's name, or "exception"), and
// for a pass the resources its generator.Apply calls asked for, as
// Generated (action create; the host creates or, when it exists and was
// generated for the same trigger, updates each). Admission requests run
// the policies whose admission is enabled; a background request runs
// only for generateExisting (Request.GenerateExisting), the policies
// that enable it.
func (ev *evaluation) generatingPolicies(policies []*policy.Policy, resp *Response) {
	if ev.req.MutateExisting || ev.req.Mode == Background && !ev.req.GenerateExisting {
		return
	}
	var in *vpol.Input
	for _, p := range policies {
		gp := p.Generating
		if gp == nil || ev.ctx.Err() != nil {
			continue
		}
		switch {
		case ev.req.GenerateExisting && !gp.GenerateExisting:
			continue
		case !ev.req.GenerateExisting && ev.req.Mode == Admission && !p.Admission:
			continue
		}
		if p.Namespaced() && ev.res.Namespace != p.Namespace() {
			continue
		}
		if err := ev.budget.Poll(); err != nil {
			break
		}
		if in == nil {
			in = ev.vpolInput()
		}
		r := gp.Evaluate(ev.ctx, in, ev.req.CELExceptions)
		if gp.Synchronize && ev.synchronizes() {
			resp.Generated = append(resp.Generated, ev.staleDownstream(p, gp, r)...) // gpolsync.go
		}
		if r == nil {
			continue
		}
		res := celResult(p, &r.Result, RuleGeneration, r.Path)
		resp.Results = append(resp.Results, res)
		for _, g := range r.Generated {
			resp.Generated = append(resp.Generated, Generated{
				Policy: p.Name(), PolicyNamespace: res.PolicyNamespace, Rule: r.Rule,
				Action: GenerateCreate, Synchronize: gp.Synchronize,
				Object: ev.generatedObject(gp, g),
			})
		}
	}
}

// generatedObject is the resource a generator.Apply call asked for, as
// Kyverno makes it: in Kyverno's CLI (Options.KyvernoCLI) the object with
// the call's namespace; otherwise as its controllers create it, without
// uid, selfLink, creationTimestamp, managedFields and resourceVersion, in
// the call's namespace unless its kind is cluster-scoped, without owner
// references when it moves to another namespace, with Kyverno's ownership
// labels (app.kubernetes.io/managed-by, generate.kyverno.io/policy-name,
// trigger-*, source-uid of a copied object), and
// kyverno.io/background-gen-rule for generateExisting.
func (ev *evaluation) generatedObject(gp *gpol.Policy, g gpol.Generated) map[string]any {
	obj := copyMap(g.Object)
	meta, _ := obj["metadata"].(map[string]any)
	meta = copyMap(meta)
	if meta == nil {
		meta = map[string]any{}
	}
	obj["metadata"] = meta
	ns := g.Namespace
	delete(meta, "namespace")
	if ev.e.kyvernoCLI {
		if ns != "" {
			meta["namespace"] = ns
		}
		return obj
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if policy.ClusterScoped(apiVersion, kind) {
		ns = ""
	}
	srcMeta, _ := g.Object["metadata"].(map[string]any)
	if src, _ := srcMeta["namespace"].(string); src != "" && src != ns {
		delete(meta, "ownerReferences")
	}
	trigger := ev.triggerObject()
	owner := generate.Owner{Policy: gp.Name, PolicyNamespace: gp.Namespace, Rule: gp.Name, Trigger: trigger, Existing: ev.req.GenerateExisting}
	labels := map[string]any{}
	if l, ok := meta["labels"].(map[string]any); ok {
		for k, v := range l {
			labels[k] = v
		}
	}
	own := owner.Labels()
	delete(own, generate.LabelRuleName)
	delete(own, generate.LabelPolicyNamespace)
	for k, v := range own {
		labels[k] = v
	}
	labels[generate.LabelTriggerName] = metaString(trigger, "name")
	if rv, _ := meta["resourceVersion"].(string); rv != "" {
		labels[generate.LabelSourceUID], _ = meta["uid"].(string)
	}
	meta["labels"] = labels
	for _, k := range []string{"uid", "selfLink", "creationTimestamp", "managedFields", "resourceVersion"} {
		delete(meta, k)
	}
	if ns != "" {
		meta["namespace"] = ns
	}
	return obj
}
