// Package cleanup runs the cluster's DeletingPolicies and
// NamespacedDeletingPolicies (policies.kyverno.io) on their schedules,
// as Kyverno's cleanup controller does: `verdict cleanup` in the
// verdict-cleanup Deployment (docs/operations.md).
//
// Read Runner first: Load reads and compiles the policies (engine/dpol)
// and the policies.kyverno.io PolicyExceptions; Run runs each policy when
// its cron schedule comes (its first run is the schedule's first time
// after the runner saw the policy; a changed policy starts again) and
// reads the policies again every Options.Resync; Execute is one run: the
// resources its matchConstraints' resource rules name are listed (in
// pages), each is evaluated (namespaceObject its Namespace, the CEL
// resource library reading the cluster), and those the policy selects
// are deleted with its deletionPropagationPolicy and their UID as
// precondition.
//
// SyncGenerating (downstream.go) follows the GeneratingPolicies: when
// one with synchronize and without orphanDownstreamOnPolicyDelete is gone
// between two reads, what it generated is deleted (the objects labelled
// generate.kyverno.io/policy-name: <policy> without the rule-name label,
// in every resource Options.Discovery lists that can be listed and
// deleted), as Kyverno's policy controller deletes the downstream of a
// deleted policy.
//
// Limits: one run of one policy deletes at most Options.MaxDeletions
// (DefaultMaxDeletions, 1000) resources, then stops with ErrMaxDeletions;
// resource rules with wildcards or subresources are not listed (the
// runner does not resolve them for DeletingPolicies): they are logged.
//
// RBAC: the runner reads the policies (DeletingPolicies and
// GeneratingPolicies), exceptions and Namespaces; it can
// list and delete only what an operator grants it, through ClusterRoles
// labelled verdict.io/aggregate-to-cleanup: "true" (as Kyverno's cleanup
// controller aggregates cleanup.kyverno.io roles). A resource it may not
// list or delete is an error of the run, logged.
//
// This package uses client-go and the engine; it must not import server,
// reportwriter, scanner or webhookproxy.
package cleanup
