package condition

import "strings"

// Conditions is the compiled form of a preconditions or deny.conditions
// block: either the legacy plain list, in which every condition must hold,
// or the {any: [...], all: [...]} form. C is whatever the caller compiles one
// condition to (key and value templates, operator, message); this package
// only combines the outcomes.
type Conditions[C any] struct {
	// Legacy is set when the block was written as a plain list; the list is
	// in All and Any is unused.
	Legacy bool
	// Any holds the `any` conditions. nil means `any` was absent (it then
	// holds); a non-nil empty slice means `any: []` was written, and an
	// `any` with no condition that holds fails.
	Any []C
	// All holds the `all` conditions (or the legacy list). Absent and empty
	// are the same: no condition to fail.
	All []C
}

// EvalFunc evaluates one condition: it substitutes variables in its key and
// value, applies Evaluate, and returns the result with the condition's
// message (verbatim, "" when it has none). An error (a variable that cannot
// be resolved) aborts the whole block.
type EvalFunc[C any] func(C) (ok bool, message string, err error)

// Eval evaluates the block and returns whether it holds and its message,
// with Kyverno's rules (pkg/engine/variables/evaluate.go):
//
// Legacy list: conditions are evaluated in order and the first false one
// stops evaluation; the result is then false with that condition's message.
// When all hold, the message is the non-empty messages of all of them joined
// with ";" (no space). An empty list holds.
//
// any/all: the `any` conditions are evaluated in order until one holds
// (absent `any` holds; `any: []` fails). The `all` conditions are then
// evaluated in order until one fails, whatever the outcome of `any`. The
// block holds when both parts hold, and its message is the non-empty
// messages of the conditions that held (the first `any` that held, every
// `all` evaluated), joined with "; ". Otherwise it fails with the messages
// of the conditions that failed: every `any` condition evaluated before one
// held (or all of them) and the `all` condition that failed. An empty block
// ({} or no conditions at all, like `deny: {}`) holds.
//
// The first error from eval is returned at once with false and "".
func (cs Conditions[C]) Eval(eval EvalFunc[C]) (bool, string, error) {
	if cs.Legacy {
		return evalLegacy(cs.All, eval)
	}
	anyOK, allOK := true, true
	var passed, failed []string
	if cs.Any != nil {
		anyOK = false
		for _, c := range cs.Any {
			ok, msg, err := eval(c)
			if err != nil {
				return false, "", err
			}
			// Only non-empty messages are joined: most conditions have
			// none, and the lists then stay unallocated.
			if ok {
				anyOK = true
				passed = appendNonEmpty(passed, msg)
				break
			}
			failed = appendNonEmpty(failed, msg)
		}
	}
	for _, c := range cs.All {
		ok, msg, err := eval(c)
		if err != nil {
			return false, "", err
		}
		if !ok {
			allOK = false
			failed = appendNonEmpty(failed, msg)
			break
		}
		passed = appendNonEmpty(passed, msg)
	}
	if anyOK && allOK {
		return true, joinNonEmpty(passed, "; "), nil
	}
	return false, joinNonEmpty(failed, "; "), nil
}

func evalLegacy[C any](list []C, eval EvalFunc[C]) (bool, string, error) {
	var passed []string
	for _, c := range list {
		ok, msg, err := eval(c)
		if err != nil {
			return false, "", err
		}
		if !ok {
			return false, msg, nil
		}
		passed = append(passed, msg)
	}
	return true, joinNonEmpty(passed, ";"), nil
}

// EvalEach evaluates a list of blocks that must all hold, as Kyverno does
// for the conditions of a verifyImages attestation: the first block that
// fails stops evaluation and gives the result false with its message; when
// all hold, their non-empty messages are joined with ";". An empty list
// holds.
func EvalEach[C any](blocks []Conditions[C], eval EvalFunc[C]) (bool, string, error) {
	return evalLegacy(blocks, func(b Conditions[C]) (bool, string, error) { return b.Eval(eval) })
}

func appendNonEmpty(list []string, s string) []string {
	if s == "" {
		return list
	}
	return append(list, s)
}

// joinNonEmpty joins the non-empty elements of elems with sep.
func joinNonEmpty(elems []string, sep string) string {
	var b strings.Builder
	n := 0
	for _, s := range elems {
		if s == "" {
			continue
		}
		if n > 0 {
			b.WriteString(sep)
		}
		b.WriteString(s)
		n++
	}
	return b.String()
}
