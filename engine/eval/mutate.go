package eval

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/internal/memo"
	"github.com/verdict-policy/verdict/engine/internal/wildcard"
	"github.com/verdict-policy/verdict/engine/jmespath"
	"github.com/verdict-policy/verdict/engine/mutate"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/variables"
)

// Mutation is the object as the mutate rules of one policy left it (with
// the mutations of the policies before it): Kyverno's PatchedResource of
// that policy's mutate response. There is one per policy with mutate
// rules that applies to the request, whether its rules matched or not.
type Mutation struct {
	Policy, PolicyNamespace string
	Object                  map[string]any
}

// TargetPatch is an existing resource a mutate rule with targets patched.
type TargetPatch struct {
	Policy, PolicyNamespace, Rule string
	// Target is the resource as the Lookup returned it, Patched the result
	// and Patch the RFC 6902 JSON Patch between them.
	Target, Patched map[string]any
	Patch           []byte
}

// mutated is the result of applying a patch or a foreach.
type mutated struct {
	status  Status
	obj     map[string]any
	message string
}

func mutateError(msg string, err error) mutated {
	if err != nil {
		msg += ": " + errText(err)
	}
	return mutated{status: StatusError, message: msg}
}

// errText is the text of an error as Kyverno prints it: an engine error
// without the path prefix its Error adds (the message holds the path).
func errText(err error) string {
	if e, ok := err.(*engine.Error); ok && e.Message != "" {
		return e.Message
	}
	return err.Error()
}

// mutatePhase runs the mutate rules of every policy, in order, on the
// request's object, then the MutatingPolicies (mpol.go); each rule and
// policy sees the object as the ones before it left it. The validate
// phase then sees the result (ev.setObject). Background scans do not
// mutate (Kyverno's scans validate only: the stored object was mutated
// when it was admitted), nor do DELETE requests; they report whether the
// MutatingPolicies have been applied (backgroundMutatingPolicies, mpol.go).
func (ev *evaluation) mutatePhase(policies []*policy.Policy, resp *Response) {
	orig := ev.req.Object
	if len(orig) > 0 && ev.req.Mode == Background && !ev.req.MutateExisting && !ev.req.GenerateExisting {
		ev.backgroundMutatingPolicies(policies, resp)
		return
	}
	if len(orig) == 0 || ev.req.GenerateExisting || ev.req.Mode == Background && !ev.req.MutateExisting {
		return
	}
	obj := orig
	for _, p := range policies {
		if ev.ctx.Err() != nil {
			return
		}
		if !hasRuleType(p, policy.Mutate) || !ev.admits(p) {
			continue
		}
		applied := 0
		for _, r := range p.Rules {
			if r.Type != policy.Mutate || r.Mutate == nil || !ev.matches(r, &ev.res) {
				continue
			}
			if ev.req.MutateExisting && (len(r.Mutate.Targets) == 0 || !r.Mutate.ExistingOnPolicyUpdate) {
				continue
			}
			results, patched, targets := ev.mutateRule(p, r, obj)
			resp.Targets = append(resp.Targets, targets...)
			for _, o := range results {
				resp.Results = append(resp.Results, ev.ruleResult(p, r, o))
				if o.status == StatusPass || o.status == StatusFail {
					applied++
				}
			}
			if patched != nil {
				obj = patched
				ev.setObject(obj)
			}
			if p.ApplyOne && applied > 0 {
				break
			}
		}
		resp.Mutations = append(resp.Mutations, Mutation{Policy: p.Name(), PolicyNamespace: p.Namespace(), Object: obj})
	}
	if !ev.req.MutateExisting {
		if mutated := ev.mutatingPolicies(policies, obj, resp); !sameMap(mutated, obj) { // mpol.go
			obj = mutated
			ev.setObject(obj)
		}
	}
	// The targets of the MutatingPolicies with mutateExisting: in a
	// replay, or in Kyverno's CLI, which mutates a test's targetResources
	// in the same run (mpolexisting.go). At admission the host replays
	// the trigger off the answer path instead.
	if ev.req.MutateExisting || ev.e.kyvernoCLI && ev.req.Mode == Admission {
		ev.mutateExistingPolicies(policies, resp)
	}
	if !mutate.Equal(orig, obj) {
		resp.Patched = obj
		patch, err := mutate.MarshalPatch(mutate.Diff(orig, obj))
		if err == nil {
			resp.Patch = patch
		}
	}
}

