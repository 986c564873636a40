package eval

import (
	"fmt"
	"strings"

	"github.com/verdict-policy/verdict/engine/condition"
	"github.com/verdict-policy/verdict/engine/internal/memo"
	"github.com/verdict-policy/verdict/engine/pattern"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/variables"
)

// validator evaluates one validate rule, or one level of its foreach.
type validator struct {
	ev      *evaluation
	rule    *policy.Rule
	val     *policy.Validation
	nesting int
}

// validate evaluates the rule's pattern, anyPattern, deny or foreach in s.
// fe is the foreach entry being evaluated for one element (nil at the top).
func (v *validator) validate(s *scope, fe *policy.Foreach) *outcome {
	var (
		pat     *policy.Pattern
		anyPat  []*policy.Pattern
		deny    *policy.Conditions
		foreach []*policy.Foreach
	)
	if fe == nil {
		pat, anyPat, deny, foreach = v.val.Pattern, v.val.AnyPattern, v.val.Deny, v.val.Foreach
	} else {
		if o := s.unmet(fe.Context, fe.Preconditions); o != nil {
			return o
		}
		pat, anyPat, deny, foreach = fe.Pattern, fe.AnyPattern, fe.Deny, fe.Foreach
	}
	switch {
	case deny != nil:
		return v.deny(s, deny)
	case pat != nil || anyPat != nil:
		resource := s.element
		if resource == nil {
			if v.ev.deleteRequest {
				return nil
			}
			resource, _ = s.data["request"].(map[string]any)["object"].(map[string]any)
		}
		return v.patterns(s, resource, pat, anyPat)
	case foreach != nil:
		return v.foreach(s, foreach)
	}
	return nil
}

func (v *validator) deny(s *scope, c *policy.Conditions) *outcome {
	denied, msg, err := s.conditions(c)
	if err != nil {
		return ruleError("failed to check deny conditions", err)
	}
	if !denied {
		return passOutcome(v.rule.Name)
	}
	if v.val.RawMessage == "" && msg == "" {
		return fail(fmt.Sprintf("validation error: rule %s failed", v.rule.Name))
	}
	return fail(v.denyMessage(s, msg))
}

// denyMessage renders validate.message joined with the condition messages,
// as Kyverno does (variables in condition messages are rendered too).
func (v *validator) denyMessage(s *scope, condMsg string) string {
	text := joinNonEmpty("; ", v.val.RawMessage, condMsg)
	out, err := v.ev.renderText(s, text)
	if err != nil {
		return condMsg
	}
	return out
}

// message renders validate.message; ok is false when rendering failed.
func (v *validator) message(s *scope) (string, bool) {
	if v.val.Message == nil {
		return "", true
	}
	out, err := renderString(s, v.val.Message)
	if err != nil {
		return "", false
	}
	return out, true
}

func (v *validator) patterns(s *scope, resource map[string]any, pat *policy.Pattern, anyPat []*policy.Pattern) *outcome {
	if pat != nil {
		p, err := v.compilePattern(s, pat)
		if err != nil {
			return ruleError("variable substitution failed", err)
		}
		r := p.ValidateBudget(resource, v.ev.budget)
		if err := v.ev.budget.Err(); err != nil {
			return stopped(err)
		}
		switch r.Status {
		case pattern.Pass:
			return passOutcome(v.rule.Name)
		case pattern.Skip:
			return &outcome{status: status(r.Status), message: r.RuleMessage(v.rule.Name, "")}
		}
		msg, ok := v.message(s)
		if !ok {
			return &outcome{status: status(r.Status), message: fmt.Sprintf("validation error: variables substitution error in rule %s execution error: %s", v.rule.Name, r.Message)}
		}
		if r.Status == pattern.Fail && (v.val.Message == nil || !v.val.Message.HasVariables()) {
			return failOutcome(v.rule.Name, msg, r.Path)
		}
		return &outcome{status: status(r.Status), message: r.RuleMessage(v.rule.Name, msg)}
	}

	compiled := make([]*pattern.Pattern, len(anyPat))
	for i, ap := range anyPat {
		p, err := v.compilePattern(s, ap)
		if err != nil {
			return ruleError("variable substitution failed", err)
		}
		compiled[i] = p
	}
	r := pattern.ValidateAnyBudget(compiled, resource, v.ev.budget)
	if err := v.ev.budget.Err(); err != nil {
		return stopped(err)
	}
	if r.Status == pattern.Pass && r.Index >= 0 {
		return anyPassOutcome(v.rule.Name, r.Index)
	}
	if r.Status != pattern.Fail {
		return &outcome{status: status(r.Status), message: r.RuleMessage(v.rule.Name, v.val.RawMessage)}
	}
	msg, ok := v.message(s)
	if !ok {
		return fail(fmt.Sprintf("validation error: variables substitution error in rule %s execution error: %s", v.rule.Name, r.Detail(v.rule.Name)))
	}
	return fail(r.RuleMessage(v.rule.Name, msg))
}

