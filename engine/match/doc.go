// Package match compiles Kyverno's match and exclude resource filters once
// per rule and checks them against each request, with Kyverno's semantics
// (pkg/engine/utils/match.go and pkg/utils/match in Kyverno v1.19).
//
// Read first:
//
//   - Resource: what a request looks like to the matcher (top-level GVK,
//     subresource, name, namespace, labels, operation, requester).
//   - Compile and Matcher: one match or exclude block (any, all, or the
//     legacy resources + user info form). Matcher.Matches uses the block as
//     a match block, Matcher.Excludes as an exclude block; the two differ
//     on empty filters and on requests without user info.
//   - CompileRule and Rule: both blocks of a rule plus the rule-level checks
//     Kyverno makes when it loads a policy. Rule.Applies is the hot path;
//     Rule.Explain gives Kyverno's reasons when a rule does not apply.
//   - Selector: a label selector with Kyverno's wildcard matchLabels, also
//     used outside match (validationFailureActionOverrides).
//
// Everything that depends only on the policy is done at compile time: kind
// strings are split into group/version/kind/subresource patterns,
// wildcards are classified (exact, prefix, suffix, ...), selectors are
// validated and split into plain and wildcard parts. Matches, Excludes and
// Applies do not allocate.
//
// Matching is case sensitive everywhere, as in Kyverno. Wildcards are '*'
// (any run of characters) and '?' (one character).
//
// The package depends only on the standard library, engine (errors),
// engine/kyverno (the policy model) and apimachinery's label key/value
// validation. It must not import engine/eval or engine/policy, which use it.
package match
