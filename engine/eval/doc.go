// Package eval evaluates compiled policies against one request, with the
// results and messages Kyverno gives.
//
// Start at Engine.Evaluate: for each policy, in order, and each of its rules
// (autogen rules included), it applies match and exclude, loads the rule's
// context entries lazily (an entry loads the first time a variable names
// it, as in Kyverno), checks preconditions, and runs the validate pattern,
// anyPattern, deny or foreach. Each rule that applies yields one RuleResult:
// pass, fail, warn (a fail of a policy annotated
// policies.kyverno.io/scored: "false"), error or skip.
//
// Variables live in a scope: the JMESPath root of the rule (request,
// serviceAccountName, images, context entries, element). Scopes are never
// shared between goroutines and a foreach element gets a child scope, so no
// evaluation changes another's data; the compiled *policy.Policy is never
// modified. An Engine is safe for concurrent use.
//
// Cluster data comes through Lookup, which the host implements (Kubernetes
// clients in the server, values files in the CLI, maps in tests). This
// package does no I/O of its own and must not import client-go, grpc or any
// package outside engine/.
package eval
