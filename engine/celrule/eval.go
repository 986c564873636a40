package celrule

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/lazy"
	"k8s.io/apiserver/pkg/cel/library"
)

// Status is the outcome of a rule.
type Status int

// The outcomes of Evaluate.
const (
	Pass Status = iota
	Fail
	Skip
)

func (s Status) String() string {
	switch s {
	case Fail:
		return "fail"
	case Skip:
		return "skip"
	}
	return "pass"
}

// Outcome is what a rule decided, with Kyverno's message (empty for Pass:
// the caller names the rule).
type Outcome struct {
	Status  Status
	Message string
}

// MessagePreconditionsNotMet is Kyverno's message for a rule whose
// celPreconditions do not hold.
const MessagePreconditionsNotMet = "cel preconditions not met"

// Evaluate runs the rule against in, once per params resource when the
// rule has Params (a rule with Params and no params resource passes), and
// returns Kyverno's outcome: Skip when the celPreconditions do not hold,
// Fail with the message of the first expression that is false or errors
// (a runtime error fails the rule, naming the expression, as in Kyverno:
// "expression '<expr>' resulted in error: <cause>"), else Pass. The
// evaluation stops when ctx is done or Kubernetes' cost budget is spent.
func (r *Rule) Evaluate(ctx context.Context, in *Input, params []map[string]any) Outcome {
	if r.Params == nil {
		params = []map[string]any{nil}
	}
	for _, p := range params {
		decisions, matched := r.Validate(ctx, in, p, false)
		if !matched {
			return Outcome{Status: Skip, Message: MessagePreconditionsNotMet}
		}
		for _, d := range decisions {
			if d.Deny {
				return Outcome{Status: Fail, Message: d.Message}
			}
		}
	}
	return Outcome{Status: Pass}
}

// Decision is one of Kubernetes' PolicyDecisions, as far as Kyverno reads
// them.
type Decision struct {
	// Deny is Kubernetes' ActionDeny: the validation is false, or it
	// errored with the Fail failure policy.
	Deny bool
	// Error is Kubernetes' EvalError: the expression (or a phase, or the
	// match conditions) errored; Deny says what the failure policy made
	// of it.
	Error   bool
	Message string
}

// Validate is Kubernetes' validator.Validate for one params object (nil:
// none; a list of params is {"items": [...]}), as Kyverno runs it
// (k8s.io/apiserver/pkg/admission/plugin/policy/validating): the decision
// of each validation, in order, or a single error decision when the match
// conditions or a whole phase (a spent cost budget) errored. ignore is the
// Ignore failure policy: errors then do not deny, and a match condition
// that errors, with none false, makes the rule not match. matched is false
// when the match conditions (celPreconditions) do not hold.
func (r *Rule) Validate(ctx context.Context, in *Input, param map[string]any, ignore bool) (decisions []Decision, matched bool) {
	r.ready()
	denyErr := func(err error) []Decision { return []Decision{{Deny: !ignore, Error: true, Message: err.Error()}} }

	if len(r.preconditions) > 0 {
		matches, err := r.match(ctx, in, param)
		if err != nil {
			if ignore {
				return nil, false
			}
			return denyErr(err), true
		}
		if !matches {
			return nil, false
		}
	}

	ns := in.namespace
	act := r.activation(ctx, in, param, ns, true)
	results, remaining, err := r.phase(ctx, act, len(r.validations), func(i int) *compiled { return &r.validations[i].compiled }, celconfig.RuntimeCELCostBudget)
	if err != nil {
		return denyErr(err), true
	}
	// Without messageExpressions the message phase has only placeholders,
	// which cost nothing.
	var messages []result
	var msgErr error
	if r.messages {
		msgAct := r.activation(ctx, in, param, ns, false)
		messages, _, msgErr = r.phase(ctx, msgAct, len(r.validations), func(i int) *compiled { return r.validations[i].messageExpr }, remaining)
	}
	budgetErr := errors.Is(msgErr, errInternal) || errors.Is(msgErr, errOutOfBudget)

	decisions = make([]Decision, len(results))
	for i, res := range results {
		v := r.validations[i]
		d := &decisions[i]
		switch {
		case res.err != nil:
			d.Deny, d.Error, d.Message = !ignore, true, res.err.Error()
		case budgetErr:
			d.Deny, d.Error, d.Message = !ignore, true, fmt.Sprintf("failed messageExpression: %s", msgErr)
		case res.val != types.True:
			d.Deny = true
			var message string
			if i < len(messages) && messages[i].err == nil && messages[i].val != nil {
				if s, ok := messages[i].val.Value().(string); ok {
					message = strings.TrimSpace(s)
					if len(message) > celconfig.MaxEvaluatedMessageExpressionSizeBytes || strings.Contains(message, "\n") {
						message = ""
					}
				}
			}
			if message == "" && v.message != "" {
				message = strings.TrimSpace(v.message)
			}
			if message == "" {
				message = "failed expression: " + strings.TrimSpace(v.expression)
			}
			d.Message = message
		}
	}

	// Audit annotations do not change Kyverno's result, but Kubernetes
	// evaluates them, and running out of budget there denies.
	if len(r.annotations) > 0 {
		annAct := r.activation(ctx, in, param, in.namespace, false)
		if _, _, err := r.phase(ctx, annAct, len(r.annotations), func(i int) *compiled { return r.annotations[i] }, celconfig.RuntimeCELCostBudget); err != nil {
			return denyErr(err), true
		}
	}
	return decisions, true
}

