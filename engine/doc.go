// Package engine compiles Kyverno policies and evaluates them against
// Kubernetes resources, with the same results and messages as Kyverno:
// the kyverno.io ClusterPolicies and Policies, the policies.kyverno.io
// ValidatingPolicies, MutatingPolicies, ImageValidatingPolicies,
// GeneratingPolicies, DeletingPolicies and their namespaced kinds, with
// the PolicyExceptions of both groups, and Kubernetes'
// ValidatingAdmissionPolicies and MutatingAdmissionPolicies with their
// bindings.
//
// # The model
//
// A policy goes through three forms, as a program goes through a compiler
// (OPA's ast and topdown split):
//
//   - Documents: kyverno.DecodePolicies and kyverno.DecodeExceptions turn
//     YAML or JSON into *kyverno.Document and *kyverno.PolicyException,
//     decoded strictly against the CRD schemas; vpol.Decode, vap.Decode
//     and the Decode of mpol.Policies, ivpol.Policies, gpol.Policies and
//     dpol.Policies do the same for the policies.kyverno.io kinds and the
//     admissionregistration.k8s.io ones. A document is the policy as
//     written.
//   - Compiled policies: policy.Compile (policy.CompileValidating for a
//     ValidatingPolicy, policy.CompileMutating for a MutatingPolicy,
//     policy.CompileImageValidating, policy.CompileGenerating and
//     policy.CompileDeleting for the other policies.kyverno.io kinds,
//     policy.CompileMutatingAdmission and policy.CompileVAP for the
//     Kubernetes admission policies) does, once per policy version,
//     everything that depends only on the policy: autogen rules for pod
//     controllers (autogen), match and exclude blocks (match), every {{ }}
//     variable parsed into a JMESPath AST (variables, jmespath) and
//     checked against one function table, patterns and condition
//     operators pre-parsed (pattern, condition), patches (mutate), generate
//     patterns (generate), CEL expressions (celrule, vpol, mpol, ivpol,
//     gpol, dpol, vap, kyvernocel), a DeletingPolicy's cron schedule and
//     Pod Security checks (podsecurity). It rejects what Kyverno rejects,
//     with every problem at once. The *policy.Policy it returns is
//     immutable: any number of goroutines evaluate it.
//     policy.CompileException gives a PolicyException its compiled form.
//   - Evaluations: an eval.Engine (eval.New, with Options) evaluates
//     compiled policies against one eval.Request (the object and old
//     object, operation, user, namespace labels, mode, exceptions and
//     ValidatingAdmissionPolicyBindings in force) and returns an
//     eval.Response: one RuleResult per rule that applied (pass, fail,
//     warn, error or skip, with Kyverno's message), the mutated object and
//     its JSON Patch, the patched targets of mutate existing rules, the
//     intents of generate rules and GeneratingPolicies, and whether a
//     DeletingPolicy selects an existing resource.
//
// Engine.Evaluate runs Kyverno's phases in order: mutate (every policy's
// mutate rules, then MutatingAdmissionPolicies and MutatingPolicies; each
// sees the object as the previous left it), verify images, validate (on
// the mutated object; ValidatingPolicies, ImageValidatingPolicies and
// ValidatingAdmissionPolicies too), then generate (GeneratingPolicies
// after the generate rules). A background request (eval.Background, a scan)
// runs validate only (and MutatingPolicies with background enabled, which
// report whether their mutation is applied) and skips what needs
// admission data; a replay of an existing
// trigger (Request.GenerateExisting, MutateExisting) runs those rules
// only. Policy.Scopes tells what such background work selects in a
// compiled policy.
//
// # What the host supplies
//
// The engine does no I/O, reads no globals and uses no clock it is not
// given. The host implements the interfaces it declares: eval.Lookup
// (ConfigMaps, API calls, global context entries, image registries,
// namespaces, CEL params, mutate targets and generate clone sources),
// eval.ImageVerifier (signatures and attestations of verifyImages rules)
// and kyvernocel.Sources (the data of Kyverno's CEL libraries). The
// decision server implements them with Kubernetes clients, the CLI with
// the values files of kyverno-test.yaml, the tests with maps (the case
// corpus of engine/cases).
//
// # What every package shares
//
// This package holds what all of them share: Error, a problem with a
// stable Code (decode_error, invalid_policy, invalid_variable, ...), a
// Path into the policy or the resource and a Message, found with As; and
// Budget, the step budget and deadline of one evaluation, which eval,
// pattern and condition charge their loops to (and wildcard matches,
// through Budget.Match), so that no policy and resource pair runs past its
// deadline or its MaxSteps.
//
// Start at policy.Compile and eval.Engine.Evaluate; the behaviour is
// specified by the cases of engine/cases, which the engine, the decision
// server and the webhook proxy all replay.
//
// # Imports
//
// The engine must never import client-go, grpc, a logger, metrics or any
// package of this module outside engine/ (deps_test.go checks it). vpol,
// mpol, ivpol, gpol, dpol and kyvernocel import Kyverno's API types and the sdk's CEL
// libraries, which import neither; the sdk's image data library brings
// go-containerregistry's remote package, which the engine never calls:
// image data comes from the host. celrule uses k8s.io/apiserver's CEL
// libraries, which bring klog and component-base's feature gates and
// metrics registry with them; the engine only reads them.
package engine
