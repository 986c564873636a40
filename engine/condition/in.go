package condition

import (
	"encoding/json"
	"strings"

	"github.com/verdict-policy/verdict/engine"
)

// Set operators. A scalar key (string, number, bool) is one element; a list
// key is a set whose elements are formatted with fmt.Sprint. The value may be
// a list (elements formatted the same way), a string (a wildcard pattern, a
// range such as "1-10", a JSON array of strings, or a single element), or,
// for a list key under AnyIn/AnyNotIn only, a scalar number or bool.
// Elements match when either one, used as a wildcard pattern, matches the
// other. Kyverno's quirks are kept, see the comments below and doc.go.

// scalarKey returns the string form of a scalar key, as Kyverno formats it.
func scalarKey(key any) (string, bool) {
	switch key := key.(type) {
	case string:
		return key, true
	case int, int32, int64, float32, float64, bool:
		return sprint(key), true
	}
	return "", false
}

// listKey formats each element of a list key.
func listKey(key []any) []string {
	out := make([]string, len(key))
	for i, v := range key {
		out[i] = sprint(v)
	}
	return out
}

// elementsMatch reports whether a or b, as a wildcard pattern, matches the
// other, charging bud with the wildcard work (a step at least).
func elementsMatch(a, b string, bud *engine.Budget) bool {
	if m, _ := bud.Match(a, b); m {
		return true
	}
	m, _ := bud.Match(b, a)
	return m
}

// setKeys reads the key of an Any*/All* operator: a scalar key decides
// the operator at once (done, with its result), a list gives its elements.
func setKeys(key, value any, not bool, b *engine.Budget) (keys []string, done, result bool) {
	if k, ok := scalarKey(key); ok {
		found, valid := scalarIn(k, value, false, b)
		return nil, true, valid && found != not
	}
	list, ok := key.([]any)
	if !ok {
		return nil, true, false
	}
	return listKey(list), false, false
}

// anyIn implements AnyIn and, with not set, AnyNotIn.
func anyIn(key, value any, not bool, b *engine.Budget) bool {
	keys, done, result := setKeys(key, value, not, b)
	if done {
		return result
	}
	switch value := value.(type) {
	case []any:
		return anyOf(keys, listKey(value), not, b)
	case int, int32, int64, float32, float64, bool:
		return anyOf(keys, []string{sprint(value)}, not, b)
	case string:
		if len(keys) == 1 && keys[0] == value {
			return !not
		}
		if isRange(value) {
			pattern := value
			if not {
				// Kyverno turns "a-b" into the not-in-range pattern "a!-b" by
				// replacing the first '-', which for "-3-5" is the sign.
				pattern = strings.Replace(value, "-", "!-", 1)
			}
			for _, k := range keys {
				if matchStringPattern(k, pattern) {
					return true
				}
			}
			return false
		}
		values, valid := stringValues(value)
		return valid && anyOf(keys, values, not, b)
	}
	return false
}

// allIn implements AllIn and, with not set, AllNotIn.
func allIn(key, value any, not bool, b *engine.Budget) bool {
	keys, done, result := setKeys(key, value, not, b)
	if done {
		return result
	}
	switch value := value.(type) {
	case []any:
		return allOf(keys, listKey(value), not, b)
	case string:
		if len(keys) == 1 && keys[0] == value {
			return !not
		}
		if isRange(value) {
			for _, k := range keys {
				if matchStringPattern(k, value) == not {
					return false
				}
			}
			return true
		}
		values, valid := stringValues(value)
		return valid && allOf(keys, values, not, b)
	}
	// Unlike AnyIn, a scalar number or bool value is not accepted.
	return false
}

// scalarIn reports whether the scalar key k is in value, for the
// Any*/All* operators, or with legacy for In and NotIn (whose string value
// must be a JSON array, and is no range). valid is false when value has a
// type or form Kyverno rejects (the operator is then false whether negated
// or not).
func scalarIn(k string, value any, legacy bool, b *engine.Budget) (found, valid bool) {
	switch value := value.(type) {
	case []any:
		for _, v := range value {
			if elementsMatch(sprint(v), k, b) {
				return true, true
			}
		}
		return false, true
	case string:
		if m, _ := b.Match(value, k); m {
			return true, true
		}
		var values []string
		switch {
		case legacy:
			if err := json.Unmarshal([]byte(value), &values); err != nil {
				return false, false
			}
		case isRange(value):
			return matchStringPattern(k, value), true
		default:
			if values, valid = stringValues(value); !valid {
				return false, false
			}
		}
		// Elements of a JSON array string match exactly, no wildcards.
		for _, v := range values {
			if v == k {
				return true, true
			}
		}
		return false, true
	}
	return false, false
}

// stringValues reads a string value as a set: a valid JSON document must be
// an array of strings (null elements read as ""; anything else makes the
// condition invalid), any other string is a single element.
func stringValues(s string) (values []string, valid bool) {
	if !json.Valid([]byte(s)) {
		return []string{s}, true
	}
	if err := json.Unmarshal([]byte(s), &values); err != nil {
		return nil, false
	}
	return values, true
}

// anyOf reports, without not, whether some key matches some value and,
// with not, whether some key matches no value.
func anyOf(keys, values []string, not bool, b *engine.Budget) bool {
	for _, k := range keys {
		if matchesAny(k, values, b) != not {
			return true
		}
	}
	return false
}

// allOf reports, without not, whether every key matches some value and,
// with not, whether no key matches any value. Both hold for no keys.
func allOf(keys, values []string, not bool, b *engine.Budget) bool {
	for _, k := range keys {
		if matchesAny(k, values, b) == not {
			return false
		}
	}
	return true
}

func matchesAny(k string, values []string, b *engine.Budget) bool {
	for _, v := range values {
		if elementsMatch(k, v, b) {
			return true
		}
		if b.Err() != nil {
			return false
		}
	}
	return false
}

// in implements the deprecated In and, with not set, NotIn. They are
// stricter than AnyIn/AllIn: a list key is a subset test with exact string
// equality, its elements must all be strings (Kyverno panics otherwise; here
// the condition is false), as must those of a list value; a string value
// that is neither a wildcard match nor a JSON array of strings is invalid
// (false either way). A one-element list key equal to a string value is in
// it, and then also "not in" it: NotIn is true too.
func in(key, value any, not bool, b *engine.Budget) bool {
	if k, ok := scalarKey(key); ok {
		found, valid := scalarIn(k, value, true, b)
		return valid && found != not
	}
	list, ok := key.([]any)
	if !ok {
		return false
	}
	keys := make([]string, len(list))
	for i, v := range list {
		s, ok := v.(string)
		if !ok {
			return false
		}
		keys[i] = s
	}
	var values []string
	switch value := value.(type) {
	case []any:
		values = make([]string, len(value))
		for i, v := range value {
			s, ok := v.(string)
			if !ok {
				return false
			}
			values[i] = s
		}
	case string:
		if len(keys) == 1 && keys[0] == value {
			return true
		}
		if err := json.Unmarshal([]byte(value), &values); err != nil {
			return false
		}
	default:
		return false
	}
	set := make(map[string]struct{}, len(values))
	for _, v := range values {
		set[v] = struct{}{}
	}
	for _, k := range keys {
		if _, ok := set[k]; !ok {
			// Not a subset: In is false, NotIn true.
			return not
		}
	}
	return !not
}