func hasRuleType(p *policy.Policy, t policy.RuleType) bool {
	for _, r := range p.Rules {
		if r.Type == t {
			return true
		}
	}
	return false
}

// admits reports whether the policy applies to the request at all (mode,
// namespace of a namespaced Policy), as the validate phase checks it.
func (ev *evaluation) admits(p *policy.Policy) bool {
	if ev.req.Mode == Background && !p.Background {
		return false
	}
	if ev.req.Mode == Admission && !p.Admission {
		return false
	}
	if p.Namespaced() {
		ns := ev.res.Namespace
		if ev.oldRes != nil {
			ns = ev.oldRes.Namespace
		}
		if ns == "" || ns != p.Namespace() {
			return false
		}
	}
	return true
}

// setObject makes obj the request's object for the rules that follow:
// their matching and their request.object.
func (ev *evaluation) setObject(obj map[string]any) {
	ev.res = resourceOf(ev.req, obj)
	ev.base = ev.baseDocument(obj)
}

// ruleResult turns an outcome of a rule into a result (the validate phase
// adds Enforce and the warn of an unscored policy).
func (ev *evaluation) ruleResult(p *policy.Policy, r *policy.Rule, o *outcome) RuleResult {
	res := RuleResult{
		Policy:   p.Name(),
		Rule:     r.Name,
		Type:     RuleType(r.Type.String()),
		Status:   o.status,
		Message:  o.message,
		Scored:   p.Scored,
		Category: p.Category,
		Severity: p.Severity,
	}
	if p.Namespaced() {
		res.PolicyNamespace = p.Namespace()
	}
	if len(r.ReportProperties) > 0 {
		res.Properties = ev.properties(p, r)
	}
	if len(o.props) > 0 {
		if res.Properties == nil {
			res.Properties = make(map[string]string, len(o.props))
		}
		maps.Copy(res.Properties, o.props)
	}
	return res
}

// mutateRule applies one mutate rule to obj. It returns the rule's results
// (one per target for a rule with targets) and the patched object (nil
// when unchanged).
func (ev *evaluation) mutateRule(p *policy.Policy, r *policy.Rule, obj map[string]any) ([]*outcome, map[string]any, []TargetPatch) {
	if err := ev.budget.Poll(); err != nil {
		return []*outcome{stopped(err)}, nil, nil
	}
	outs, patched, targets := ev.matchedMutateRule(p, r, obj)
	// Work the budget stopped may have been taken for a result: the rule
	// reports the stop, and patches nothing.
	if err := ev.budget.Err(); err != nil {
		return []*outcome{stopped(err)}, nil, nil
	}
	return outs, patched, targets
}

// matchedMutateRule applies a mutate rule that matched the request.
func (ev *evaluation) matchedMutateRule(p *policy.Policy, r *policy.Rule, obj map[string]any) ([]*outcome, map[string]any, []TargetPatch) {
	s := ev.newScope(p, r)
	if o := s.unmet(r.Context, r.Preconditions); o != nil {
		return []*outcome{o}, nil, nil
	}
	if exs := ev.exceptions(p, r, s); len(exs) > 0 {
		return []*outcome{exceptionSkip(exs)}, nil, nil
	}
	m := r.Mutate
	if len(m.Targets) > 0 {
		outs, targets := ev.mutateTargets(p, r, s)
		return outs, nil, targets
	}
	var res mutated
	if len(m.Foreach) > 0 {
		res = ev.mutateForeach(s, m.Foreach, obj, 0)
	} else {
		res = ev.applyPatch(s, m.Patch, obj)
	}
	o := &outcome{status: res.status, message: res.message}
	if res.status != StatusPass {
		return []*outcome{o}, nil, nil
	}
	o.message = successMessage(res.obj)
	return []*outcome{o}, res.obj, nil
}

// successMessage is Kyverno's message of a mutation that applied.
func successMessage(obj map[string]any) string {
	if obj == nil {
		return "mutated resource"
	}
	kind, _ := obj["kind"].(string)
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	ns, _ := meta["namespace"].(string)
	if ns == "" {
		return fmt.Sprintf("mutated %s/%s", kind, name)
	}
	return fmt.Sprintf("mutated %s/%s in namespace %s", kind, name, ns)
}

