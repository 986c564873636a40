package eval

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/verdict-policy/verdict/engine/generate"
	"github.com/verdict-policy/verdict/engine/mutate"
	"github.com/verdict-policy/verdict/engine/policy"
)

// GenerateAction is what the host does with a generated resource.
type GenerateAction string

// The actions of Generated.
const (
	// GenerateCreate: the resource does not exist; create it.
	GenerateCreate GenerateAction = "create"
	// GenerateUpdate: the resource exists and the rule synchronizes it;
	// replace it (or, for a clone source, add the clone-source label).
	GenerateUpdate GenerateAction = "update"
	// GenerateDelete: the trigger no longer matches (or was deleted) and
	// the rule synchronizes; delete what it generated.
	GenerateDelete GenerateAction = "delete"
)

// Generated is one resource a generate rule asks the host to create,
// update or delete. Object carries Kyverno's ownership labels
// (app.kubernetes.io/managed-by, generate.kyverno.io/policy-name,
// rule-name, trigger-*) and, for generateExisting on an existing trigger,
// kyverno.io/background-gen-rule: <rule>.
type Generated struct {
	Policy, PolicyNamespace, Rule string
	Action                        GenerateAction
	Object                        map[string]any
	// Synchronize is the rule's generate.synchronize.
	Synchronize bool
	// Source is true for the update that labels a clone source
	// generate.kyverno.io/clone-source, which Kyverno makes to watch it.
	Source bool
}

// GenerateError is a generate rule whose rule result is pass (its match
// and preconditions held) but whose generation failed, as Kyverno's
// background controller fails it after admission.
type GenerateError struct {
	Policy, PolicyNamespace, Rule string
	Message                       string
}

// generatePhase runs the generate rules of every policy after mutation
// and validation, on the (mutated) object, as Kyverno's CLI does.
// Background scans do not generate, except the replay of existing
// triggers for generateExisting (Request.GenerateExisting).
func (ev *evaluation) generatePhase(policies []*policy.Policy, resp *Response) {
	if ev.req.Mode == Background && !ev.req.GenerateExisting || ev.req.MutateExisting {
		return
	}
	for _, p := range policies {
		if ev.ctx.Err() != nil {
			return
		}
		if !hasRuleType(p, policy.Generate) || !ev.admits(p) {
			continue
		}
		for _, r := range p.Rules {
			if r.Type != policy.Generate || r.Generate == nil {
				continue
			}
			if ev.req.Mode == Background && r.UsesUserInfo {
				continue
			}
			if ev.req.GenerateExisting && !r.Generate.Existing {
				continue
			}
			o, s := ev.generateCheck(p, r)
			if o == nil {
				continue
			}
			if err := ev.budget.Poll(); err != nil {
				o, s = stopped(err), nil
			}
			resp.Results = append(resp.Results, ev.ruleResult(p, r, o))
			switch {
			case o.status == StatusPass:
				g := &generator{ev: ev, p: p, r: r, owner: generate.Owner{
					Policy: p.Name(), PolicyNamespace: p.Namespace(), Rule: r.Name,
					Trigger: ev.triggerObject(), Existing: ev.req.GenerateExisting,
				}}
				err := g.run(s)
				if berr := ev.budget.Err(); berr != nil {
					// What the rule generated before the stop is not
					// asked for: the rule reports the stop.
					resp.Results[len(resp.Results)-1] = ev.ruleResult(p, r, stopped(berr))
					g.out, err = nil, berr
				}
				resp.Generated = append(resp.Generated, g.out...)
				if err != nil {
					resp.GenerateErrors = append(resp.GenerateErrors, GenerateError{
						Policy: p.Name(), PolicyNamespace: p.Namespace(), Rule: r.Name, Message: err.Error(),
					})
				}
			case o.status == StatusFail && r.Generate.Synchronize:
				resp.Generated = append(resp.Generated, ev.downstream(p, r)...)
			}
			if p.ApplyOne && o.status != StatusSkip {
				break
			}
		}
	}
}

// triggerObject is the object generate rules run for: the request's
// object, or the old object of a DELETE.
func (ev *evaluation) triggerObject() map[string]any {
	obj, _ := ev.base["request"].(map[string]any)["object"].(map[string]any)
	return obj
}

