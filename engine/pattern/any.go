package pattern

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/internal/memo"
)

// AnyResult is the combined outcome of a validate.anyPattern list.
type AnyResult struct {
	// Status is Pass as soon as one pattern passes (or when the list is
	// empty); otherwise Fail if any pattern failed or erred, and Skip if
	// all were skipped. Error only when the budget of ValidateAnyBudget
	// ran out: Kyverno counts an erring pattern as a failed one.
	Status Status
	// Index is the index of the pattern that passed, or -1.
	Index int
	// Results holds the result of each pattern tried, in order; patterns
	// after the passing one are not tried.
	Results []Result
}

// ValidateAny matches a resource against anyPattern's patterns in order, as
// Kyverno does: the first pass wins.
func ValidateAny(patterns []*Pattern, resource any) AnyResult {
	return ValidateAnyBudget(patterns, resource, nil)
}

// ValidateAnyBudget is ValidateAny charging b (nil: no limit), as
// ValidateBudget does. When b is spent or its context is done, it stops
// with Status Error, the last result holding b's error.
func ValidateAnyBudget(patterns []*Pattern, resource any, b *engine.Budget) AnyResult {
	out := AnyResult{Index: -1}
	failed, skipped := 0, 0
	for i, p := range patterns {
		r := p.ValidateBudget(resource, b)
		out.Results = append(out.Results, r)
		if b.Err() != nil {
			out.Status = Error
			return out
		}
		switch r.Status {
		case Pass:
			out.Status, out.Index = Pass, i
			return out
		case Skip:
			skipped++
		default:
			failed++
		}
	}
	switch {
	case failed > 0:
		out.Status = Fail
	case skipped > 0:
		out.Status = Skip
	default:
		out.Status = Pass
	}
	return out
}

// Detail returns the text Kyverno builds from the patterns' errors for the
// rule named rule: for Fail, one "rule R[i] failed at path P" (or "rule R[i]
// failed: MSG" for an error without path) per failed pattern; for Skip, one
// "rule R[i] skipped: MSG" per pattern; joined by spaces. Empty for Pass.
func (r AnyResult) Detail(rule string) string {
	var parts []string
	for i, res := range r.Results {
		switch {
		case r.Status == Skip && res.Status == Skip:
			parts = append(parts, fmt.Sprintf("rule %s[%d] skipped: %s", rule, i, res.Message))
		case r.Status == Fail && (res.Status == Fail || res.Status == Error):
			if res.Path == "" {
				parts = append(parts, fmt.Sprintf("rule %s[%d] failed: %s", rule, i, res.Message))
			} else {
				parts = append(parts, fmt.Sprintf("rule %s[%d] failed at path %s", rule, i, res.Path))
			}
		}
	}
	return strings.Join(parts, " ")
}

// passMessages caches PassMessage: a rule passes again and again, and
// its message is the same each time. Inline policies of callers may bring
// any number of names: the cache is bounded.
var passMessages = memo.New[string, string](maxPassMessages)

const maxPassMessages = 4096

// PassMessage is the message of a validate rule that passed:
// "validation rule '<rule>' passed.".
func PassMessage(rule string) string {
	return passMessages.Get(rule, func(rule string) string { return "validation rule '" + rule + "' passed." })
}

// RuleMessage returns the message Kyverno gives the rule response, for the
// rule named rule whose validate.message, after variable substitution, is
// message ("" when unset). For an empty anyPattern list Kyverno passes with
// validate.message as written.
func (r AnyResult) RuleMessage(rule, message string) string {
	switch r.Status {
	case Pass:
		if r.Index < 0 {
			return message
		}
		return "validation rule '" + rule + "' anyPattern[" + strconv.Itoa(r.Index) + "] passed."
	case Skip:
		return r.Detail(rule)
	}
	detail := r.Detail(rule)
	switch {
	case message == "":
		return "validation error: " + detail
	case strings.HasSuffix(message, "."):
		return "validation error: " + message + " " + detail
	}
	return "validation error: " + message + ". " + detail
}

// RuleMessage returns the message Kyverno gives the rule response of a
// validate.pattern rule named rule whose validate.message, after variable
// substitution, is message ("" when unset).
func (r Result) RuleMessage(rule, message string) string {
	switch r.Status {
	case Pass:
		return PassMessage(rule)
	case Skip:
		return r.Message
	}
	// One concatenation: "validation error: " [message ["."] " "] "rule "
	// rule (" failed at path " path | " execution error: " message).
	dot, space := "", ""
	if message != "" {
		space = " "
		if !strings.HasSuffix(message, ".") {
			dot = "."
		}
	}
	if r.Status == Fail {
		return "validation error: " + message + dot + space + "rule " + rule + " failed at path " + r.Path
	}
	return "validation error: " + message + dot + space + "rule " + rule + " execution error: " + r.Message
}