// applyPatch renders a patch's variables and applies it to obj.
func (ev *evaluation) applyPatch(s *scope, p *policy.Patch, obj map[string]any) mutated {
	if p == nil || p.Strategic == nil && p.JSON6902 == nil {
		return mutateError("empty mutate rule", nil)
	}
	var (
		patched map[string]any
		err     error
	)
	if p.Strategic != nil {
		env := variables.Env{} // a static overlay renders as it is, with no env
		if p.Overlay == nil {
			env = s.env()
		}
		overlay, rerr := p.Strategic.Render(env)
		if rerr != nil {
			return mutateError("variable substitution failed", rerr)
		}
		var lists []overlayList
		if p.Overlay != nil {
			lists = overlayLists.Get(p.Strategic, staticLists)
		} else {
			lists = listsOf(overlay)
		}
		if err := ev.budget.Step(mergeCost(lists, obj)); err != nil {
			return mutateError("failed to patch resource", err)
		}
		if p.Overlay != nil {
			patched, err = p.Overlay.Apply(obj)
		} else {
			patched, err = mutate.StrategicMerge(obj, overlay)
		}
	} else {
		jp := p.Static
		if jp == nil {
			text, rerr := p.JSON6902.Render(s.env())
			if rerr != nil {
				return mutateError("variable substitution failed", rerr)
			}
			str, isString := text.(string)
			if !isString {
				return mutateError("variable substitution failed", fmt.Errorf("patchesJson6902 is %T, not a string", text))
			}
			if jp, err = mutate.ParseJSON6902(str); err != nil {
				return mutateError("failed to patch resource", err)
			}
		}
		patched, err = jp.Apply(obj)
	}
	if err != nil {
		return mutateError("failed to patch resource", err)
	}
	if mutate.Equal(obj, patched) {
		return mutated{status: StatusSkip, obj: obj, message: "no patches applied"}
	}
	return mutated{status: StatusPass, obj: patched, message: "resource patched"}
}

// mergeCost is the steps a patchStrategicMerge overlay costs on obj:
// kyaml's merge of a list by its keys compares every element with every
// other, so a list of n elements (the object's and the overlay's) costs n²
// steps. A Pod with 50,000 containers would otherwise keep one patch busy
// for minutes, out of reach of the budget and the deadline. The lists of
// an overlay are found once per static overlay (overlayLists).
func mergeCost(lists []overlayList, obj any) int {
	c := 1
	for i := range lists {
		c += lists[i].cost(obj, 0)
	}
	return c
}

// overlayList is a list of an overlay: the keys leading to it from the
// top ("" for "each element of the list here"), and its length.
type overlayList struct {
	path []string
	n    int
}

// cost is n² for the list of the object at the path (from path[i] on),
// summed over the elements where the path goes through a list.
func (ol *overlayList) cost(v any, i int) int {
	for ; i < len(ol.path); i++ {
		if ol.path[i] == "" {
			l, _ := v.([]any)
			c := 0
			for _, e := range l {
				c += ol.cost(e, i+1)
			}
			return c
		}
		m, _ := v.(map[string]any)
		v = m[ol.path[i]]
	}
	l, _ := v.([]any)
	n := ol.n + len(l)
	return n * n
}

// listsOf returns the lists of an overlay, anchors taken off the keys.
func listsOf(overlay any) []overlayList {
	var out []overlayList
	var walk func(v any, path []string)
	walk = func(v any, path []string) {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				walk(e, append(path[:len(path):len(path)], anchorFree(k)))
			}
		case []any:
			out = append(out, overlayList{path: path, n: len(t)})
			for _, e := range t {
				if _, ok := e.(map[string]any); ok {
					walk(e, append(path[:len(path):len(path)], ""))
				}
			}
		}
	}
	walk(overlay, nil)
	return out
}

// overlayLists caches listsOf for static overlays, which policies compile
// once.
var overlayLists = memo.New[*variables.Document, []overlayList](4096)

// staticLists is listsOf of an overlay without variables.
func staticLists(d *variables.Document) []overlayList {
	v, _ := d.Render(variables.Env{})
	return listsOf(v)
}

// anchorFree is the key an overlay key names: "name" for "(name)",
// "+(name)", "=(name)", "X(name)", "<(name)" or "^(name)".
func anchorFree(k string) string {
	if len(k) < 3 || k[len(k)-1] != ')' {
		return k
	}
	switch {
	case k[0] == '(':
		return k[1 : len(k)-1]
	case strings.IndexByte("+=X<^", k[0]) >= 0 && k[1] == '(':
		return k[2 : len(k)-1]
	}
	return k
}

