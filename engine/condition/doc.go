// Package condition evaluates the key/operator/value conditions of
// preconditions and validate.deny, with the results of Kyverno v1.19
// (pkg/engine/variables/operator and pkg/engine/variables/evaluate.go).
//
// Read first: Operator and ParseOperator (the accepted spellings), Evaluate
// (one condition whose variables are already substituted) and
// Conditions.Eval (the legacy-list and any/all combinators, with their
// messages). This package does no variable substitution and knows nothing of
// the policy types: engine/policy compiles a block into a Conditions of its
// own condition type, engine/eval substitutes and calls EvaluateBudget
// through an EvalFunc. EvaluateBudget is Evaluate charging an engine.Budget
// with one step per pair of set elements compared and with the wildcard
// work, so that AnyIn between two long lists stops at the evaluation's
// budget or deadline. It imports only the standard library, apimachinery's
// resource.Quantity and blang/semver, and must not import other engine
// packages besides engine itself (for engine.Error and engine.Budget) and
// engine/internal (wildcard, quantity, operator: the operators and ranges
// of string patterns, parsed as engine/pattern parses them).
//
// # Operators
//
// ParseOperator is case-sensitive, like Kyverno's policy validation, and
// accepts the sixteen documented names plus the aliases "Equal" and
// "NotEqual". (Kyverno's CRD schema does not list the aliases, so a typed
// field such as foreach preconditions rejects them in a cluster; rule
// preconditions and deny conditions are schemaless and accept them.) In and
// NotIn are deprecated and behave differently from AnyIn/AllIn; see
// Operator.Replacements.
//
// # Types
//
// Evaluate's operands are JSON values. How Kyverno gets them matters:
// condition literals are decoded with apimachinery's util/json, so integral
// numbers nested in a literal list or map are int64, while a top-level
// scalar literal is re-decoded with encoding/json and is float64, as is every
// number a variable resolves to. To match Kyverno, the compiler must decode
// literals the same way; Evaluate then treats int64 as Kyverno does. It
// matters for the set operators, which format elements with fmt.Sprint:
// int64(100000000) is "100000000" but float64(100000000) is "1e+08"; and for
// Equals on maps and lists, which compares types exactly (float64(1) is not
// int64(1)).
//
// # Equals, NotEquals
//
// The key's type decides. bool: value must be the same bool. Numbers:
// int/int64/float64 compare by value (a fractional float never equals an
// int); a string value is parsed (as a float for a float key, as an int for
// an int key). Maps and lists: deep equality, exact types. Strings, in order:
// if either side is a duration string (time.ParseDuration, but not the
// literal "0") and the other a duration string or a number of seconds, the
// durations compare ("1h" equals "60m" and 3600); else if the key is a
// quantity and the value a string, both must be quantities ("1Gi" equals
// "1024Mi"; a non-quantity value, wildcard included, is false); else the
// value is a wildcard pattern for the key ('*', '?'; the key is never a
// pattern). Any other key type, nil included, is false.
//
// NotEquals is not the negation of Equals: a nil or unsupported key is false
// too, while a value of the wrong type or that does not parse is true.
//
// A nil key (a JMESPath result of null) is false for every operator,
// NotEquals and the not-in operators included. A variable that does not
// resolve never gets here: Kyverno fails the substitution, and the rule
// errors; policies add a default with JMESPath's || operator instead, and
// the empty string they usually default to is an ordinary string (Equals ""
// holds, AnyIn ["a"] does not).
//
// # AnyIn, AllIn, AnyNotIn, AllNotIn
//
// Key: a string, number or bool (formatted with fmt.Sprint) is one element;
// a list is a set of elements, each formatted with fmt.Sprint. Maps and nil
// keys are false. Two elements match when either, as a wildcard pattern,
// matches the other. Value:
//   - a list: its elements, formatted with fmt.Sprint;
//   - a string, for a scalar key: a wildcard pattern for the key; else, when
//     it is a range "a-b" ("1-10", "0Mi-1024Mi"), a range test of the key
//     as a validate pattern would do it (numbers, quantities, durations);
//     else a JSON array of strings, whose elements must equal the key
//     exactly; else a single element that must equal the key exactly;
//   - a string, for a list key: a single-element key equal to it is in it;
//     else a range, tested per key element; else a JSON array of strings or a
//     single element, matched with wildcards both ways;
//   - a number or bool, for a list key and AnyIn/AnyNotIn only: one element.
//
// A value of any other type, or a JSON string that is not an array of
// strings (`"[1,2]"`, `"true"`, `"{}"`), makes the condition false, whatever
// the operator (not-in included). For a list key, AnyIn needs one key
// element in the value, AllIn all of them (true for an empty key), AnyNotIn
// one key element not in the value, AllNotIn none in it (true for an empty
// key). For a list key and a range under AnyNotIn, Kyverno rewrites "a-b" to
// "a!-b" by replacing the first '-': with a negative lower bound ("-3-5")
// the result is a different pattern, kept as is.
//
// # In, NotIn (deprecated)
//
// A scalar key is looked up in a list value (wildcards both ways) or a
// string value (a wildcard pattern for the key, else a JSON array of strings
// matched exactly; any other string is invalid, so both In and NotIn are
// false). A list key, whose elements must all be strings, is a subset test
// with exact equality against a list of strings or a JSON array string; a
// one-element list key equal to the string value makes both In and NotIn
// true.
//
// # GreaterThan, GreaterThanOrEquals, LessThan, LessThanOrEquals
//
// A number key compares with a number value, or with a string value read as
// a duration when it is one (the key is then seconds) and else as a float.
// A string key is read, in order, as: durations (either side a duration
// string, the other a duration string or number of seconds); quantities
// (both sides strings: "500m" >= "0.5", "1Ki" > "1023"); a float or int,
// then compared like a number key; a strict semantic version (blang/semver:
// "1.10.0" > "1.9.0"; no "v" prefix, all three parts), when the value must be
// a version string too. Anything else, and keys of other types, is false.
//
// # Duration operators (deprecated)
//
// Numbers are seconds (a float is truncated to whole nanoseconds before
// being scaled, so 1.5 is 1s), strings must parse with time.ParseDuration
// ("0" included). Other types are false.
//
// # Quantities and cost
//
// Quantity strings are read as resource.ParseQuantity reads them, so a
// value below the 1n resolution rounds up ("1e-20" equals "1n") and binary
// suffixes cap at the int64 maximum. Parsing and comparison are guarded
// against huge exponents ("1e2147483647", "1e-2000000000"), on which
// apimachinery's arithmetic (and so Kyverno) would run for minutes: the
// results are the same, at a cost bounded by the length of the operands.
// Wildcard matching backtracks only to the last '*', so it costs at most
// len(pattern)*len(name) steps instead of Kyverno's exponential worst case.
// Nothing is cached between calls.
//
// # Combining conditions and messages
//
// See Conditions.Eval: an absent `any` holds but `any: []` fails; an empty
// `all`, an empty legacy list and an empty block hold (so `deny: {}`
// always denies). Messages are the conditions' own, unsubstituted. What the
// caller does with them, as Kyverno does:
//   - preconditions that fail skip the rule with the message
//     "preconditions not met" joined by "; " with the block's message;
//   - deny conditions that hold fail the rule with validate.message and the
//     block's message (here, those of the conditions that held) joined by
//     "; ", variables substituted in the result; with both empty the message
//     is "validation error: rule <name> failed". When they do not hold the
//     rule passes with "validation rule '<name>' passed.".
package condition
