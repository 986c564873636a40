package pattern

import "strings"

// anchorKind is the modifier of an anchored pattern key such as "=(name)".
type anchorKind uint8

const (
	anchorNone      anchorKind = iota // a plain key
	anchorCondition                   // (key)
	anchorGlobal                      // <(key)
	anchorNegation                    // X(key)
	anchorAdd                         // +(key): mutate only, a plain key in validate
	anchorEquality                    // =(key)
	anchorExistence                   // ^(key)
)

// modifier returns the prefix written before the parenthesis.
func (k anchorKind) modifier() string {
	switch k {
	case anchorGlobal:
		return "<"
	case anchorNegation:
		return "X"
	case anchorAdd:
		return "+"
	case anchorEquality:
		return "="
	case anchorExistence:
		return "^"
	}
	return ""
}

// parseAnchor splits an anchored key into its kind and inner key, exactly as
// Kyverno's regular expression `^([+<=X^])?\((.+)\)$` does after trimming
// spaces. A key that is not an anchor returns anchorNone and "".
func parseAnchor(s string) (anchorKind, string) {
	s = strings.TrimSpace(s)
	kind := anchorCondition
	if len(s) > 1 && s[1] == '(' {
		switch s[0] {
		case '+':
			kind = anchorAdd
		case '<':
			kind = anchorGlobal
		case '=':
			kind = anchorEquality
		case 'X':
			kind = anchorNegation
		case '^':
			kind = anchorExistence
		}
		if kind != anchorCondition {
			s = s[1:]
		}
	}
	if len(s) < 3 || s[0] != '(' || s[len(s)-1] != ')' {
		return anchorNone, ""
	}
	key := s[1 : len(s)-1]
	// "." in the expression matches anything but a newline.
	if strings.IndexByte(key, '\n') >= 0 {
		return anchorNone, ""
	}
	return kind, key
}

// anchorString rebuilds an anchored key, as Kyverno's anchor.String does.
func anchorString(kind anchorKind, key string) string {
	return kind.modifier() + "(" + key + ")"
}

// validateAnchor reports whether Kyverno's policy validation accepts the
// anchor kind in a validate pattern.
func validateAnchor(kind anchorKind) bool {
	switch kind {
	case anchorCondition, anchorExistence, anchorEquality, anchorNegation, anchorGlobal:
		return true
	}
	return false
}