// match is Kubernetes' matchconditions.Matcher.Match with the Fail
// failure policy: a false condition wins over errors of others.
func (r *Rule) match(ctx context.Context, in *Input, param map[string]any) (bool, error) {
	act := r.activation(ctx, in, param, nil, true)
	results, _, err := r.phase(ctx, act, len(r.preconditions), func(i int) *compiled { return &r.preconditions[i].compiled }, celconfig.RuntimeCELCostBudgetMatchConditions)
	if err != nil {
		return false, err
	}
	var errs []error
	for _, res := range results {
		if res.err != nil {
			errs = append(errs, res.err)
		}
		if res.val == types.False {
			return false, nil
		}
	}
	if len(errs) > 0 {
		return false, utilerrors.NewAggregate(errs)
	}
	return true, nil
}

// result is one evaluated expression.
type result struct {
	val ref.Val
	err error
}

var (
	errOutOfBudget = errors.New("out of cost budget")
	errInternal    = errors.New("internal error")
)

// budgetError is Kubernetes' cel.Error for a spent budget or an internal
// failure: its message is the detail, and it is errOutOfBudget or
// errInternal for errors.Is.
type budgetError struct {
	detail string
	kind   error
}

func (e *budgetError) Error() string        { return e.detail }
func (e *budgetError) Is(target error) bool { return target == e.kind }

// phase evaluates n expressions in order against one activation, with a
// budget, as Kubernetes' condition.ForInput does. A nil expression is a
// placeholder with no result.
func (r *Rule) phase(ctx context.Context, act *activation, n int, expr func(int) *compiled, budget int64) ([]result, int64, error) {
	out := make([]result, n)
	remaining := budget
	for i := 0; i < n; i++ {
		c := expr(i)
		if c == nil {
			continue
		}
		if c.err != nil {
			// Kubernetes wraps the compiler's error once more here.
			out[i].err = fmt.Errorf("compilation error: %v", c.err)
			continue
		}
		val, details, err := c.prog.ContextEval(ctx, act)
		if cost := act.takeCost(); cost > remaining {
			return nil, -1, &budgetError{detail: "validation failed due to running out of cost budget, no further validation rules will be run", kind: errOutOfBudget}
		} else {
			remaining -= cost
		}
		if details == nil {
			return nil, -1, &budgetError{detail: fmt.Sprintf("runtime cost could not be calculated for expression: %v, no further expression will be run", c.expr), kind: errInternal}
		}
		rtCost := details.ActualCost()
		if rtCost == nil {
			return nil, -1, &budgetError{detail: fmt.Sprintf("runtime cost could not be calculated for expression: %v, no further expression will be run", c.expr), kind: errOutOfBudget}
		}
		if *rtCost > math.MaxInt64 || int64(*rtCost) > remaining {
			return nil, -1, &budgetError{detail: "validation failed due to running out of cost budget, no further validation rules will be run", kind: errOutOfBudget}
		}
		remaining -= int64(*rtCost)
		if err != nil {
			out[i].err = fmt.Errorf("expression '%v' resulted in error: %v", c.expr, err)
			continue
		}
		out[i].val = val
	}
	return out, remaining, nil
}

