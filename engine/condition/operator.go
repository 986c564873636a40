package condition

import (
	"fmt"

	"github.com/verdict-policy/verdict/engine"
)

// Operator is the operator of one precondition or deny condition. The
// constants below are its canonical names; ParseOperator maps every spelling
// Kyverno accepts onto one of them.
type Operator string

// The condition operators. In and NotIn are deprecated in Kyverno (use the
// Any/All forms) but still evaluated, with their own, stricter semantics.
// The Duration* operators are deprecated too: the numeric operators compare
// durations as well.
const (
	Equals                      Operator = "Equals"
	NotEquals                   Operator = "NotEquals"
	In                          Operator = "In"
	NotIn                       Operator = "NotIn"
	AnyIn                       Operator = "AnyIn"
	AllIn                       Operator = "AllIn"
	AnyNotIn                    Operator = "AnyNotIn"
	AllNotIn                    Operator = "AllNotIn"
	GreaterThan                 Operator = "GreaterThan"
	GreaterThanOrEquals         Operator = "GreaterThanOrEquals"
	LessThan                    Operator = "LessThan"
	LessThanOrEquals            Operator = "LessThanOrEquals"
	DurationGreaterThan         Operator = "DurationGreaterThan"
	DurationGreaterThanOrEquals Operator = "DurationGreaterThanOrEquals"
	DurationLessThan            Operator = "DurationLessThan"
	DurationLessThanOrEquals    Operator = "DurationLessThanOrEquals"
)

// spellings maps every operator name Kyverno's policy validation accepts
// (kyvernov1.ConditionOperators, matched case-sensitively) to its canonical
// Operator. "Equal" and "NotEqual" are legacy aliases with identical
// behaviour.
var spellings = map[string]Operator{
	"Equal":                       Equals,
	"Equals":                      Equals,
	"NotEqual":                    NotEquals,
	"NotEquals":                   NotEquals,
	"In":                          In,
	"NotIn":                       NotIn,
	"AnyIn":                       AnyIn,
	"AllIn":                       AllIn,
	"AnyNotIn":                    AnyNotIn,
	"AllNotIn":                    AllNotIn,
	"GreaterThan":                 GreaterThan,
	"GreaterThanOrEquals":         GreaterThanOrEquals,
	"LessThan":                    LessThan,
	"LessThanOrEquals":            LessThanOrEquals,
	"DurationGreaterThan":         DurationGreaterThan,
	"DurationGreaterThanOrEquals": DurationGreaterThanOrEquals,
	"DurationLessThan":            DurationLessThan,
	"DurationLessThanOrEquals":    DurationLessThanOrEquals,
}

// validNames lists the accepted spellings in the error message, in a stable
// order.
const validNames = `"Equals", "NotEquals", "AnyIn", "AllIn", "AnyNotIn", "AllNotIn", ` +
	`"GreaterThan", "GreaterThanOrEquals", "LessThan", "LessThanOrEquals", ` +
	`"DurationGreaterThan", "DurationGreaterThanOrEquals", "DurationLessThan", "DurationLessThanOrEquals", ` +
	`"Equal", "NotEqual", "In", "NotIn"`

// ParseOperator returns the canonical Operator for s. Like Kyverno's policy
// validation it is case-sensitive: "equals" is rejected. An unknown or empty
// operator is an *engine.Error with Code engine.CodeInvalidPolicy and an
// empty Path, which the caller fills in.
func ParseOperator(s string) (Operator, error) {
	if op, ok := spellings[s]; ok {
		return op, nil
	}
	return "", &engine.Error{
		Code:    engine.CodeInvalidPolicy,
		Message: fmt.Sprintf("operator %q is invalid; valid operators: %s", s, validNames),
	}
}

// Replacements returns the operators Kyverno suggests instead of a
// deprecated one (In and NotIn), or nil when op is not deprecated. Kyverno
// reports them as a policy warning, not an error.
func (op Operator) Replacements() []Operator {
	switch op {
	case In:
		return []Operator{AllIn, AnyIn}
	case NotIn:
		return []Operator{AllNotIn, AnyNotIn}
	}
	return nil
}