// Outcomes of pattern rules that fail with a message without variables,
// and of anyPattern rules that pass, are shared: the same rule fails at the
// same paths, or passes with the same pattern, resource after resource.
var (
	failOutcomes    = memo.New[failKey, *outcome](4096)
	anyPassOutcomes = memo.New[anyPassKey, *outcome](4096)
)

type failKey struct{ rule, message, path string }

type anyPassKey struct {
	rule  string
	index int
}

// failOutcome is the outcome of a pattern rule that failed at path, with
// validate.message message.
func failOutcome(rule, message, path string) *outcome {
	return failOutcomes.Get(failKey{rule, message, path}, func(k failKey) *outcome {
		return fail(pattern.Result{Status: pattern.Fail, Path: k.path}.RuleMessage(k.rule, k.message))
	})
}

// anyPassOutcome is the outcome of an anyPattern rule whose pattern index
// passed.
func anyPassOutcome(rule string, index int) *outcome {
	return anyPassOutcomes.Get(anyPassKey{rule, index}, func(k anyPassKey) *outcome {
		return pass(pattern.AnyResult{Status: pattern.Pass, Index: k.index}.RuleMessage(k.rule, ""))
	})
}

func status(s pattern.Status) Status {
	switch s {
	case pattern.Pass:
		return StatusPass
	case pattern.Skip:
		return StatusSkip
	case pattern.Fail:
		return StatusFail
	}
	return StatusError
}

// compilePattern returns the pre-compiled pattern, or substitutes the
// pattern's variables and compiles the result.
func (v *validator) compilePattern(s *scope, p *policy.Pattern) (*pattern.Pattern, error) {
	if p.Static != nil {
		return p.Static, nil
	}
	if p.Dynamic == nil {
		return nil, fmt.Errorf("pattern at %s did not compile", p.Path)
	}
	raw, err := p.Dynamic.Render(s.env())
	if err != nil {
		return nil, err
	}
	return pattern.CompileSubstituted(raw), nil
}

// foreach evaluates each foreach entry over its list, as Kyverno does: the
// first element that does not pass decides; an empty or absent list yields
// no result.
func (v *validator) foreach(s *scope, entries []*policy.Foreach) *outcome {
	applied := 0
	var listErr error
	for _, fe := range entries {
		if fe.List == nil || s.missing(fe.List) {
			continue
		}
		elements, err := s.list(fe)
		if err != nil {
			if strings.Contains(err.Error(), "Unknown key") {
				continue
			}
			listErr = err
			continue
		}
		o, n := v.elements(s, fe, elements)
		if o.status != StatusPass {
			return o
		}
		applied += n
	}
	if applied == 0 {
		if listErr != nil {
			return ruleError("failed to evaluate list", listErr)
		}
		return nil
	}
	return passedForeach
}

func (v *validator) elements(s *scope, fe *policy.Foreach, elements []any) (*outcome, int) {
	applied := 0
	var c *scope
	defer func() {
		if c != nil {
			v.ev.releaseChild(c)
		}
	}()
	child := &validator{ev: v.ev, rule: v.rule, val: v.val, nesting: v.nesting + 1}
	for i, el := range elements {
		if err := v.ev.budget.Poll(); err != nil {
			return stopped(err), applied
		}
		if el == nil {
			continue
		}
		if c == nil {
			c = v.ev.childScope(s)
		} else {
			s.reset(c)
		}
		if err := c.setElement(el, i, v.nesting, fe.ElementScope); err != nil {
			return ruleError("failed to process foreach", err), applied
		}
		c.nesting = child.nesting
		o := child.validate(c, fe)
		if err := v.ev.budget.Err(); err != nil {
			return stopped(err), applied
		}
		if o == nil || o.status == StatusSkip {
			continue
		}
		if o.status != StatusPass {
			if o.status == StatusError && strings.Contains(o.message, "failed to evaluate preconditions") {
				continue
			}
			return &outcome{status: o.status, message: "validation failure: " + o.message}, applied
		}
		applied++
	}
	return passedElements, applied
}

