// Package engine compiles Kyverno ClusterPolicies and Policies,
// ValidatingPolicies, MutatingPolicies, GeneratingPolicies,
// DeletingPolicies and their namespaced kinds
// (policies.kyverno.io), and Kubernetes ValidatingAdmissionPolicies and
// MutatingAdmissionPolicies, and evaluates them against Kubernetes
// resources, with the same results as Kyverno.
//
// The engine is a pure library: it does no I/O, reads no globals, and uses no
// clock it is not given. Cluster data (ConfigMaps, API calls, global context
// entries, image registries) arrives through the eval.Lookup interface that
// the host supplies.
//
// Start at policy.Compile, which turns policy YAML or JSON into an immutable
// *policy.Policy (autogen rules expanded, JMESPath expressions parsed, patterns
// pre-parsed), and at eval.Evaluate, which runs compiled policies against one
// request. The sub-packages are:
//
//   - policy:    the kyverno.io policy model, strict decoding, checks, autogen
//   - match:     match / exclude resource filters
//   - variables: {{ }} templates and their substitution
//   - jmespath:  JMESPath with Kyverno's custom function table
//   - pattern:   validate.pattern / anyPattern matching with anchors and operators
//   - condition: precondition and deny condition operators
//   - mutate:    patchStrategicMerge (with anchors) and patchesJson6902,
//     and the JSON Patch of a mutation
//   - generate:  the resources generate rules create, with their labels
//   - celrule:   validate.cel rules, with Kubernetes' CEL environment
//   - podsecurity: validate.podSecurity rules (Pod Security Standards checks)
//   - vpol:      ValidatingPolicy and NamespacedValidatingPolicy, and the
//     policies.kyverno.io PolicyException: decoding, compilation (with
//     autogen variants) and evaluation; policy.CompileValidating gives
//     them the compiled form of the kyverno.io kinds
//   - vap:       Kubernetes' ValidatingAdmissionPolicy and
//     ValidatingAdmissionPolicyBinding as Kyverno's CLI and background
//     scans evaluate them: decoding, compilation (celrule's Kubernetes
//     environment, vpol's matcher) and evaluation with bindings and
//     params; policy.CompileVAP gives them the compiled form of the
//     other kinds
//   - mpol:      MutatingPolicy and NamespacedMutatingPolicy: decoding,
//     compilation (with autogen variants) and evaluation (JSONPatch and
//     ApplyConfiguration mutations, merged with structured-merge-diff);
//     policy.CompileMutating gives them the compiled form too
//   - gpol:      GeneratingPolicy and NamespacedGeneratingPolicy:
//     decoding, compilation and evaluation into the resources
//     generator.Apply asks for; policy.CompileGenerating
//   - dpol:      DeletingPolicy and NamespacedDeletingPolicy: decoding,
//     compilation (the cron schedule parsed) and the decision for one
//     existing resource; policy.CompileDeleting
//   - kyvernocel: Kyverno's CEL environment and libraries
//     (github.com/kyverno/sdk) for the policies.kyverno.io kinds, their
//     data sources supplied by the host (eval.Options.CELData)
//   - eval:      evaluation of compiled policies against a request
//
// This package itself holds only what all of them share: the error type, and
// Budget, the step budget and deadline of one evaluation, which eval, pattern
// and condition charge their loops to (and wildcard matches, through
// Budget.Match) so that no policy and resource pair runs on past its
// deadline or its MaxSteps.
//
// The engine must never import client-go, grpc, a logger, metrics or any
// package of this module outside engine/. (vpol, mpol and kyvernocel import
// Kyverno's API types and the sdk's CEL libraries, which import neither;
// the sdk's image data library brings go-containerregistry's remote
// package, which the engine never calls: image data comes from the host.) (celrule uses k8s.io/apiserver's
// CEL libraries, which bring klog and component-base's feature gates and
// metrics registry with them; the engine only reads them.)
package engine
