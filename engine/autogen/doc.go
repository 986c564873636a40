// Package autogen adds the rules Kyverno generates for Pod controllers: a
// rule written for Pods gets an autogen-<name> rule for DaemonSets,
// Deployments, Jobs, StatefulSets, ReplicaSets and ReplicationControllers
// (patterns nested under spec.template) and an autogen-cronjob-<name> rule
// for CronJobs (under spec.jobTemplate.spec.template).
//
// It reproduces Kyverno v1.19's v1 autogen (pkg/autogen/v1) exactly,
// quirks included: which policies qualify, the
// pod-policies.kyverno.io/autogen-controllers annotation, rule names cut to
// 63 bytes, the kinds of match and exclude blocks, the nesting of patterns,
// anyPattern, mutate patches and foreach, the rewriting of
// request.object.spec / .metadata references (object.spec in CEL rules),
// the shifting of $(...) references in messages, and the order of the rules.
// testdata/*.golden.json hold Kyverno's own output for the policies next to
// them.
//
// Read Rules first; RulesForKind is the variant Kyverno's validation uses,
// and Controllers tells which controllers autogen covers. The package works
// on the kyverno.Document model and depends on nothing else of the engine
// but its error type.
package autogen
