// Package pattern matches resources against validate.pattern and
// validate.anyPattern overlays with Kyverno v1.19's semantics: anchors,
// operators, wildcards, and the pass / fail / skip / error outcome with
// Kyverno's failure path and messages.
//
// Read first: Compile and Pattern.Validate, which returns a Result
// (Result.RuleMessage gives Kyverno's rule message); ValidateAny and
// AnyResult for anyPattern. $(...) references and {{ }} variables are
// substituted before matching, by engine/variables. A caller's pipeline:
//
//	policy compile:  variables.ParseDocument(raw)     resolves $(...) references
//	                 Compile(pat)                     reject the policy (unsupported anchor, ...)
//	evaluation:      (if pat has {{ }}) render, then CompileSubstituted
//	                 p.Validate(resource) -> Result
//
// # Semantics, as Kyverno (pkg/engine/validate, anchor, pattern, wildcards)
//
//   - A map pattern needs a map. Anchors are evaluated first, in key order,
//     then the other keys (those whose value holds anchors first). A missing
//     resource key reads as null.
//   - (key) conditional: if the key is missing or its value does not match,
//     the enclosing map is skipped; a skipped list element is ignored unless
//     all elements are skipped; a skip reaching the top skips the rule.
//   - <(key) global: if present and not matching, skips as far up as no list
//     element applied. =(key) equality: if present, must match. X(key)
//     negation: must be absent. ^(key) existence: each map of the pattern
//     list must match at least one element of the resource list.
//   - +(key) is rejected by Compile, as by Kyverno's policy validation, and
//     is a plain key for CompileSubstituted, as in Kyverno's engine.
//   - A list pattern matches every element of the resource list against its
//     first element (a map or a scalar); a list of lists is matched by
//     position. An empty list pattern fails.
//   - A scalar pattern against a resource list must match every element.
//   - Strings: "a|b" alternatives of "x&y" conjunctions of conditions; a
//     condition is an optional operator (>, <, >=, <=, !) and an operand, or
//     a range "a-b" / "a!-b". Operands compare as durations when both sides
//     parse as durations, else as quantities (1Gi, 100m, 5) when both parse,
//     else, for no operator and "!" only, as strings with * and ? wildcards.
//     A null resource value reads as "0" for durations and quantities.
//   - A plain key whose pattern is "*" only requires a non-null value.
//   - Numbers compare to ints, floats and numeric strings; bools only to
//     bools; null matches null, "", 0 and false.
//   - Wildcards in keys are expanded only under metadata.labels and
//     metadata.annotations.
//   - Error (no path): the resource fails and some condition or existence
//     anchor key was never found in the resource, or a list-of-lists pattern
//     is longer than the resource list. Kyverno reports a rule error.
//
// Resource values are JSON-decoded Go values. Numbers keep their Go type:
// float64 is matched as the Kyverno CLI does (it turns every resource number
// into a float64), int64 and json.Number as Kyverno's webhook does (integers
// as int64); see values.go. Pattern numbers are read as Kyverno decodes
// them: integral ones as int64.
//
// Where Kyverno depends on Go's random map order (several label keys
// matching one wildcard key, several values sharing a reference path),
// this package picks one of Kyverno's possible outcomes deterministically;
// see metadata.go.
//
// ValidateBudget and ValidateAnyBudget charge an engine.Budget with one step
// per resource node visited and with the work of wildcard matches (label
// key expansion included), and stop with an Error result once it is spent
// or its context is done: a pattern over a list of 50,000 elements, or an
// existence anchor with many maps, cannot outlive the evaluation's deadline.
//
// This package depends only on the standard library, k8s.io/apimachinery
// (resource quantities) and engine (errors). A compiled Pattern is immutable
// and safe for concurrent use.
package pattern
