// Package mpol reads, compiles and evaluates Kyverno's MutatingPolicy and
// NamespacedMutatingPolicy (policies.kyverno.io), with the results and
// patches of Kyverno v1.19 (pkg/cel/policies/mpol).
//
// Read first: Document (types.go), the kinds as written with Kyverno's
// own spec types (github.com/kyverno/api); Policies (decode.go), whose
// Decode and DecodePolicy read the documents; Compile and Policy
// (compile.go); Policy.Evaluate (eval.go), which takes the request as
// engine/vpol prepares it (vpol.Input). engine/policy wraps a compiled
// Policy into the compiled form of the kyverno.io kinds
// (policy.CompileMutating) and engine/eval runs it in the mutate phase.
//
// # Decoding
//
// Strict, as engine/vpol decodes its kinds (vpol.Family): each document is
// checked against the CRD schema of its version (schema.json, made by
// engine/vpol/gen_schema.go from the CRDs), so an unknown field or a
// value of the wrong type is an *engine.Error with Code engine.CodeDecode
// and the field path. MutatingPolicy is served in v1, v1beta1 and
// v1alpha1, NamespacedMutatingPolicy in v1 and v1beta1, as the CRDs and
// Kyverno's CLI have them; another version is an error with Code
// engine.CodeUnsupported.
//
// # Compilation
//
// Compile compiles every expression once in the policy's mutating CEL
// environment (kyvernocel.NewMutatingEnv: the environment of the
// ValidatingPolicies with Kubernetes' Object and JSONPatch types and
// jsonpatch.escapeKey): variables (each typed for the expressions after
// it), match conditions (bool; they may read the variables, as in
// Kyverno), mutations (an ApplyConfiguration expression is an Object, a
// JSONPatch expression a list of JSONPatch) and audit annotations (string
// or null). It refuses what Kyverno's policy validation refuses (no
// matchConstraints resource rule, admission and mutateExisting both
// disabled, variables in the match conditions of a policy that generates
// a MutatingAdmissionPolicy) and what the CRD requires. A policy on Pods
// gets its autogen variants for pod controllers as Kyverno's mpol autogen
// makes them (autogen.go): match conditions and ApplyConfiguration
// expressions rewritten for the pod template, the rest as written.
//
// # Evaluation
//
// Evaluate runs each variant whose matchConstraints match the request
// (vpol.Matcher), on the object the variants and policies before it
// mutated (request.object stays the object admitted): policies.kyverno.io
// PolicyExceptions that name the policy and match exempt it; variables are
// bound lazily; a match condition that does not hold skips it; then the
// mutations run in order, each on the previous one's output:
//
//   - ApplyConfiguration: the Object is merged into the object as the API
//     server merges a mutating admission policy's (smd.go:
//     structured-merge-diff, with the schema of the object's kind; lists
//     merged by their keys, atomic fields refused unless
//     evaluation.useServerSideApply; the whole object is validated, and
//     only the part of it the Object reaches goes through the merge, the
//     rest put back after, which gives the merge of the whole object at
//     a fraction of its cost). The schemas are those of the
//     Kubernetes 1.32 built-in kinds Kyverno's CLI merges with
//     (builtins.yaml, made by gen_builtins.go, read once per process by
//     the fast YAML parser, go-yaml when it declines), and those of custom
//     resources a host gives (vpol.Request.ApplyTypes: Schemas, crd.go,
//     made from CustomResourceDefinitions as Kyverno's CLI makes them
//     from a test's CRD files); a kind of a group and version without a
//     schema is an error, as in Kyverno's CLI ("type converter must not
//     be nil").
//   - JSONPatch: the JSONPatch values are applied as an RFC 6902 patch
//     (gopkg.in/evanphx/json-patch.v4, as Kubernetes); a failed test
//     operation leaves the object as it is.
//
// A variant that fails (an expression, a patch that does not apply, a
// patch of the wrong type) is an error result with Kyverno's message
// ("failed to evaluate policy: ...") and the path of the field that
// failed (Result.Path), and changes nothing: its mutations apply to the
// object only when all of them applied. Otherwise it passes ("success"),
// with its audit annotations as properties.
//
// # Mutate existing
//
// A policy with spec.evaluation.mutateExisting enabled also compiles its
// targets (target.go), after the variables of the policy as written:
// spec.targetMatchConstraints.expression (an expression of type
// map(string, any): one object, or a list object whose items are the
// targets), spec.targetMatchConditions (bool), and otherwise the target
// constraints a host lists targets for (TargetConstraints: the resource
// rules of targetMatchConstraints, or matchConstraints without them, with
// every operation). TriggerMatches is Kyverno's MatchesMutateExisting
// (matchConstraints, then the match conditions with the variables bound;
// a replayed trigger matches whatever its operation), ResolveTargets
// evaluates the expression for a trigger, and EvaluateTarget is Kyverno's
// EvaluateTarget: object is the target, oldObject and namespaceObject
// null, request the trigger's; targetMatchConditions replace the match
// conditions; a pass returns the patched target. A trigger has at most
// MaxTargets (1000) targets, past which it is an error (ErrTooManyTargets)
// and nothing is mutated.
//
// # MutatingAdmissionPolicy
//
// admission.go and admission_eval.go read Kubernetes'
// MutatingAdmissionPolicies and their bindings (admissionregistration.k8s.io
// v1alpha1, v1beta1 and v1, decoded strictly into the v1 types) and
// evaluate them as Kyverno's CLI does (Kyverno evaluates them nowhere
// else; pkg/admissionpolicy): in Kubernetes' CEL environment, through
// k8s.io/apiserver's compiler and evaluators (params when the policy has
// a paramKind); without bindings when the policy's matchConstraints
// match, with bindings once per binding whose matchResources match (the
// policy's constraints are not checked then, as in Kyverno's CLI), with
// the params of its paramRef, which the host finds; an ApplyConfiguration
// is merged with the type Kubernetes deduces for an object without a
// schema (maps merged, lists replaced). Results are named after the
// policy: "mutation is successfully applied" or "match conditions aren't
// met"; where Kyverno's CLI drops the response of a failure (and only
// logs it), the result is an error with the path of the field.
//
// Kyverno's engine runs each policy once per request; reinvocation is
// the API server's (Policy.Reinvocation is spec.reinvocationPolicy, for
// the host).
//
// # Limits
//
// Every expression has Kubernetes' runtime cost limit
// (kyvernocel.CostLimit); the copy operations of one JSONPatch mutation
// add at most MaxJSONPatchCopyBytes (3 MiB, the API server's) to the
// object. The schemas are parsed once per process, on the first
// ApplyConfiguration.
//
// The package does no I/O. It depends on engine, engine/vpol,
// engine/kyvernocel, Kyverno's API types, cel-go, apimachinery,
// k8s.io/apiserver's CEL mutation types, structured-merge-diff and
// json-patch; it must not import client-go, grpc, engine/policy or
// engine/eval.
package mpol
