package condition

import "time"

// parseDurations reads key and value as durations the way Kyverno's
// parseDuration does for Equals, NotEquals and the numeric operators. At
// least one side must be a string time.ParseDuration accepts, other than the
// literal "0" (so "0" vs "0" is not a duration comparison, but "0s" is). The
// other side is then either such a string too or an int, int64 or float64
// number of seconds (a float is truncated to whole nanoseconds first, then
// scaled: 1.5 reads as 1s). Anything else is not a duration comparison.
func parseDurations(key, value any) (k, v time.Duration, ok bool) {
	kd, kok := durationString(key)
	vd, vok := durationString(value)
	if !kok && !vok {
		return 0, 0, false
	}
	if !kok {
		if kd, kok = durationSeconds(key); !kok {
			return 0, 0, false
		}
	}
	if !vok {
		if vd, vok = durationSeconds(value); !vok {
			return 0, 0, false
		}
	}
	return kd, vd, true
}

func durationString(x any) (time.Duration, bool) {
	s, ok := x.(string)
	if !ok || s == "0" || s == "" {
		return 0, false
	}
	// Every string time.ParseDuration accepts ends with a unit (s, m, h:
	// ns, us, ms, ...) or is a signed "0"; the others fail without
	// building its error (FuzzDurationString).
	if c := s[len(s)-1]; c != 's' && c != 'm' && c != 'h' && c != '0' {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	return d, err == nil
}

func durationSeconds(x any) (time.Duration, bool) {
	switch x := x.(type) {
	case int:
		return time.Duration(x) * time.Second, true
	case int64:
		return time.Duration(x) * time.Second, true
	case float64:
		return time.Duration(x) * time.Second, true
	}
	return 0, false
}

// durationOp implements the deprecated Duration* operators, after Kyverno's
// DurationOperatorHandler. Numbers are seconds; strings must parse with
// time.ParseDuration (here "0" is accepted); a number key takes a number or
// duration string value, a string key a number or duration string.
func durationOp(key any, op Operator, value any) bool {
	k, ok := durationOperand(key)
	if !ok {
		return false
	}
	v, ok := durationOperand(value)
	if !ok {
		return false
	}
	switch op {
	case DurationGreaterThan:
		return k > v
	case DurationGreaterThanOrEquals:
		return k >= v
	case DurationLessThan:
		return k < v
	case DurationLessThanOrEquals:
		return k <= v
	}
	return false
}

// durationOperand is an operand of the Duration* operators: a number of
// seconds or a string time.ParseDuration reads.
func durationOperand(x any) (time.Duration, bool) {
	switch x := x.(type) {
	case int, int64, float64:
		d, _ := durationSeconds(x)
		return d, true
	case string:
		d, err := time.ParseDuration(x)
		return d, err == nil
	}
	return 0, false
}
