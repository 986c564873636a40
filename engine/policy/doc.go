// Package policy compiles kyverno.io ClusterPolicies and Policies into an
// immutable, evaluation-ready *Policy.
//
// Compile does, once per policy version, everything that depends only on the
// policy: it expands autogen rules for pod controllers (engine/autogen),
// compiles match and exclude blocks (engine/match), parses every {{ }}
// variable into a JMESPath AST (engine/variables), pre-parses validate
// patterns that hold no variables (engine/pattern) and condition operators
// (engine/condition), parses mutate patches and generate patterns
// (Mutation, Generation; a patchesJson6902 without variables is decoded
// once), compiles validate.cel rules (engine/celrule: every CEL expression
// compiled once; with CompileWith and CompileOptions.DeferCEL, for a
// short-lived run, when the rule is first evaluated),
// validate.podSecurity rules (engine/podsecurity) and
// validate.manifests rules (manifests.go: attestor sets with their public
// keys parsed by engine/manifests; keyless, certificates, KMS, secrets and
// OCI repositories make the rule Unsupported), and
// rejects what Kyverno rejects, such as
// request.userInfo in a background policy or a variable that Kyverno's
// allowed-variables check refuses (allowedvars.go: its regular expressions
// and message), with an *engine.Error whose Path names the field. A problem
// of a rule is reported once: not again for its autogen copies.
//
// CompileException compiles a PolicyException into an *Exception (match
// block, conditions, podSecurity controls) that evaluation applies to the
// rules it lists.
//
// CompileValidating (validating.go) gives a ValidatingPolicy or
// NamespacedValidatingPolicy, compiled by engine/vpol, the same compiled
// form: a *Policy without Rules whose Validating field evaluation runs,
// with Background, Admission, Action, Scored, Category and Severity from
// the policy, so that hosts hold and evaluate both generations alike.
// CompileVAP (admission.go) does the same for a Kubernetes
// ValidatingAdmissionPolicy compiled by engine/vap (field VAP), which
// evaluation runs in background mode only unless the host sets Admission.
// CompileMutating does the same for a MutatingPolicy or
// NamespacedMutatingPolicy (engine/mpol): its Mutating field;
// CompileMutatingAdmission for a Kubernetes MutatingAdmissionPolicy with
// its bindings: MutatingAdmission;
// CompileImageValidating for an ImageValidatingPolicy or
// NamespacedImageValidatingPolicy (engine/ivpol): its ImageValidating
// field, run by engine/eval in the validate phase;
// CompileGenerating (engine/gpol, field Generating) and CompileDeleting
// (engine/dpol, field Deleting) for the generating and deleting kinds.
//
// Policy.Scopes (scope.go) tells what background work selects in a compiled
// policy: the rules and kinds a background scan evaluates, and those
// generateExisting and mutateExistingOnPolicyUpdate replay.
// Policy.LookupKinds (lookupkinds.go) tells the kinds of the existing
// resources its rules may read through the evaluator's Lookup.
//
// Read Compile and Policy first, then Rule. Evaluation lives in engine/eval,
// which imports this package; this package never imports eval, and does no
// I/O.
package policy
