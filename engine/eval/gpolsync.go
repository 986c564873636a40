package eval

import (
	"github.com/verdict-policy/verdict/engine/generate"
	"github.com/verdict-policy/verdict/engine/gpol"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// synchronizes reports whether the request can leave a synchronized
// GeneratingPolicy's downstream resources stale: an admission UPDATE or
// DELETE of a trigger (not a replay, not Kyverno's CLI, which generates
// only).
func (ev *evaluation) synchronizes() bool {
	return ev.req.Mode == Admission && !ev.req.GenerateExisting && !ev.e.kyvernoCLI && len(ev.req.OldObject) > 0
}

// staleDownstream is the synchronization of a GeneratingPolicy with
// synchronize, as Kyverno's gpol webhook and background controller do
// it: on a DELETE of its trigger (when its matchConstraints do not list
// DELETE), or an UPDATE after which the trigger no longer matches (r nil),
// the resources it generated for the trigger are deleted; after an UPDATE
// that passes, those it no longer generates. What it generated for the
// trigger is found by evaluating the policy on the old object (as the
// CREATE, else the UPDATE, that generated them) and reading each of those
// resources through the Lookup: one that exists and carries the policy's
// ownership labels for this trigger (generate.kyverno.io/policy-name, and
// trigger-uid or else trigger-name) is a delete intent. An error or an
// exception of the new evaluation deletes nothing.
func (ev *evaluation) staleDownstream(p *policy.Policy, gp *gpol.Policy, r *gpol.Result) []Generated {
	deleting := len(ev.req.Object) == 0
	switch {
	case deleting && deleteTriggers(gp):
		return nil // the DELETE is a trigger of its own
	case r != nil && (r.Status != vpol.StatusPass || r.Rule != gp.Name):
		return nil
	}
	old := ev.req.OldObject
	var before *gpol.Result
	for _, op := range []string{"CREATE", "UPDATE"} {
		in := vpol.NewInput(vpol.Request{
			Operation:       op,
			Object:          old,
			NamespaceObject: ev.req.NamespaceObject,
			NamespaceLabels: ev.req.NamespaceLabels,
			UserInfo:        vpol.UserInfo{Username: ev.req.UserInfo.Username, UID: ev.req.UserInfo.UID, Groups: ev.req.UserInfo.Groups, Extra: ev.req.UserInfo.Extra},
			Sources:         ev.e.celData,
			Now:             ev.e.now(),
		})
		if before = gp.Evaluate(ev.ctx, in, ev.req.CELExceptions); before != nil {
			break
		}
	}
	if before == nil || before.Status != vpol.StatusPass {
		return nil
	}
	keep := map[[4]string]bool{}
	if r != nil {
		for _, g := range r.Generated {
			keep[identity(g)] = true
		}
	}
	meta, _ := old["metadata"].(map[string]any)
	uid, _ := meta["uid"].(string)
	name, _ := meta["name"].(string)
	var out []Generated
	for _, g := range before.Generated {
		id := identity(g)
		if keep[id] {
			continue
		}
		existing, err := ev.e.lookup.Resource(ev.ctx, id[0], id[1], id[2], id[3])
		if err != nil {
			continue
		}
		em, _ := existing["metadata"].(map[string]any)
		ls, _ := em["labels"].(map[string]any)
		owned := ls[generate.LabelPolicyName] == gp.Name
		if tuid, ok := ls[generate.LabelTriggerUID].(string); ok && tuid != "" && uid != "" {
			owned = owned && tuid == uid
		} else {
			owned = owned && ls[generate.LabelTriggerName] == name
		}
		if !owned {
			continue
		}
		out = append(out, Generated{
			Policy: p.Name(), PolicyNamespace: p.Namespace(), Rule: gp.Name,
			Action: GenerateDelete, Object: existing, Synchronize: true,
		})
	}
	return out
}

// deleteTriggers reports whether a GeneratingPolicy's matchConstraints
// list DELETE (or every operation): then a DELETE generates, as Kyverno's
// webhook decides.
func deleteTriggers(gp *gpol.Policy) bool {
	mc := gp.Document().Spec.MatchConstraints
	if mc == nil {
		return false
	}
	for _, rule := range mc.ResourceRules {
		for _, op := range rule.Operations {
			if op == "DELETE" || op == "*" {
				return true
			}
		}
	}
	return false
}

// identity is the apiVersion, kind, namespace and name of a generated
// resource (no namespace for a cluster-scoped kind).
func identity(g gpol.Generated) [4]string {
	apiVersion, _ := g.Object["apiVersion"].(string)
	kind, _ := g.Object["kind"].(string)
	meta, _ := g.Object["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	ns := g.Namespace
	if policy.ClusterScoped(apiVersion, kind) {
		ns = ""
	}
	return [4]string{apiVersion, kind, ns, name}
}
