// Package variables implements Kyverno's {{ }} variables: each string of a
// policy is parsed once, at compile time, and rendered for every request.
//
// Start with Template (one string: Parse, then Render) and Document (a JSON
// value of the policy with templates in its strings and map keys:
// ParseDocument, then Render; StaticAt reads a field that holds no
// variable). Rendering asks the evaluator for the value of
// each variable through a Resolver, a function of one parsed JMESPath query;
// Env carries it together with the one fact of the request the rules depend
// on (a DELETE reads request.oldObject for request.object).
//
// The rules are Kyverno's (pkg/engine/variables/vars.go), reproduced down to
// their corner cases and pinned by tests:
//
//   - A string that is exactly one variable renders to the value itself,
//     whatever its type; a map or list it returns is searched for variables
//     in turn. A variable inside text renders as text: strings as they are,
//     anything else as JSON in json-iterator's style (3, 2.5, 1e-07, sorted
//     keys, HTML-escaped).
//   - \{{ ... }} is not a variable; the backslash is dropped when rendering.
//   - Variables nest: {{ a.{{ b }} }} renders b, then parses and resolves the
//     outer one. A value that holds variables is substituted again, unless
//     the variable is shallow: {{- ... }}.
//   - {{@}} stands for the field holding it: the path inside the document,
//     past "foreach" and its first two elements, under target or
//     request.object.
//   - $( ) references to other fields of the same document are resolved when
//     the document is parsed, as Kyverno does before variables; \$( ) is
//     unescaped.
//   - A variable that is not valid JMESPath (also once inner variables are
//     replaced by null) is a compile error with engine.CodeInvalidVariable;
//     one that cannot be resolved is engine.CodeVariableNotResolved with
//     Kyverno's message "failed to resolve <var> at path <path>: <cause>".
//
// SplitName splits a dotted variable name into its keys as Kyverno's
// context.AddVariable does (a key in double quotes may hold dots), and
// SetPath binds a value under those keys. UserInfoVar and
// References serve the compile-time check of background policies (no
// request.userInfo, roles, clusterRoles, serviceAccountName or
// serviceAccountNamespace).
//
// Unlike Kyverno, rendering is bounded (passes, nesting depth, variables
// resolved, bytes built, bytes searched for variables), so a value that
// embeds itself is an error instead of a hang, and a string of a megabyte
// nesting variables deep an error within a second. Error messages quote
// variables as jmespath.Excerpt shortens them.
//
// This package depends on engine (errors) and engine/jmespath (parsing)
// only. It does not evaluate JMESPath itself, keeps no global state and
// caches nothing between renders.
package variables