// generateCheck is Kyverno's filterRule for a generate rule: pass when
// the trigger matches and the preconditions hold; fail when only the old
// object matched (or held the preconditions), so that what it generated
// goes; skip when the preconditions do not hold; no result when the rule
// does not match or its context does not load.
func (ev *evaluation) generateCheck(p *policy.Policy, r *policy.Rule) (*outcome, *scope) {
	s := ev.newScope(p, r)
	if exs := ev.exceptions(p, r, s); len(exs) > 0 {
		return skip("rule is skipped due to policy exception " + exceptionKeys(exs)), nil
	}
	old := ev.req.OldObject
	if len(ev.req.Object) == 0 || !ev.matches(r, &ev.res) {
		if len(old) > 0 {
			res := resourceOf(ev.req, old)
			if ev.matches(r, &res) {
				return fail(""), nil
			}
		}
		return nil, nil
	}
	s.loadContext(r.Context)
	if err := s.loadAll(); err != nil {
		return nil, nil
	}
	ok, _, err := s.conditions(r.Preconditions)
	if err != nil {
		return ruleError("failed to evaluate conditions", err), nil
	}
	if ok {
		return pass(""), s
	}
	if len(old) > 0 {
		c := s.child()
		c.set("request.object", old)
		ok, msg, err := c.conditions(r.Preconditions)
		if err != nil {
			return ruleError("failed to evaluate conditions for old resource", err), nil
		}
		if ok {
			return fail(msg), nil
		}
	}
	return skip(""), nil
}

// generator runs one generate rule that passed.
type generator struct {
	ev    *evaluation
	p     *policy.Policy
	r     *policy.Rule
	owner generate.Owner
	out   []Generated
}

func (g *generator) run(s *scope) error {
	gen := g.r.Generate
	if len(gen.Foreach) == 0 {
		return g.pattern(s, nil, gen.Pattern)
	}
	var errs []error
	for i, fe := range gen.Foreach {
		elements, err := s.listOf(fe.List)
		if err != nil {
			errs = append(errs, fmt.Errorf("failed to evaluate %v foreach list: %v", i, err))
			continue
		}
		var elemErrs []error
		for index, el := range elements {
			if err := g.ev.budget.Poll(); err != nil {
				return err
			}
			if el == nil {
				continue
			}
			c := s.child()
			if err := c.setElement(el, index, 0, nil); err != nil {
				elemErrs = append(elemErrs, fmt.Errorf("failed to add %v element to context: %v", index, err))
				continue
			}
			c.nesting = 1
			if err := g.pattern(c, fe, fe.Pattern); err != nil {
				elemErrs = append(elemErrs, fmt.Errorf("failed to process %v element: %v", index, err))
			}
		}
		if err := errors.Join(elemErrs...); err != nil {
			errs = append(errs, fmt.Errorf("failed to process %v foreach in rule %s: %v", i, g.r.Name, err))
		}
	}
	return errors.Join(errs...)
}

// pattern is Kyverno's generator.generate for one pattern: context and
// preconditions (of the foreach entry, or the rule's again), variables,
// then the data, clone or cloneList.
func (g *generator) pattern(s *scope, fe *policy.GenerateForeach, pat *policy.GeneratePattern) error {
	if fe != nil {
		s.loadContext(fe.Context)
		if err := s.loadAll(); err != nil {
			return fmt.Errorf("failed to load context: %v", err)
		}
		ok, _, err := s.conditions(fe.Preconditions)
		if err != nil {
			return fmt.Errorf("failed to evaluate preconditions: %v", err)
		}
		if !ok {
			return nil
		}
	} else {
		ok, _, err := s.conditions(g.r.Preconditions)
		if err != nil {
			return fmt.Errorf("failed to evaluate preconditions: %v", err)
		}
		if !ok {
			return nil
		}
	}
	if pat == nil || pat.Doc == nil {
		return nil
	}
	raw, err := pat.Doc.Render(s.env())
	if err != nil {
		return err
	}
	gp, err := generate.ParsePattern(raw)
	if err != nil {
		return err
	}
	var responses []genResponse
	switch pat.Kind {
	case policy.GenerateClone:
		responses = append(responses, g.clone(gp.Target, *gp.Clone))
	case policy.GenerateCloneList:
		responses = g.cloneList(gp)
	default:
		responses = append(responses, g.data(gp.Target, gp.Data))
	}
	return g.apply(responses)
}

