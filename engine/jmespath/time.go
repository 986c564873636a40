package jmespath

import (
	"strconv"
	"time"
)

// The time functions take and return RFC 3339 strings and Go duration
// strings ("1h30m"). Parse errors are Go's time.ParseError texts, as in
// Kyverno. The clock is env.now, never time.Now.

func rfc3339Arg(args []any, i int) (time.Time, error) {
	return time.Parse(time.RFC3339, str(args, i))
}

func durationArg(args []any, i int) (time.Duration, error) {
	return time.ParseDuration(str(args, i))
}

// time_since(layout, start, end) returns end-start as a duration string.
// An empty layout means RFC 3339; an empty end means now.
func jpTimeSince(e *env, args []any) (any, error) {
	layout := str(args, 0)
	if layout == "" {
		layout = time.RFC3339
	}
	start, err := time.Parse(layout, str(args, 1))
	if err != nil {
		return nil, err
	}
	end := e.now()
	if s := str(args, 2); s != "" {
		if end, err = time.Parse(layout, s); err != nil {
			return nil, err
		}
	}
	return end.Sub(start).String(), nil
}

func jpTimeNow(e *env, _ []any) (any, error) {
	return e.now().Format(time.RFC3339), nil
}

func jpTimeNowUTC(e *env, _ []any) (any, error) {
	return e.now().UTC().Format(time.RFC3339), nil
}

// time_to_cron turns a time into "minute hour day month weekday", in the
// time's own zone.
func jpTimeToCron(_ *env, args []any) (any, error) {
	t, err := rfc3339Arg(args, 0)
	if err != nil {
		return nil, err
	}
	return strconv.Itoa(t.Minute()) + " " +
		strconv.Itoa(t.Hour()) + " " +
		strconv.Itoa(t.Day()) + " " +
		strconv.Itoa(int(t.Month())) + " " +
		strconv.Itoa(int(t.Weekday())), nil
}

// timeAndDuration reads the arguments (t, d) of time_add and
// time_truncate.
func timeAndDuration(args []any) (time.Time, time.Duration, error) {
	t, err := rfc3339Arg(args, 0)
	if err != nil {
		return time.Time{}, 0, err
	}
	d, err := durationArg(args, 1)
	return t, d, err
}

func jpTimeAdd(_ *env, args []any) (any, error) {
	t, d, err := timeAndDuration(args)
	if err != nil {
		return nil, err
	}
	return t.Add(d).Format(time.RFC3339), nil
}

// time_parse(layout, value) converts to RFC 3339. A layout that is an
// integer means value is Unix seconds (result in UTC).
func jpTimeParse(_ *env, args []any) (any, error) {
	layout, value := str(args, 0), str(args, 1)
	if _, err := strconv.ParseInt(layout, 10, 64); err == nil {
		seconds, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return nil, err
		}
		return time.Unix(seconds, 0).UTC().Format(time.RFC3339), nil
	}
	t, err := time.Parse(layout, value)
	if err != nil {
		return nil, err
	}
	return t.Format(time.RFC3339), nil
}

func jpTimeUTC(_ *env, args []any) (any, error) {
	t, err := rfc3339Arg(args, 0)
	if err != nil {
		return nil, err
	}
	return t.UTC().Format(time.RFC3339), nil
}

// time_diff(start, end) returns end-start as a duration string.
func jpTimeDiff(_ *env, args []any) (any, error) {
	start, end, err := twoTimes(args)
	if err != nil {
		return nil, err
	}
	return end.Sub(start).String(), nil
}

func jpTimeBefore(_ *env, args []any) (any, error) {
	a, b, err := twoTimes(args)
	if err != nil {
		return nil, err
	}
	return a.Before(b), nil
}

func jpTimeAfter(_ *env, args []any) (any, error) {
	a, b, err := twoTimes(args)
	if err != nil {
		return nil, err
	}
	return a.After(b), nil
}

// time_between(t, start, end) is exclusive at both ends.
func jpTimeBetween(_ *env, args []any) (any, error) {
	t, start, err := twoTimes(args)
	if err != nil {
		return nil, err
	}
	end, err := rfc3339Arg(args, 2)
	if err != nil {
		return nil, err
	}
	return t.After(start) && t.Before(end), nil
}

// time_truncate(t, d) rounds t down to a multiple of d since the zero time.
func jpTimeTruncate(_ *env, args []any) (any, error) {
	t, d, err := timeAndDuration(args)
	if err != nil {
		return nil, err
	}
	return t.Truncate(d).Format(time.RFC3339), nil
}

func twoTimes(args []any) (time.Time, time.Time, error) {
	a, err := rfc3339Arg(args, 0)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	b, err := rfc3339Arg(args, 1)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	return a, b, nil
}
