package operator

import (
	"strings"
	"time"
)

// Op is the leading operator of a string pattern condition.
type Op uint8

const (
	Equal      Op = iota // no operator
	MoreEqual            // >=
	LessEqual            // <=
	NotEqual             // !
	More                 // >
	Less                 // <
	InRange              // a-b
	NotInRange           // a!-b
)

// String returns the operator as written, which is also the number of
// bytes Kyverno strips from the front of a condition.
func (o Op) String() string {
	switch o {
	case MoreEqual:
		return ">="
	case LessEqual:
		return "<="
	case NotEqual:
		return "!"
	case More:
		return ">"
	case Less:
		return "<"
	case InRange:
		return "-"
	case NotInRange:
		return "!-"
	}
	return ""
}

// Of finds the operator of a condition, in Kyverno's order of checks
// (operator.GetOperatorFromStringPattern).
func Of(s string) Op {
	if len(s) < 2 {
		return Equal
	}
	switch {
	case strings.HasPrefix(s, ">="):
		return MoreEqual
	case strings.HasPrefix(s, "<="):
		return LessEqual
	case s[0] == '>':
		return More
	case s[0] == '<':
		return Less
	case s[0] == '!':
		return NotEqual
	}
	if _, _, ok := SplitRange(s, "!-"); ok {
		return NotInRange
	}
	if _, _, ok := SplitRange(s, "-"); ok {
		return InRange
	}
	return Equal
}

// SplitRange matches s against `^(N)sep(N)$` where N is Kyverno's range
// endpoint `[-|\+]?\d+(?:\.\d+)?[A-Za-z]*`, and returns both endpoints.
func SplitRange(s, sep string) (string, string, bool) {
	n := rangeEndpoint(s)
	if n == 0 || !strings.HasPrefix(s[n:], sep) {
		return "", "", false
	}
	rest := s[n+len(sep):]
	m := rangeEndpoint(rest)
	if m == 0 || m != len(rest) {
		return "", "", false
	}
	return s[:n], rest, true
}

// rangeEndpoint returns the length of the longest prefix of s that is a range
// endpoint, or 0. The grammar has no ambiguity a greedy scan could miss: an
// endpoint is followed by '-' or '!', which it cannot contain past its sign.
func rangeEndpoint(s string) int {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '|' || s[i] == '+') {
		i++
	}
	d := digits(s[i:])
	if d == 0 {
		return 0
	}
	i += d
	if i < len(s) && s[i] == '.' {
		f := digits(s[i+1:])
		if f == 0 {
			// "1." cannot be followed by the separator: no match at all.
			return 0
		}
		i += 1 + f
	}
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z') {
		i++
	}
	return i
}

func digits(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// Compare reports whether the result c of comparing a value with an
// operand (-1, 0, 1) satisfies op; false for the range operators.
func Compare(op Op, c int) bool {
	switch op {
	case Equal:
		return c == 0
	case NotEqual:
		return c != 0
	case More:
		return c > 0
	case Less:
		return c < 0
	case MoreEqual:
		return c >= 0
	case LessEqual:
		return c <= 0
	}
	return false
}

// CompareDurations is Compare of a value a with an operand b.
func CompareDurations(op Op, a, b time.Duration) bool {
	switch {
	case a < b:
		return Compare(op, -1)
	case a > b:
		return Compare(op, 1)
	}
	return Compare(op, 0)
}
