package eval

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"

	"github.com/verdict-policy/verdict/engine/podsecurity"
	"github.com/verdict-policy/verdict/engine/policy"
)

// podSecurityRule evaluates a validate.podSecurity rule as Kyverno's
// validatePssHandler does: no result for a DELETE; a matching exception
// without podSecurity controls skips the rule; otherwise the checks run on
// the pod of the resource, the rule's exclusions and then the matching
// exceptions' controls are applied, and what remains fails the rule. For
// an Enforce rule on UPDATE, a violation the old object had already is
// skipped (allowExistingViolations).
func (ev *evaluation) podSecurityRule(p *policy.Policy, r *policy.Rule, exs []*policy.Exception) *outcome {
	if ev.deleteRequest {
		return nil
	}
	for _, ex := range exs {
		if len(ex.PodSecurity) == 0 {
			return skip("rule is skipped due to policy exception " + ex.Key())
		}
	}
	o := ev.podSecurity(r, ev.object(), exs)
	if o.status == StatusFail && ev.enforce(r) && r.AllowExistingViolations && ev.operation == "UPDATE" && len(ev.req.OldObject) > 0 {
		prior := ev.priorPodSecurity(p, r)
		if prior != nil && prior.status == o.status {
			return skip("skipping the rule evaluation as pre-existing violations are allowed")
		}
	}
	return o
}

func (ev *evaluation) podSecurity(r *policy.Rule, obj map[string]any, exs []*policy.Exception) *outcome {
	c := r.PodSecurity
	pod, memo, err := ev.podOf(obj)
	if err != nil {
		return ruleError("Error while getting new resource", err)
	}
	allowed, failed := c.EvaluateMemo(pod, memo)
	if allowed {
		return pass("Validation rule '" + r.Name + "' passed.")
	}
	if len(exs) > 0 {
		var excludes []podsecurity.Exclude
		for _, ex := range exs {
			excludes = append(excludes, ex.PodSecurity...)
		}
		failed = c.Exempt(failed, excludes, pod)
		if len(failed) == 0 {
			return skip("rule is skipped due to policy exceptions " + exceptionKeys(exs))
		}
	}
	kind, _ := obj["kind"].(string)
	o := fail(c.FailMessage(r.Name, failed, kind))
	o.props = c.Properties(failed, pod)
	return o
}

// priorPodSecurity evaluates the rule on the old object as if it were
// created, when the rule matches it then (Kyverno's validateOldObject).
func (ev *evaluation) priorPodSecurity(p *policy.Policy, r *policy.Rule) *outcome {
	req := priorRequest(ev.req) // rules.go
	prior := ev.e.newEvaluation(ev.ctx, &req)
	if !prior.matches(r, &prior.res) {
		return nil
	}
	s := prior.newScope(p, r)
	exs := prior.exceptions(p, r, s)
	for _, ex := range exs {
		if len(ex.PodSecurity) == 0 {
			return skip("rule is skipped due to policy exception " + ex.Key())
		}
	}
	return prior.podSecurity(r, req.Object, exs)
}

// podCache is the pod of one object, and the results of the checks run
// on it.
type podCache struct {
	obj  map[string]any
	pod  *corev1.Pod
	err  error
	memo podsecurity.Memo
}

// podOf is podsecurity.PodOf(obj), converted once per evaluation: the
// podSecurity rules of every policy read the same pod, and checks never
// modify it (exclusions work on copies).
func (ev *evaluation) podOf(obj map[string]any) (*corev1.Pod, *podsecurity.Memo, error) {
	if c := ev.pod; c != nil && reflect.ValueOf(c.obj).UnsafePointer() == reflect.ValueOf(obj).UnsafePointer() {
		return c.pod, &c.memo, c.err
	}
	pod, err := podsecurity.PodOf(obj)
	ev.pod = &podCache{obj: obj, pod: pod, err: err}
	return pod, &ev.pod.memo, err
}
