package condition

import (
	"strings"
	"time"

	"github.com/verdict-policy/verdict/engine/internal/operator"
	"github.com/verdict-policy/verdict/engine/internal/quantity"
	"github.com/verdict-policy/verdict/engine/internal/wildcard"
)

// A string value of a set operator that looks like a range ("1-10",
// "0Mi-1024Mi", "-10--8") is checked the way validate patterns check a
// string: Kyverno hands it to pkg/engine/pattern.Validate. This file carries
// the part of that logic reachable from here (a string key against a string
// pattern), so that this package does not depend on engine/pattern; the
// operators and ranges are parsed by engine/internal/operator, as
// engine/pattern parses them.

// isRange reports whether s is an in-range pattern. (Kyverno asks whether
// the pattern's operator is InRange; a string that is an in-range pattern
// never starts with another operator nor is a not-in-range one, so the
// range alone decides.)
func isRange(s string) bool {
	_, _, ok := operator.SplitRange(s, "-")
	return ok
}

// matchStringPattern reports whether the string value satisfies pattern:
// "|" separates alternatives, "&" conjuncts, each one optionally prefixed by
// an operator or written as a range.
func matchStringPattern(value, pattern string) bool {
	if value == pattern {
		return true
	}
	for _, alt := range strings.Split(pattern, "|") {
		if matchConjuncts(value, strings.Trim(alt, " ")) {
			return true
		}
	}
	return false
}

func matchConjuncts(value, pattern string) bool {
	for _, c := range strings.Split(pattern, "&") {
		if !matchOne(value, strings.Trim(c, " ")) {
			return false
		}
	}
	return true
}

func matchOne(value, pattern string) bool {
	switch op := operator.Of(pattern); op {
	case operator.InRange:
		lo, hi, _ := operator.SplitRange(pattern, "-")
		return matchOne(value, ">= "+lo) && matchOne(value, "<= "+hi)
	case operator.NotInRange:
		lo, hi, _ := operator.SplitRange(pattern, "!-")
		return matchOne(value, "< "+lo) || matchOne(value, "> "+hi)
	default:
		return comparePattern(value, strings.TrimSpace(pattern[len(op.String()):]), op)
	}
}

// comparePattern compares value with an operand, as durations when both
// parse as durations, else as quantities when both parse as quantities,
// else (for equality operators only) with the operand as a wildcard pattern.
func comparePattern(value, operand string, op operator.Op) bool {
	if pd, err := time.ParseDuration(operand); err == nil {
		if vd, err := time.ParseDuration(value); err == nil {
			return operator.CompareDurations(op, vd, pd)
		}
	}
	if pq, err := quantity.Parse(operand); err == nil {
		if vq, err := quantity.Parse(value); err == nil {
			return operator.Compare(op, quantity.Cmp(vq, pq))
		}
	}
	switch op {
	case operator.Equal:
		return wildcard.Match(operand, value)
	case operator.NotEqual:
		return !wildcard.Match(operand, value)
	}
	return false
}
