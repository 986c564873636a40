package condition

import (
	"math"
	"strconv"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/internal/quantity"
	"github.com/verdict-policy/verdict/engine/internal/wildcard"
)

// equals implements Equals (and its alias Equal), after Kyverno's
// EqualHandler. The key's type picks the comparison; a value of another
// type is false except for the number/string and duration crossovers.
func equals(key, value any, b *engine.Budget) bool {
	switch key := key.(type) {
	case bool:
		v, ok := value.(bool)
		return ok && key == v
	case int:
		return equalInt(int64(key), value)
	case int64:
		return equalInt(key, value)
	case float64:
		return equalFloat(key, value)
	case string:
		return equalString(key, value, b)
	case map[string]any:
		v, ok := value.(map[string]any)
		return ok && deepEqual(key, v)
	case []any:
		v, ok := value.([]any)
		return ok && deepEqual(key, v)
	}
	return false
}

// equalString compares a string key: first as durations (when either side
// is a duration string, the other may be a number of seconds), then as
// quantities when the key is one (a string value that is not a quantity is
// then false, wildcards included), then with value as a wildcard pattern.
func equalString(key string, value any, b *engine.Budget) bool {
	if k, v, ok := parseDurations(key, value); ok {
		return k.Seconds() == v.Seconds()
	}
	if kq, err := quantity.Parse(key); err == nil {
		if s, ok := value.(string); ok {
			vq, err := quantity.Parse(s)
			if err != nil {
				return false
			}
			return quantity.Cmp(kq, vq) == 0
		}
	}
	if s, ok := value.(string); ok {
		m, _ := b.Match(s, key)
		return m
	}
	return false
}

// equalFloat compares a float64 key. An integral key equals an int value
// of the same magnitude; a fractional key never equals an int; a string
// value is parsed with strconv.ParseFloat.
func equalFloat(key float64, value any) bool {
	switch v := value.(type) {
	case int:
		if key == math.Trunc(key) {
			return int(key) == v
		}
		return false
	case int64:
		if key == math.Trunc(key) {
			return int64(key) == v
		}
		return false
	case float64:
		return key == v
	case string:
		f, err := strconv.ParseFloat(v, 64)
		return err == nil && f == key
	}
	return false
}

// equalInt compares an int or int64 key. A string value must parse with
// strconv.ParseInt ("1.0" does not).
func equalInt(key int64, value any) bool {
	switch v := value.(type) {
	case int:
		return int64(v) == key
	case int64:
		return v == key
	case float64:
		if v == math.Trunc(v) {
			return int64(v) == key
		}
		return false
	case string:
		i, err := strconv.ParseInt(v, 10, 64)
		return err == nil && i == key
	}
	return false
}

// notEquals implements NotEquals (and NotEqual). It is not the negation of
// equals: a key of an unsupported type (nil included) is false, while a
// value of the wrong type or that does not parse is true.
func notEquals(key, value any, b *engine.Budget) bool {
	switch key := key.(type) {
	case bool:
		v, ok := value.(bool)
		return !ok || key != v
	case int:
		return notEqualInt(int64(key), value)
	case int64:
		return notEqualInt(key, value)
	case float64:
		return notEqualFloat(key, value)
	case string:
		return notEqualString(key, value, b)
	case map[string]any:
		v, ok := value.(map[string]any)
		return !ok || !deepEqual(key, v)
	case []any:
		v, ok := value.([]any)
		return !ok || !deepEqual(key, v)
	}
	return false
}

func notEqualString(key string, value any, b *engine.Budget) bool {
	if k, v, ok := parseDurations(key, value); ok {
		return k.Seconds() != v.Seconds()
	}
	if kq, err := quantity.Parse(key); err == nil {
		if s, ok := value.(string); ok {
			if s == "" {
				return !wildcard.Match(s, key)
			}
			vq, err := quantity.Parse(s)
			if err != nil {
				return true
			}
			return quantity.Cmp(kq, vq) != 0
		}
	}
	if s, ok := value.(string); ok {
		m, _ := b.Match(s, key)
		return !m
	}
	return true
}

func notEqualFloat(key float64, value any) bool {
	switch v := value.(type) {
	case int:
		if key == math.Trunc(key) {
			return int(key) != v
		}
		return true
	case int64:
		if key == math.Trunc(key) {
			return int64(key) != v
		}
		return true
	case float64:
		return key != v
	case string:
		f, err := strconv.ParseFloat(v, 64)
		return err != nil || f != key
	}
	return true
}

func notEqualInt(key int64, value any) bool {
	switch v := value.(type) {
	case int:
		return int64(v) != key
	case int64:
		return v != key
	case float64:
		if v == math.Trunc(v) {
			return int64(v) != key
		}
		return true
	case string:
		i, err := strconv.ParseInt(v, 10, 64)
		return err != nil || i != key
	}
	return true
}
