package condition

import (
	"strconv"

	"github.com/blang/semver/v4"
	"github.com/verdict-policy/verdict/engine/internal/quantity"
)

// numeric implements GreaterThan, GreaterThanOrEquals, LessThan and
// LessThanOrEquals, after Kyverno's NumericOperatorHandler. The key must be
// a number or a string; see numericString for the order in which a string
// key is read.
func numeric(key any, op Operator, value any) bool {
	switch key := key.(type) {
	case int:
		return numericNumber(float64(key), key, op, value)
	case int64:
		return numericNumber(float64(key), key, op, value)
	case float64:
		return numericNumber(key, key, op, value)
	case string:
		return numericString(key, op, value)
	}
	return false
}

// numericNumber compares a number key (k, with its original typed form in
// typed for duration scaling) with value: numbers compare as float64; a
// duration string value compares the key as seconds; any other string is
// parsed with strconv.ParseFloat.
func numericNumber(k float64, typed any, op Operator, value any) bool {
	switch v := value.(type) {
	case int:
		return compare(k, float64(v), op)
	case int64:
		return compare(k, float64(v), op)
	case float64:
		return compare(k, v, op)
	case string:
		if kd, vd, ok := parseDurations(typed, v); ok {
			return compare(kd.Seconds(), vd.Seconds(), op)
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return compare(k, f, op)
		}
		if i, err := strconv.ParseInt(v, 10, 64); err == nil {
			return compare(k, float64(i), op)
		}
	}
	return false
}

// numericString compares a string key, trying in turn: durations (either
// side a duration string, the other one too or a number of seconds);
// quantities (both sides strings that resource.ParseQuantity accepts, so
// "1Gi" > "1000Mi" and "1.5" < "1.10"); the key as a float or int against
// value like a number key; the key as a strict semantic version, when value
// must be one too ("1.10.0" > "1.9.0"; "v1.2.3" and "1.2" are not versions).
func numericString(key string, op Operator, value any) bool {
	if kd, vd, ok := parseDurations(key, value); ok {
		return compare(kd.Seconds(), vd.Seconds(), op)
	}
	if s, ok := value.(string); ok {
		if kq, err := quantity.Parse(key); err == nil {
			if vq, err := quantity.Parse(s); err == nil {
				return compare(float64(quantity.Cmp(kq, vq)), 0, op)
			}
		}
	}
	if f, err := strconv.ParseFloat(key, 64); err == nil {
		return numericNumber(f, f, op, value)
	}
	if i, err := strconv.ParseInt(key, 10, 64); err == nil {
		return numericNumber(float64(i), i, op, value)
	}
	kv, err := semver.Parse(key)
	if err != nil {
		return false
	}
	s, ok := value.(string)
	if !ok {
		return false
	}
	vv, err := semver.Parse(s)
	if err != nil {
		return false
	}
	switch op {
	case GreaterThan:
		return kv.GT(vv)
	case GreaterThanOrEquals:
		return kv.GTE(vv)
	case LessThan:
		return kv.LT(vv)
	case LessThanOrEquals:
		return kv.LTE(vv)
	}
	return false
}

func compare(k, v float64, op Operator) bool {
	switch op {
	case GreaterThan:
		return k > v
	case GreaterThanOrEquals:
		return k >= v
	case LessThan:
		return k < v
	case LessThanOrEquals:
		return k <= v
	}
	return false
}
