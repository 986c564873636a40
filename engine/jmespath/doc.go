// Package jmespath evaluates JMESPath expressions with Kyverno's custom
// function table (to_upper, regex_match, add, time_since, x509_decode, ...),
// on top of github.com/kyverno/go-jmespath so that core JMESPath behaves
// exactly as in Kyverno (a missing key is a NotFoundError, see IsNotFound).
//
// Read first:
//
//   - Parse turns an expression into an immutable *Query and checks every
//     function call against the table (name, arity, literal argument
//     types). Call it at compile time. It refuses, before go-jmespath's
//     recursive parser sees them, expressions beyond MaxExpressionBytes
//     and MaxExpressionNesting, and trees deeper than MaxExpressionDepth
//     (guard.go), so that no expression can overflow the stack; and
//     expressions whose result can repeat their input more than
//     MaxExpressionFanout times ([@, @] | [@, @] | ...), whose results
//     would be exponentially large once copied (fanout.go). Search bounds
//     the results of the expressions that can repeat their input at all
//     by MaxResultNodes.
//   - New builds an *Interpreter from Options (clock, random source,
//     default image registry, DNS resolver); Interpreter.Search evaluates a
//     Query against JSON-shaped data. Call it at evaluation time.
//   - functions (table.go) is the one table of functions: name, argument
//     types, return type, implementation and note for each. Functions
//     exposes it for listings.
//   - Tree and SyntaxLocation (tree.go) serve verdict jp: the parse tree of
//     an expression as go-jmespath prints it, and the caret under a syntax
//     error.
//
// Search has three ways to evaluate, all with go-jmespath's result: simple
// paths and path || literal walk the data directly (path.go); other
// queries made only of supported node kinds are compiled by Parse into a
// tree of evaluator nodes (compile.go), which evaluate keys, values and
// length themselves and call the other functions through the interpreter's
// own function caller; the rest, and every evaluation the
// fast forms cannot finish (an error, a missing key at the top, a value
// only reflection reads), run go-jmespath's interpreter, which builds the
// result or the error itself.
//
// Function results are bounded: at most MaxStringBytes for a string and
// MaxListLength for a list; the functions that can grow their result beyond
// a small constant times their arguments (replace, regex_replace_all,
// split, base64_encode, items, join, to_string, ...) compute its size
// before they build it, and the arithmetic functions refuse quantities
// beyond MaxQuantityDigits (caps.go). go-jmespath's join and to_string
// are replaced by capped copies.
//
// Function results are JSON-shaped (float64, string, bool, nil, []any,
// map[string]any). The implementations follow Kyverno v1.19.0
// (pkg/engine/jmespath) in argument types, results and error texts; the
// tests pin the few places where this package deliberately differs.
//
// The package does no I/O and reads no clock or randomness it is not given:
// time functions use Options.Now, random uses Options.Rand and
// is_external_url resolves host names only through Options.LookupIP. It
// must not import anything of this module except engine (for
// engine.Error) and the engine's internal helpers (engine/internal/...:
// wildcard patterns, image references), nor client-go, loggers or global
// configuration.
package jmespath
