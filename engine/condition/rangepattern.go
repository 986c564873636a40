package condition

import (
	"regexp"
	"strings"
	"time"

	"github.com/verdict-policy/verdict/engine/internal/quantity"
	"github.com/verdict-policy/verdict/engine/internal/wildcard"
)

// A string value of a set operator that looks like a range ("1-10",
// "0Mi-1024Mi", "-10--8") is checked the way validate patterns check a
// string: Kyverno hands it to pkg/engine/pattern.Validate. This file carries
// the part of that logic reachable from here (a string key against a string
// pattern), so that this package does not depend on engine/pattern.

var (
	inRangeRegex    = regexp.MustCompile(`^([-|\+]?\d+(?:\.\d+)?[A-Za-z]*)-([-|\+]?\d+(?:\.\d+)?[A-Za-z]*)$`)
	notInRangeRegex = regexp.MustCompile(`^([-|\+]?\d+(?:\.\d+)?[A-Za-z]*)!-([-|\+]?\d+(?:\.\d+)?[A-Za-z]*)$`)
)

// isRange reports whether s is an in-range pattern. (Kyverno asks whether
// the pattern's operator is InRange; a string matching the in-range
// expression never starts with another operator nor matches the
// not-in-range one, so the expression alone decides.)
func isRange(s string) bool {
	if s == "" {
		return false
	}
	// Cheap pre-check before the regular expression.
	if c := s[0]; c != '-' && c != '|' && c != '+' && (c < '0' || c > '9') {
		return false
	}
	return inRangeRegex.MatchString(s)
}

type patternOp string

const (
	opEqual      patternOp = ""
	opMoreEqual  patternOp = ">="
	opLessEqual  patternOp = "<="
	opNotEqual   patternOp = "!"
	opMore       patternOp = ">"
	opLess       patternOp = "<"
	opInRange    patternOp = "-"
	opNotInRange patternOp = "!-"
)

// patternOperator returns the operator a pattern string starts with, like
// Kyverno's operator.GetOperatorFromStringPattern.
func patternOperator(p string) patternOp {
	if len(p) < 2 {
		return opEqual
	}
	for _, op := range []patternOp{opMoreEqual, opLessEqual, opMore, opLess, opNotEqual} {
		if strings.HasPrefix(p, string(op)) {
			return op
		}
	}
	if notInRangeRegex.MatchString(p) {
		return opNotInRange
	}
	if inRangeRegex.MatchString(p) {
		return opInRange
	}
	return opEqual
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
	switch op := patternOperator(pattern); op {
	case opInRange:
		m := inRangeRegex.FindStringSubmatch(pattern)
		return matchOne(value, ">= "+m[1]) && matchOne(value, "<= "+m[2])
	case opNotInRange:
		m := notInRangeRegex.FindStringSubmatch(pattern)
		return matchOne(value, "< "+m[1]) || matchOne(value, "> "+m[2])
	default:
		return comparePattern(value, strings.TrimSpace(pattern[len(op):]), op)
	}
}

// comparePattern compares value with an operand, as durations when both
// parse as durations, else as quantities when both parse as quantities,
// else (for equality operators only) with the operand as a wildcard pattern.
func comparePattern(value, operand string, op patternOp) bool {
	if pd, err := time.ParseDuration(operand); err == nil {
		if vd, err := time.ParseDuration(value); err == nil {
			return compareOrdered(cmpDuration(vd, pd), op)
		}
	}
	if pq, err := quantity.Parse(operand); err == nil {
		if vq, err := quantity.Parse(value); err == nil {
			return compareOrdered(quantity.Cmp(vq, pq), op)
		}
	}
	switch op {
	case opEqual:
		return wildcard.Match(operand, value)
	case opNotEqual:
		return !wildcard.Match(operand, value)
	}
	return false
}

func cmpDuration(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compareOrdered(c int, op patternOp) bool {
	switch op {
	case opEqual:
		return c == 0
	case opNotEqual:
		return c != 0
	case opMore:
		return c > 0
	case opLess:
		return c < 0
	case opMoreEqual:
		return c >= 0
	case opLessEqual:
		return c <= 0
	}
	return false
}
