// Package wildcard is Kyverno's wildcard matching: '*' matches any run of
// characters (also none), '?' exactly one character, everything else
// itself, case sensitive. An empty pattern matches only the empty string.
// Characters are compared as runes, each invalid UTF-8 byte reading as
// U+FFFD, which gives the results of github.com/IGLOU-EU/go-wildcard Match,
// the matcher Kyverno uses for kinds, names, namespaces, annotations,
// labels, subjects, pattern values, condition values and JMESPath's
// wildcard function.
//
// Unlike that recursive matcher, which takes exponential time on patterns
// such as "*a*a*a*a*b", Match never backtracks. The stars cut the pattern
// into segments: the first must match at the start of the name, the last at
// its end, and each one in between is found at its leftmost place after the
// one before it (taking the leftmost place never loses a match). A segment
// without '?' is found with strings.Index; a segment with '?' by a
// bit-parallel scan (shift-and) over the name's runes, one word operation
// per rune and 64 pattern runes (or, when segment and name are short, by
// trying each position). So a match takes O(n + m) steps when no
// segment between stars holds a '?' and at most O(n·⌈k/64⌉ + m) otherwise,
// for a name of n bytes, a pattern of m bytes and a longest such segment of
// k runes; it uses no recursion, and allocates only for a segment with '?'
// longer than 64 runes or holding more than a few distinct non-ASCII runes.
//
// MatchMeter and Pattern.MatchMeter report that work to a Meter, which can
// stop a match that has gone on too long: engine.Budget charges it to the
// evaluation's step budget and stops it when the deadline passes.
//
// This package is internal to the engine and imports only the standard
// library.
package wildcard
