// Package policy compiles kyverno.io ClusterPolicies and Policies into an
// immutable, evaluation-ready *Policy.
//
// Compile does, once per policy version, everything that depends only on the
// policy: it expands autogen rules for pod controllers (engine/autogen),
// compiles match and exclude blocks (engine/match), parses every {{ }}
// variable into a JMESPath AST (engine/variables), pre-parses validate
// patterns that hold no variables (engine/pattern) and condition operators
// (engine/condition), and rejects what Kyverno rejects, such as
// request.userInfo in a background policy, with an *engine.Error whose Path
// names the field.
//
// Read Compile and Policy first, then Rule. Evaluation lives in engine/eval,
// which imports this package; this package never imports eval, and does no
// I/O.
package policy
