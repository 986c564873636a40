package gpol

import (
	"context"
	"fmt"

	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// MaxGenerated is the most resources one evaluation of a policy may
// generate (every generator.Apply call of its generations together);
// past it the evaluation is an error and generates nothing.
const MaxGenerated = 1000

// Kyverno's messages.
const (
	// MessagePass is the message of a policy that ran its generations.
	MessagePass = "policy evaluated successfully"
	// MessageEvaluation prefixes the message of an evaluation error.
	MessageEvaluation = "failed to evaluate policy: "
	// MessageMatch prefixes the message of a matchConstraints error.
	MessageMatch = "failed to execute matching: "
)

// Generated is one resource a generator.Apply call asked for: the object
// as the expression built it (an item of a List is a resource of its
// own), and the namespace the call named (a NamespacedGeneratingPolicy's
// own). The host sets the namespace on the object (none for a
// cluster-scoped kind) and applies it.
type Generated struct {
	Namespace string
	Object    map[string]any
}

// Result is what the policy decided for a resource, with Kyverno's rule
// names and statuses (a GeneratingPolicy has no rules): pass (rule: the
// policy's name, MessagePass) with the audit annotations as properties
// and the resources generated; error (rule: the policy's name) when the
// constraints could not be matched or an expression failed, generating
// nothing; vpol.RuleException skip or pass when an exception exempted
// the resource.
type Result struct {
	vpol.Result
	// Path is the field of the policy that failed, for an error
	// ("spec.generate[0].expression"): Kyverno's message does not say.
	Path string
	// Generated are the resources of a pass, in the order the calls
	// asked for them.
	Generated []Generated
}

// Evaluate runs the policy on a request as Kyverno's gpol engine does:
// matchConstraints, the policies.kyverno.io PolicyExceptions that name the
// policy and have not expired, the match conditions, then each
// generation (variables bound lazily), then the audit annotations. It
// returns nil when the policy does not apply (its constraints or a match
// condition do not hold), as Kyverno's engine gives no result then. It
// never fails: problems are error results. in is used by one goroutine at
// a time; the Policy by any number.
func (p *Policy) Evaluate(ctx context.Context, in *vpol.Input, exceptions []*vpol.Exception) *Result {
	ok, err := p.match.Matches(in)
	if err != nil {
		return &Result{Result: vpol.Result{Rule: p.Name, Status: vpol.StatusError, Message: MessageMatch + err.Error()}, Path: "spec.matchConstraints"}
	}
	if !ok {
		return nil
	}
	fail := func(path string, err error) *Result {
		return &Result{Result: vpol.Result{Rule: p.Name, Status: vpol.StatusError, Message: MessageEvaluation + err.Error()}, Path: path}
	}
	var excs []*vpol.Exception
	for _, e := range exceptions {
		if e.AppliesTo(p.Kind, p.Name) && !e.Expired(in.Now()) {
			excs = append(excs, e)
		}
	}
	act := in.Activation(ctx)
	if r, err := mpol.Exempt(ctx, act, excs); err != nil {
		return fail("spec.matchConditions", err) // of an exception
	} else if r != nil {
		return &Result{Result: *r}
	}
	if ok, err := vpol.MatchConditions(ctx, act, p.matchConditions, false); err != nil {
		return fail("spec.matchConditions", err)
	} else if !ok {
		return nil
	}
	act.Variables = kyvernocel.NewVariables()
	for _, e := range p.variables {
		act.BindVariable(ctx, e.name, e.prog)
	}
	col := &collector{namespace: p.Namespace}
	act.SetGenerator(col)
	for _, g := range p.generations {
		if g.tpl != nil {
			if err := p.applyTemplate(ctx, act, g.tpl, col); err != nil {
				return fail(g.name, err)
			}
			continue
		}
		if _, _, err := g.prog.ContextEval(ctx, act); err != nil {
			return fail(g.name, err)
		}
		if col.err != nil { // a CEL error value the expression dropped
			return fail(g.name, fmt.Errorf("failed to generate resources: %w", col.err))
		}
	}
	props, _, err := p.auditAnnots.Eval(ctx, act, vpol.KeyGoQuoted)
	if err != nil {
		return fail("spec.auditAnnotations", err)
	}
	return &Result{Result: vpol.Result{Rule: p.Name, Status: vpol.StatusPass, Message: MessagePass, Properties: props}, Generated: col.out}
}

// applyTemplate renders a generation template and generates its
// resources, grouped by their namespace in the order they come: a
// NamespacedGeneratingPolicy's resources without one go to its
// namespace, and one in another namespace is an error, as in Kyverno.
func (p *Policy) applyTemplate(ctx context.Context, act *kyvernocel.Activation, tpl *template, col *collector) error {
	objs, err := tpl.render(ctx, act)
	if err != nil {
		return fmt.Errorf("failed to render generation template: %w", err)
	}
	var order []string
	groups := map[string][]map[string]any{}
	for _, o := range objs {
		meta, _ := o["metadata"].(map[string]any)
		ns, _ := meta["namespace"].(string)
		if p.Namespace != "" {
			if ns == "" {
				ns = p.Namespace
			} else if ns != p.Namespace {
				return fmt.Errorf("cross-namespace generation denied: a policy in namespace %q cannot generate resources into namespace %q", p.Namespace, ns)
			}
		}
		if _, ok := groups[ns]; !ok {
			order = append(order, ns)
		}
		groups[ns] = append(groups[ns], o)
	}
	for _, ns := range order {
		if err := col.GenerateResources(ns, groups[ns]); err != nil {
			return fmt.Errorf("failed to generate resources: %w", err)
		}
	}
	return nil
}

// ErrTooMany is the error of an evaluation that asked for more than
// MaxGenerated resources.
var ErrTooMany = fmt.Errorf("more than %d generated resources (gpol.MaxGenerated)", MaxGenerated)

// collector receives the generator.Apply calls of one evaluation.
type collector struct {
	namespace string // of a namespaced policy
	out       []Generated
	err       error
}

// GenerateResources is generator.Apply: each object is a resource, the
// items of a List (an object whose items is a list) each one; a
// NamespacedGeneratingPolicy generates namespaced kinds only, in its
// namespace, as Kyverno's generator does in a cluster.
func (c *collector) GenerateResources(namespace string, dataList []map[string]any) error {
	for _, data := range dataList {
		objs := []map[string]any{data}
		if items, ok := data["items"].([]any); ok {
			objs = objs[:0]
			for i, it := range items {
				m, ok := it.(map[string]any)
				if !ok {
					return c.fail(fmt.Errorf("items[%d] of a %v is %T, not an object", i, data["kind"], it))
				}
				objs = append(objs, m)
			}
		}
		for _, o := range objs {
			if c.namespace != "" {
				if group, _, kind := kyverno.ObjectGVK(o); kyverno.ClusterScoped(group, kind) {
					apiVersion, _ := o["apiVersion"].(string)
					return c.fail(fmt.Errorf("cross-scope generation denied: a policy scoped to namespace %q cannot generate cluster-scoped resource %s/%s", c.namespace, apiVersion, kind))
				}
			}
			if len(c.out) == MaxGenerated {
				return c.fail(ErrTooMany)
			}
			c.out = append(c.out, Generated{Namespace: namespace, Object: o})
		}
	}
	return nil
}

func (c *collector) fail(err error) error {
	if c.err == nil {
		c.err = err
	}
	return err
}