// activation binds the variables of one phase of an evaluation. Like
// Kubernetes, each phase gets its own lazily evaluated `variables`, whose
// cost is charged to the expression that first reads a variable.
type activation struct {
	ctx        context.Context
	in         *Input
	params     any
	namespace  any
	authorizer bool
	variables  *lazy.MapValue
	cost       int64
}

func (r *Rule) activation(ctx context.Context, in *Input, param, namespace map[string]any, withAuthorizer bool) *activation {
	a := &activation{ctx: ctx, in: in, authorizer: withAuthorizer}
	if param != nil {
		a.params = param
	}
	if namespace != nil {
		a.namespace = namespace
	}
	if r.noVariables != nil {
		a.variables = r.noVariables
		return a
	}
	a.variables = lazy.NewMapValue(r.varsType.CelType())
	for _, v := range r.variables {
		v := v
		a.variables.Append(v.name, func(*lazy.MapValue) ref.Val { return a.variable(v) })
	}
	return a
}

func (a *activation) variable(v *variable) ref.Val {
	if v.err != nil {
		return types.NewErr("composited variable %q fails to compile: %v", v.name, v.err)
	}
	val, details, err := v.prog.ContextEval(a.ctx, a)
	if details == nil {
		return types.NewErr("unable to get evaluation details of variable %q", v.name)
	}
	cost := details.ActualCost()
	if cost == nil {
		return types.NewErr("unable to calculate cost of variable %q", v.name)
	}
	c := int64(math.MaxInt64)
	if *cost <= math.MaxInt64 {
		c = int64(*cost)
	}
	a.cost += c
	if err != nil {
		return types.NewErr("composited variable %q fails to evaluate: %v", v.name, err)
	}
	return val
}

func (a *activation) takeCost() int64 {
	c := a.cost
	a.cost = 0
	return c
}

// ResolveName implements interpreter.Activation.
func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case varObject:
		if a.in.object == nil {
			return nil, true
		}
		return a.in.object, true
	case varOldObject:
		if a.in.oldObject == nil {
			return nil, true
		}
		return a.in.oldObject, true
	case varParams:
		return a.params, true
	case varRequest:
		return a.in.request, true
	case varNamespace:
		return a.namespace, true
	case varAuthorizer:
		if !a.authorizer {
			return nil, false
		}
		return library.NewAuthorizerVal(a.in.user, a.in.authz), true
	case varRequestResource:
		if !a.authorizer {
			return nil, false
		}
		return library.NewResourceAuthorizerVal(a.in.user, a.in.authz, &a.in.resource), true
	case varVariables:
		return a.variables, true
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *activation) Parent() interpreter.Activation { return nil }

// authzResource is the requested resource for authorizer.requestResource.
type authzResource struct {
	gvr             schema.GroupVersionResource
	name, namespace string
}

func (r *authzResource) GetName() string                          { return r.name }
func (r *authzResource) GetNamespace() string                     { return r.namespace }
func (r *authzResource) GetResource() schema.GroupVersionResource { return r.gvr }
func (r *authzResource) GetSubresource() string                   { return "" }

// noAuthorizer is the authorizer of an Input without one: every check is
// an error, as in Kyverno's CLI, where authorizer checks report errored()
// and are never allowed().
type noAuthorizer struct{}

func (noAuthorizer) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", errors.New("no authorizer is available to the engine")
}
