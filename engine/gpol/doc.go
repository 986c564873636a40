// Package gpol reads, compiles and evaluates Kyverno's GeneratingPolicy
// and NamespacedGeneratingPolicy (policies.kyverno.io), with the results
// of Kyverno v1.19 (pkg/cel/policies/gpol).
//
// Read first: Document (types.go), the kinds as written with Kyverno's
// own spec types (github.com/kyverno/api); Policies (decode.go), whose
// Decode and DecodePolicy read the documents; Compile and Policy
// (compile.go); Policy.Evaluate (eval.go), which takes the request as
// engine/vpol prepares it (vpol.Input). engine/policy wraps a compiled
// Policy into the compiled form of the kyverno.io kinds
// (policy.CompileGenerating) and engine/eval runs it after the generate
// rules, turning what it generates into Generated intents the host
// applies.
//
// # Decoding
//
// Strict, as engine/vpol decodes its kinds (vpol.Family): each document is
// checked against the CRD schema of its version (schema.json, made by
// engine/vpol/gen_schema.go), so an unknown field or a value of the wrong
// type is an *engine.Error with Code engine.CodeDecode and the field
// path. GeneratingPolicy is served in v1, v1beta1 and v1alpha1,
// NamespacedGeneratingPolicy in v1 and v1beta1; another version is an
// error with Code engine.CodeUnsupported.
//
// # Compilation
//
// Compile compiles every expression once in the policy's generating CEL
// environment (kyvernocel.NewGeneratingEnv: the environment of the
// ValidatingPolicies with the sdk's generator library; a namespaced
// policy's generator.Apply takes the objects only and generates in its
// namespace): match conditions (bool), variables (each typed for the
// expressions after it), generations (any type) and audit annotations
// (string or null), and generation templates (template.go: YAML
// documents, each a resource; with interpolate: cel a scalar that is one
// `(( expression ))` placeholder takes its value, placeholders inside a
// string must be scalars, `\((` is a literal). It refuses what Kyverno's
// policy validation refuses (no matchConstraints resource rule, a
// generation with both or neither of expression and template, a template
// that does not parse or whose placeholders do not compile, at
// spec.generate[i].template.value).
//
// # Evaluation
//
// Evaluate is Kyverno's gpol engine: matchConstraints (vpol.Matcher; no
// result when they do not match), the policies.kyverno.io
// PolicyExceptions that name the policy (an exempting one gives the
// "exception" result), the match conditions (no result when one does not
// hold), then each generation with the variables bound lazily, then the
// audit annotations. A template's resources are generated in their
// namespace (a namespaced policy's by default, and never another). Each
// generator.Apply(namespace, [objects]) call
// adds its objects, the items of a List each, to the result (Generated:
// the object as built and the namespace named); a
// NamespacedGeneratingPolicy may not generate a cluster-scoped kind, as
// in Kyverno's controllers. A failure is an error result with Kyverno's
// message ("failed to evaluate policy: ...") and the field that failed
// (Result.Path), and generates nothing. A pass is rule the policy's name,
// "policy evaluated successfully", with the audit annotations as
// properties.
//
// # Limits
//
// Every expression has Kubernetes' runtime cost limit
// (kyvernocel.CostLimit); one evaluation generates at most MaxGenerated
// (1000) resources, past which it is an error (ErrTooMany) that
// generates nothing.
//
// The package does no I/O. It depends on engine, engine/vpol,
// engine/mpol (the evaluation steps the group shares), engine/kyverno,
// engine/kyvernocel, Kyverno's API types, cel-go and apimachinery; it
// must not import client-go, grpc, engine/policy or engine/eval.
package gpol