// mutateForeach is Kyverno's forEachMutator.mutateForEach: each entry's
// list is evaluated, then its elements are patched one after the other.
func (ev *evaluation) mutateForeach(s *scope, entries []*policy.MutateForeach, obj map[string]any, nesting int) mutated {
	applied := 0
	for _, fe := range entries {
		elements, err := s.listOf(fe.List)
		if err != nil {
			return mutateError(fmt.Sprintf("failed to evaluate list %s: %v", fe.ListSource, errText(err)), err)
		}
		res := ev.mutateElements(s, fe, elements, obj, nesting)
		if res.status == StatusError {
			return mutateError("failed to mutate elements", errors.New(res.message))
		}
		if res.status != StatusSkip {
			applied++
			if res.status == StatusPass {
				obj = res.obj
			}
			s.set("request.object", res.obj)
		}
	}
	msg := fmt.Sprintf("%d elements processed", applied)
	if applied == 0 {
		return mutated{status: StatusSkip, obj: obj, message: msg}
	}
	return mutated{status: StatusPass, obj: obj, message: msg}
}

func (ev *evaluation) mutateElements(s *scope, fe *policy.MutateForeach, elements []any, obj map[string]any, nesting int) mutated {
	patched := obj
	n := len(elements)
	for i := range elements {
		index := i
		if fe.Descending {
			index = n - 1 - i
		}
		el := elements[index]
		// The patch of an element merges into the object, most often into
		// the list the foreach walks: charge its length.
		if err := ev.budget.Poll(); err != nil {
			return mutateError("failed to mutate elements", err)
		}
		if err := ev.budget.Step(n); err != nil {
			return mutateError("failed to mutate elements", err)
		}
		if el == nil {
			continue
		}
		c := s.child()
		notScoped := false // Kyverno adds mutate elements unscoped
		if err := c.setElement(el, index, nesting, &notScoped); err != nil {
			return mutateError(fmt.Sprintf("failed to add element to mutate.foreach[%d].context", index), err)
		}
		c.nesting = nesting + 1
		c.loadContext(fe.Context)
		ok, _, err := c.conditions(fe.Preconditions)
		if err != nil {
			return mutateError(fmt.Sprintf("failed to evaluate mutate.foreach[%d].preconditions", index), err)
		}
		if !ok {
			continue
		}
		var res mutated
		if len(fe.Foreach) > 0 {
			res = ev.mutateForeach(c, fe.Foreach, patched, nesting+1)
		} else {
			res = ev.applyPatch(c, fe.Patch, patched)
			if res.status == StatusError {
				return res
			}
		}
		switch res.status {
		case StatusFail, StatusError:
			return res
		case StatusPass:
			patched = res.obj
		}
	}
	if !mutate.Equal(obj, patched) {
		return mutated{status: StatusPass, obj: patched}
	}
	return mutated{status: StatusSkip, obj: patched, message: "no patches applied"}
}

// listOf evaluates a foreach list as Kyverno's EvaluateList: a value that
// is not a list is a list of one.
func (s *scope) listOf(q *jmespath.Query) ([]any, error) {
	return s.list(&policy.Foreach{List: q})
}

// mutateTargets is Kyverno's mutate existing handler: it loads the rule's
// targets and patches each one; the trigger is not changed.
func (ev *evaluation) mutateTargets(p *policy.Policy, r *policy.Rule, s *scope) ([]*outcome, []TargetPatch) {
	var out []*outcome
	var patches []TargetPatch
	targets, err := ev.loadTargets(p, r, s)
	if err != nil {
		out = append(out, ruleError("", err))
	}
	for _, t := range targets {
		if ev.budget.Poll() != nil {
			break // mutateRule reports the stop
		}
		c := s.child()
		c.set("target", t.obj)
		c.loadContext(t.spec.Context)
		ok, msg, err := c.conditions(t.spec.Preconditions)
		if err != nil {
			out = append(out, ruleError("failed to evaluate preconditions", err))
			continue
		}
		if !ok {
			out = append(out, skip(joinNonEmpty("; ", "preconditions not met", msg)))
			continue
		}
		var res mutated
		if len(r.Mutate.Foreach) > 0 {
			res = ev.mutateForeach(c, r.Mutate.Foreach, t.obj, 0)
		} else {
			res = ev.applyPatch(c, r.Mutate.Patch, t.obj)
		}
		o := &outcome{status: res.status, message: res.message}
		if res.status == StatusPass {
			o.message = successMessage(res.obj)
			patch, _ := mutate.MarshalPatch(mutate.Diff(t.obj, res.obj))
			patches = append(patches, TargetPatch{
				Policy: p.Name(), PolicyNamespace: p.Namespace(), Rule: r.Name,
				Target: t.obj, Patched: res.obj, Patch: patch,
			})
		}
		out = append(out, o)
	}
	return out, patches
}

