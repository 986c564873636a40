// Package eval evaluates compiled policies against one request, with the
// results and messages Kyverno gives.
//
// Start at Engine.Evaluate. It runs in Kyverno's phases: the mutate rules
// of every policy (mutate.go), the verifyImages rules (verifyimages.go:
// signatures and attestations checked through the host's ImageVerifier,
// digests added), then the validate rules, which see the mutated object,
// then the generate rules (generate.go). For each policy,
// in order, and each of its rules (autogen rules included), it applies
// match and exclude, loads the rule's context entries lazily (an entry
// loads the first time a variable names it, as in Kyverno; while it loads,
// it can load only the entries declared before it), checks
// preconditions, and runs the rule. Each rule that applies yields one
// RuleResult: pass, fail, warn (a fail of a policy annotated
// policies.kyverno.io/scored: "false"), error or skip; a mutate rule that
// changed the object passes, one that did not skips.
//
// ValidatingPolicies and NamespacedValidatingPolicies (policy.Policy with
// Validating set) run in the validate phase too (vpol.go): engine/vpol
// evaluates them on the request's CEL view (built once per request and
// object, with Request.Resource, Request.NamespaceObject or the Namespace
// from Lookup, and Request.CELExceptions), their CEL libraries read the
// host's Options.CELData, and each result carries Kyverno's rule name
// ("" for validations, "exception", "evaluation", "match"); Enforce is
// set when validationActions holds Deny, and a fail of a policy annotated
// policies.kyverno.io/scored: "false" is a warn, as for the other kinds.
//
// Kubernetes ValidatingAdmissionPolicies (policy.Policy with VAP set) run
// there too (vap.go), in background mode (or at admission when the host
// sets Policy.Admission, as the CLI does), never Enforce: engine/vap
// evaluates them once per binding of Request.VAPBindings, with the
// bindings' params from Lookup.Params (ParamQuery.Binding set) and the
// Namespace from Request.NamespaceObject or Lookup, as Kyverno's
// background scans do, or as Kyverno's CLI does with
// Options.KyvernoCLI; the result's rule is the policy's name, and its
// binding the property "binding".
//
// Kubernetes MutatingAdmissionPolicies (policy.Policy with
// MutatingAdmission set; map.go) then MutatingPolicies and
// NamespacedMutatingPolicies (Mutating set) run in the mutate phase after
// the mutate rules of every policy, as in Kyverno's CLI (mpol.go); the
// params of a binding come from Lookup.Params (ParamQuery.Binding set).
// engine/mpol evaluates each MutatingPolicy on
// the object the ones before it left (object; request.object is the
// object admitted), with the request's CEL view and
// Request.CELExceptions; their results have type Mutation and Kyverno's
// rule names ("" for the mutations, "evaluation", "exception", "match"),
// and an evaluation error names the field of the policy that failed
// (RuleResult.Path). Response.Mutations holds the object after each of
// them, and the validate phase sees the result. In background mode
// nothing mutates: each MutatingPolicy with background enabled is
// evaluated on its own on the stored object, and a pass whose mutations
// would still change it is a fail "mutation is not applied"
// (MessageNotApplied), as in Kyverno's background scans.
//
// A MutatingPolicy with mutateExisting mutates existing targets
// (mpolexisting.go) in a Request.MutateExisting replay, and at admission
// with Options.KyvernoCLI (Kyverno's CLI mutates a test's targetResources
// in the same run; a cluster host replays the trigger off the answer path
// instead): when the trigger matches its matchConstraints and match
// conditions, its targets are what targetMatchConstraints.expression
// returns, or the objects of its target resource rules that its target
// constraints match, listed through Options.CELData (every namespace:
// AllNamespacesLister when the source has it, ListResources with
// namespace "" otherwise); each target evaluated gives a result of type
// Mutation, and each one its mutations change a TargetPatch.
//
// GeneratingPolicies and NamespacedGeneratingPolicies (Generating set)
// run after the generate rules (gpol.go): admission requests run those
// whose admission is enabled, a Request.GenerateExisting replay those
// with generateExisting; one result of type Generation per policy that
// applies (rule the policy's name, or "exception"), and for a pass one
// Generated (action create) per resource its generator.Apply calls asked
// for: with Options.KyvernoCLI the object in the call's namespace, as
// Kyverno's CLI shows it; otherwise as Kyverno's controllers create it
// (server fields dropped, cluster-scoped kinds without a namespace,
// Kyverno's ownership labels). A GeneratingPolicy with synchronize, on an
// admission UPDATE or DELETE of a trigger (gpolsync.go), is also
// evaluated on the old object: what it generated then, and no longer
// generates (everything, when the trigger is deleted or no longer
// matches), is a Generated with action delete when the Lookup finds it
// with the policy's labels for that trigger. DeletingPolicies and
// NamespacedDeletingPolicies (Deleting set) give a result of type
// Deletion with Options.KyvernoCLI only (dpol.go), as Kyverno's CLI
// reports them: pass "resource matched" for a resource the policy would
// delete, fail "resource did not match", nothing for a resource outside
// its matchConstraints.
//
// Validate rules are pattern, anyPattern, deny and foreach rules
// (validate.go), validate.cel rules (cel.go: engine/celrule with the
// request's CEL view, built once per evaluation, and params from Lookup)
// validate.podSecurity rules (podsecurity.go) and validate.manifests rules
// (manifests.go: engine/manifests verifies the request's object against
// each attestor set, with Kyverno's counts and messages; a dry-run request
// passes, a DELETE gives no result). The PolicyExceptions of
// Request.Exceptions that list a rule and match the resource skip it
// (exceptions.go), after its preconditions, as in Kyverno; for
// podSecurity rules an exception with podSecurity controls exempts those
// controls instead.
//
// Besides results, the Response carries the mutated object and its RFC
// 6902 JSON Patch, the patched targets of mutate existing rules and
// MutatingPolicies, and what
// generate rules ask the host to create, update or delete. Mutate targets,
// clone sources and existing generated resources are read through Lookup;
// the engine writes nothing.
//
// Variables live in a scope: the JMESPath root of the rule (request,
// serviceAccountName, images, context entries, element). Scopes are never
// shared between goroutines and a foreach element gets a child scope, so no
// evaluation changes another's data; the compiled *policy.Policy is never
// modified. An Engine is safe for concurrent use.
//
// Each evaluation has an engine.Budget: Options.MaxSteps steps
// (DefaultMaxSteps) and the context given to Evaluate. Rules, foreach
// elements (validate, mutate, generate), conditions, context entries,
// JMESPath queries and verifyImages checks poll it; patterns, set
// operators and wildcard matches charge it as they go, and a
// patchStrategicMerge is charged its quadratic list merges before it runs
// (mergeCost: engine/mutate does not check the budget, so a merge is the
// one piece of work a deadline does not interrupt). When it is spent or
// the context is done, the rule being evaluated reports an error with the
// budget's message (and patches or generates nothing), every later rule
// that applies reports it too (a spent budget), or Evaluate stops (a done
// context, as before: the caller's deadline has passed). Response.Steps is
// the work done.
//
// Cluster data comes through Lookup, which the host implements (Kubernetes
// clients in the server, values files in the CLI, maps in tests). This
// package does no I/O of its own and must not import client-go, grpc or any
// package outside engine/.
package eval