// genResponse is Kyverno's generateResponse.
type genResponse struct {
	action GenerateAction // "" for skip
	data   map[string]any
	target generate.Target
	err    error
}

func (g *generator) lookup(t generate.Target) (map[string]any, error) {
	return g.ev.e.lookup.Resource(g.ev.ctx, t.APIVersion, t.Kind, t.Namespace, t.Name)
}

// data is Kyverno's manageData.
func (g *generator) data(t generate.Target, data any) genResponse {
	if data == nil {
		return genResponse{target: t}
	}
	content, ok := data.(map[string]any)
	if !ok {
		return genResponse{target: t, err: fmt.Errorf("generate.data is %T, not an object", data)}
	}
	existing, err := g.lookup(t)
	switch {
	case isNotFound(err):
		return genResponse{action: GenerateCreate, data: content, target: t}
	case err != nil:
		return genResponse{target: t, err: err}
	case !g.r.Generate.Synchronize:
		return genResponse{target: t}
	}
	upd := copyMap(content)
	meta, _ := upd["metadata"].(map[string]any)
	meta = copyMap(meta)
	if meta == nil {
		meta = map[string]any{}
	}
	if rv := metaString(existing, "resourceVersion"); rv != "" {
		meta["resourceVersion"] = rv
	} else {
		delete(meta, "resourceVersion")
	}
	upd["metadata"] = meta
	return genResponse{action: GenerateUpdate, data: upd, target: t}
}

// clone is Kyverno's manageClone of one source.
func (g *generator) clone(t generate.Target, src generate.Target) genResponse {
	if src.Namespace == t.Namespace && src.Name == t.Name {
		return genResponse{target: t}
	}
	source, err := g.lookup(src)
	if err != nil {
		return genResponse{target: t, err: fmt.Errorf("source resource %s not found: %v", t, err)}
	}
	g.out = append(g.out, Generated{
		Policy: g.p.Name(), PolicyNamespace: g.p.Namespace(), Rule: g.r.Name,
		Action: GenerateUpdate, Object: generate.LabelSource(source), Source: true,
	})
	cp := generate.FromClone(source, t.Namespace)
	existing, err := g.lookup(t)
	switch {
	case isNotFound(err):
		return genResponse{action: GenerateCreate, data: cp, target: t}
	case err != nil:
		return genResponse{target: t, err: fmt.Errorf("failed to get target resource %s: %w", t, err)}
	}
	cp = generate.WithIdentityOf(cp, existing)
	if equalJSON(cp, existing) {
		return genResponse{target: t}
	}
	return genResponse{action: GenerateUpdate, data: cp, target: t}
}

// cloneList is Kyverno's manageCloneList.
func (g *generator) cloneList(p *generate.Pattern) []genResponse {
	var out []genResponse
	cl := p.CloneList
	for _, k := range cl.Kinds {
		apiVersion, kind := generate.KindOf(k)
		sel, err := labelSelector(cl.Selector)
		var sources []map[string]any
		if err == nil {
			sources, err = g.ev.e.lookup.Resources(g.ev.ctx, apiVersion, kind, cl.Namespace, sel)
		}
		if err != nil {
			out = append(out, genResponse{
				target: generate.Target{APIVersion: apiVersion, Kind: kind, Namespace: p.Namespace},
				err:    fmt.Errorf("failed to list source resource for cloneList %s %s/%s. %v", apiVersion, kind, cl.Namespace, err),
			})
			continue
		}
		for _, src := range sources {
			sapi, _ := src["apiVersion"].(string)
			skind, _ := src["kind"].(string)
			sns, sname := metaString(src, "namespace"), metaString(src, "name")
			t := generate.Target{APIVersion: sapi, Kind: skind, Namespace: p.Namespace, Name: sname}
			if sns == t.Namespace {
				out = append(out, genResponse{target: t})
				continue
			}
			out = append(out, g.clone(t, generate.Target{APIVersion: sapi, Kind: skind, Namespace: sns, Name: sname}))
		}
	}
	return out
}

