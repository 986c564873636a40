// Package policyreport is the wgpolicyk8s.io/v1alpha2 PolicyReport and
// ClusterPolicyReport model, as Kyverno writes it, its openreports.io/v1alpha1
// form (OpenReport, and the kinds Report and ClusterReport), and the one tally of
// rule results (Summary): the report writer renders its final reports
// with it, verdict apply --policy-report its reports, and every command
// counts results with Summary and prints its "pass: N, fail: N, warn: N,
// error: N, skip: N" line.
//
// Read first: PolicyReport, Result, Summary. The JSON field order of the
// types is Kyverno's (its PolicyReportResult); OpenReport is the form
// Kyverno 1.19's CLI prints (openreports.io's Go types).
//
// It imports only the standard library.
package policyreport