type target struct {
	obj  map[string]any
	spec *policy.Target
}

// loadTargets fetches the targets of a rule through the Lookup.
func (ev *evaluation) loadTargets(p *policy.Policy, r *policy.Rule, s *scope) ([]target, error) {
	var out []target
	var errs []error
	for i, spec := range r.Mutate.Targets {
		raw, err := spec.Selector.Render(s.env())
		if err != nil {
			errs = append(errs, fmt.Errorf("failed to substitute variables in target[%d]: %v", i, err))
			continue
		}
		sel, _ := raw.(map[string]any)
		str := func(k string) string { v, _ := sel[k].(string); return v }
		apiVersion, kind, ns, name := str("apiVersion"), str("kind"), str("namespace"), str("name")
		if p.Namespaced() {
			ns = p.Namespace()
		}
		selector, err := labelSelector(sel["selector"])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		objs, err := ev.getResources(apiVersion, kind, ns, name, selector)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, o := range objs {
			out = append(out, target{obj: o, spec: spec})
		}
	}
	return out, errors.Join(errs...)
}

// getResources is Kyverno's dclient.GetResources: a get when namespace and
// name are plain, otherwise a list filtered by wildcards.
func (ev *evaluation) getResources(apiVersion, kind, ns, name string, selector labels.Selector) ([]map[string]any, error) {
	if ns != "" && name != "" && !wildcard.Has(ns) && !wildcard.Has(name) {
		obj, err := ev.e.lookup.Resource(ev.ctx, apiVersion, kind, ns, name)
		if err != nil {
			return nil, err
		}
		return []map[string]any{obj}, nil
	}
	list, err := ev.e.lookup.Resources(ev.ctx, apiVersion, kind, "", selector)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, o := range list {
		meta, _ := o["metadata"].(map[string]any)
		oname, _ := meta["name"].(string)
		ons, _ := meta["namespace"].(string)
		if ev.matchNamespaceName(ns, name, ons, oname) {
			out = append(out, o)
		}
	}
	return out, nil
}

// matchNamespaceName matches a listed object's namespace and name against
// the target's wildcards, charging the budget (a stopped budget matches
// nothing).
func (ev *evaluation) matchNamespaceName(nsPattern, namePattern, ns, name string) bool {
	match := func(p, s string) bool { m, _ := ev.budget.Match(p, s); return m }
	switch {
	case nsPattern == "" && namePattern == "":
		return true
	case nsPattern == "":
		return match(namePattern, name)
	case match(nsPattern, ns):
		return namePattern == "" || match(namePattern, name)
	}
	return false
}

// labelSelector builds a selector from a rendered metav1.LabelSelector
// (nil selects everything).
func labelSelector(v any) (labels.Selector, error) {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return labels.Everything(), nil
	}
	ls := &metav1.LabelSelector{}
	if ml, ok := m["matchLabels"].(map[string]any); ok {
		ls.MatchLabels = map[string]string{}
		for k, v := range ml {
			s, ok := v.(string)
			if !ok {
				s = fmt.Sprint(v)
			}
			ls.MatchLabels[k] = s
		}
	}
	if exprs, ok := m["matchExpressions"].([]any); ok {
		for _, e := range exprs {
			em, _ := e.(map[string]any)
			req := metav1.LabelSelectorRequirement{}
			req.Key, _ = em["key"].(string)
			op, _ := em["operator"].(string)
			req.Operator = metav1.LabelSelectorOperator(op)
			vals, _ := em["values"].([]any)
			for _, v := range vals {
				s, _ := v.(string)
				req.Values = append(req.Values, s)
			}
			ls.MatchExpressions = append(ls.MatchExpressions, req)
		}
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, fmt.Errorf("invalid label selector: %w", err)
	}
	return sel, nil
}

func (noLookup) Resource(_ context.Context, apiVersion, kind, namespace, name string) (map[string]any, error) {
	return nil, fmt.Errorf("%s %s %s/%s: %w", apiVersion, kind, namespace, name, engine.ErrNotFound)
}

func (noLookup) Resources(context.Context, string, string, string, labels.Selector) ([]map[string]any, error) {
	return nil, nil
}

// isNotFound reports whether a Lookup error says the object does not
// exist.
func isNotFound(err error) bool { return errors.Is(err, engine.ErrNotFound) }