// apply turns the responses into what the host creates or updates, as
// Kyverno's generator does after manageData and manageClone.
func (g *generator) apply(responses []genResponse) error {
	for _, r := range responses {
		if r.err != nil {
			return r.err
		}
		if r.action == "" {
			continue
		}
		if r.data == nil && r.action == GenerateUpdate {
			return nil
		}
		obj := generate.Build(r.data, r.target, g.owner)
		meta, _ := obj["metadata"].(map[string]any)
		if r.action == GenerateCreate {
			delete(meta, "resourceVersion")
			g.emit(GenerateCreate, obj)
			continue
		}
		existing, err := g.lookup(r.target)
		if err != nil {
			g.emit(GenerateCreate, obj)
			continue
		}
		if r.target.APIVersion == "" {
			obj["apiVersion"], _ = existing["apiVersion"].(string)
		}
		if r.target.Namespace == "" && !policy.ClusterScoped(r.target.APIVersion, r.target.Kind) {
			meta["namespace"] = "default"
		}
		if !g.r.Generate.Synchronize {
			continue
		}
		if generate.Unchanged(obj, existing) {
			continue
		}
		g.emit(GenerateUpdate, obj)
	}
	return nil
}

func (g *generator) emit(action GenerateAction, obj map[string]any) {
	g.out = append(g.out, Generated{
		Policy: g.p.Name(), PolicyNamespace: g.p.Namespace(), Rule: g.r.Name,
		Action: action, Object: obj, Synchronize: g.r.Generate.Synchronize,
	})
}

// downstream finds what a synchronized rule generated for the trigger
// (the old object), to delete it: by the trigger's UID, or else its name.
func (ev *evaluation) downstream(p *policy.Policy, r *policy.Rule) []Generated {
	trigger := ev.req.OldObject
	if len(trigger) == 0 {
		trigger = ev.req.Object
	}
	owner := generate.Owner{Policy: p.Name(), PolicyNamespace: p.Namespace(), Rule: r.Name, Trigger: trigger}
	var kinds [][2]string
	addPattern := func(pat *policy.GeneratePattern) {
		if pat == nil || pat.Doc == nil {
			return
		}
		raw, err := pat.Doc.Render(ev.newScope(p, r).env())
		if err != nil {
			return
		}
		gp, err := generate.ParsePattern(raw)
		if err != nil {
			return
		}
		if gp.Kind != "" {
			kinds = append(kinds, [2]string{gp.APIVersion, gp.Kind})
			return
		}
		if gp.CloneList != nil {
			for _, k := range gp.CloneList.Kinds {
				a, kk := generate.KindOf(k)
				kinds = append(kinds, [2]string{a, kk})
			}
		}
	}
	if len(r.Generate.Foreach) > 0 {
		for _, fe := range r.Generate.Foreach {
			addPattern(fe.Pattern)
		}
	} else {
		addPattern(r.Generate.Pattern)
	}
	var out []Generated
	for _, k := range kinds {
		var found []map[string]any
		for _, byName := range []bool{false, true} {
			sel := labels.SelectorFromSet(owner.DownstreamSelector(byName))
			objs, err := ev.e.lookup.Resources(ev.ctx, k[0], k[1], "", sel)
			if err != nil || len(objs) == 0 {
				continue
			}
			found = objs
			break
		}
		for _, o := range found {
			out = append(out, Generated{
				Policy: p.Name(), PolicyNamespace: p.Namespace(), Rule: r.Name,
				Action: GenerateDelete, Object: o, Synchronize: true,
			})
		}
	}
	return out
}

func metaString(obj map[string]any, k string) string {
	meta, _ := obj["metadata"].(map[string]any)
	s, _ := meta[k].(string)
	return s
}

func copyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func equalJSON(a, b map[string]any) bool {
	return mutate.Equal(a, b)
}
