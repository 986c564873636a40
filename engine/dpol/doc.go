// Package dpol reads, compiles and evaluates Kyverno's DeletingPolicy and
// NamespacedDeletingPolicy (policies.kyverno.io), with the decisions of
// Kyverno v1.19 (pkg/cel/policies/dpol).
//
// Read first: Document (types.go); Policies (decode.go), whose Decode
// and DecodePolicy read the documents; Compile and Policy (compile.go),
// whose Evaluate decides for one existing resource. engine/policy wraps
// a compiled Policy (policy.CompileDeleting); engine/eval reports it as
// Kyverno's CLI does (Options.KyvernoCLI); a host runs it on its
// schedule against the cluster's resources.
//
// # Decoding
//
// Strict, as engine/vpol decodes its kinds: each document is checked
// against the CRD schema of its version (schema.json, made by
// engine/vpol/gen_schema.go from the CRDs:
// go run ./engine/vpol/gen_schema.go <deletingpolicies CRD>
// <namespaceddeletingpolicies CRD> > engine/dpol/schema.json). An unknown
// field or a value of the wrong type is Code engine.CodeDecode with the
// field path. DeletingPolicy is served in v1, v1beta1 and v1alpha1,
// NamespacedDeletingPolicy in v1 and v1beta1; another version is Code
// engine.CodeUnsupported.
//
// # Compilation
//
// Compile refuses what Kyverno's policy validation refuses: a
// spec.schedule that is not a cron expression (parsed with the parser
// Kyverno uses, github.com/aptible/supercronic/cronexpr; Code
// engine.CodeInvalidPolicy at spec.schedule, with the parser's message),
// matchConstraints without a resource rule, an unknown
// deletionPropagationPolicy (Orphan, Background or Foreground), and
// variables and conditions that do not compile in the policy's CEL
// environment (kyvernocel.NewEnv), conditions that are not bool.
//
// # Evaluation
//
// Evaluate is Kyverno's dpol engine for one existing resource: the
// matchConstraints with every operation (Result.Matched false when they
// do not select it); the variables bound lazily; a policies.kyverno.io
// PolicyException that names the policy and whose match conditions hold
// keeps the resource; then every condition must hold for the resource to
// go (Result.Delete). A failed matching or expression is Result.Err with
// the field (Result.Path), and deletes nothing.
//
// # Limits
//
// Every expression has Kubernetes' runtime cost limit
// (kyvernocel.CostLimit).
//
// The package does no I/O. It depends on engine, engine/vpol,
// engine/mpol, engine/kyvernocel, Kyverno's API types, the cron parser,
// cel-go and apimachinery; it must not import client-go, grpc,
// engine/policy or engine/eval.
package dpol