// list evaluates a foreach list expression.
func (s *scope) list(fe *policy.Foreach) ([]any, error) {
	v, err := s.query(fe.List)
	if err != nil {
		return nil, err
	}
	switch t := v.(type) {
	case []any:
		return t, nil
	case []map[string]any:
		out := make([]any, len(t))
		for i, m := range t {
			out[i] = m
		}
		return out, nil
	default:
		return []any{v}, nil
	}
}

// setElement binds element, elementIndex and their nested forms, and makes
// a map element the object that patterns validate, unless elementScope says
// otherwise.
func (s *scope) setElement(el any, index, nesting int, elementScope *bool) error {
	s.own()
	idx := boxedIndex(index)
	s.data["element"] = el
	s.data[nestedName("element", nesting)] = el
	s.data["elementIndex"] = idx
	s.data[nestedName("elementIndex", nesting)] = idx
	m, isMap := el.(map[string]any)
	scoped := isMap
	if elementScope != nil {
		if *elementScope && !isMap {
			return fmt.Errorf("cannot use elementScope=true foreach rules for elements that are not maps, expected type=map got type=%T", el)
		}
		scoped = *elementScope
	}
	if scoped {
		s.element = m
	}
	return nil
}

// unmet is the outcome of a rule (or foreach element) whose preconditions
// c do not hold (skip) or fail (error), after loading its context entries;
// nil when they hold.
func (s *scope) unmet(context []*policy.ContextEntry, c *policy.Conditions) *outcome {
	s.loadContext(context)
	ok, msg, err := s.conditions(c)
	if err != nil {
		return ruleError("failed to evaluate preconditions", err)
	}
	if !ok {
		return skip(joinNonEmpty("; ", "preconditions not met", msg))
	}
	return nil
}

// conditions evaluates a precondition or deny block. A nil block holds.
// The message is the joined messages of the conditions that decided.
//
// While the block is evaluated, the scope answers an expression that the
// previous query of the block also asked (several conditions of one block
// often render the same variable, like {{ element.keys(@)[] }}) with that
// query's value instead of searching again: nothing changes the scope's
// data in between (binding a name drops the value), the value is only read,
// and Pure excludes the functions that read the clock, the random source
// or the resolver. Queries that fail are not remembered.
func (s *scope) conditions(c *policy.Conditions) (bool, string, error) {
	if c == nil {
		return true, "", nil
	}
	was := s.memoOn
	s.memoOn = true
	ok, msg, err := c.Eval(s.condition)
	s.memoOn = was
	s.forget()
	return ok, msg, err
}

func (s *scope) condition(c *policy.Condition) (bool, string, error) {
	if err := s.ev.budget.Poll(); err != nil {
		return false, "", err
	}
	key, err := c.Key.Render(s.env())
	if err != nil {
		return false, "", fmt.Errorf("failed to substitute variables in condition key: %w", err)
	}
	value, err := c.Value.Render(s.env())
	if err != nil {
		return false, "", fmt.Errorf("failed to substitute variables in condition value: %w", err)
	}
	ok, err := condition.EvaluateBudget(key, c.Operator, value, s.ev.budget)
	if err != nil {
		return false, "", err
	}
	return ok, c.Message, nil
}

// renderText substitutes the variables of a text that only exists at
// evaluation (a message joined from parts).
func (ev *evaluation) renderText(s *scope, text string) (string, error) {
	if !strings.Contains(text, "{{") {
		return strings.ReplaceAll(text, `\{{`, "{{"), nil
	}
	t, err := ev.e.templates.get(text, variables.Parse)
	if err != nil {
		return "", err
	}
	out, err := t.Render(s.env())
	if err != nil {
		return "", err
	}
	str, ok := out.(string)
	if !ok {
		return "the produced message didn't resolve to a string, check your policy definition.", nil
	}
	return str, nil
}

// nestedNames are element0..element9 and elementIndex0..elementIndex9, so
// that binding an element does not format a name.
var nestedNames = func() map[string][]string {
	m := map[string][]string{}
	for _, base := range []string{"element", "elementIndex"} {
		for i := 0; i < 10; i++ {
			m[base] = append(m[base], fmt.Sprintf("%s%d", base, i))
		}
	}
	return m
}()

// boxedIndexes are the elementIndex values of the first elements, boxed
// once.
var boxedIndexes = func() (out [64]any) {
	for i := range out {
		out[i] = float64(i)
	}
	return out
}()

// boxedIndex is the elementIndex value of element i.
func boxedIndex(i int) any {
	if i >= 0 && i < len(boxedIndexes) {
		return boxedIndexes[i]
	}
	return float64(i)
}

func nestedName(base string, nesting int) string {
	if names := nestedNames[base]; nesting < len(names) {
		return names[nesting]
	}
	return fmt.Sprintf("%s%d", base, nesting)
}
