// Package operator is the operators of Kyverno's string patterns: a
// leading >=, <=, >, < or !, or a range "a-b" or "a!-b" whose endpoints are
// numbers with an optional unit ("1-10", "0Mi-1024Mi", "-10--8"). Kyverno
// reads them in engine/pattern (validate patterns) and, through the same
// code, for the string values of the condition operators AnyIn, AllNotIn,
// ... (engine/condition): both parse them here.
//
// Read first: Of (the operator of a pattern, in Kyverno's order of checks:
// operator.GetOperatorFromStringPattern), SplitRange and Compare.
//
// It imports only the standard library.
package operator
