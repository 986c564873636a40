// Package vap reads, compiles and evaluates Kubernetes'
// ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding
// (admissionregistration.k8s.io), which Kyverno's CLI evaluates and
// Kyverno's background scans report on, with the results of Kyverno v1.19
// (pkg/admissionpolicy).
//
// Read first: Document and BindingDocument (types.go), the kinds as
// written with Kubernetes' own spec types (k8s.io/api); Decode and
// DecodeBindings (decode.go); Compile, Policy, CompileBinding and Binding
// (compile.go); NewInput and Policy.Evaluate (input.go, eval.go).
// engine/policy wraps a compiled Policy into the compiled form of the
// other kinds (policy.CompileVAP) and engine/eval runs it with the
// request's bindings.
//
// # Decoding
//
// Strict, as for the other kinds: each document is checked against the
// schema of its Go type (schema.json, made by gen_schema.go from
// k8s.io/api's types with engine/internal/crdschema), so an unknown field
// or a value of the wrong type is an *engine.Error with Code
// engine.CodeDecode and the field path. Both kinds are read at v1 only, as
// Kyverno's CLI loads them; another version is an error with Code
// engine.CodeUnsupported.
//
// # Compilation
//
// Compile compiles every expression once with engine/celrule
// (CompileAdmission): Kubernetes' CEL environment with Kyverno's orValue,
// the variables object, oldObject, request, namespaceObject, variables
// and, with a paramKind, params; authorizer is absent, as in Kyverno's
// CLI and background scans. An expression that does not compile, or
// whose type is not the one required (a validation that is not bool, a
// messageExpression that is not string), and what the API server refuses
// (no matchConstraints, an unknown failure policy, a selector that does
// not parse) are errors with Code engine.CodeInvalidPolicy and the field
// path, naming the policy. Kyverno's CLI instead reports such an
// expression's compilation error on every resource. matchConstraints and
// bindings' matchResources are matched by engine/vpol's matcher
// (vpol.Matcher), as Kyverno matches both with pkg/cel/matching.
//
// # Evaluation
//
// A resource is evaluated as Kyverno does: as a CREATE without old object
// whatever the request, the requester's empty username, uid and groups
// filled with BackgroundUser, namespaceObject a Namespace with the name
// and labels the host knows (or the host's Namespace object, outside the
// CLI), an empty Namespace (not null) for cluster-scoped resources.
// Without bindings, a policy whose matchConstraints match gives one
// result; with bindings, each binding whose matchResources match is
// evaluated with its params and the last gives the result, named after
// its binding. Kyverno's CLI (Options.CLI) and Kyverno's background
// scans differ in two ways, both kept: the CLI does not match a policy
// with bindings against its own matchConstraints, and finds params among
// the files it is given (always a list for a selector, null when none is
// found) where background scans use the cluster's (a list only of
// several; none is an error with parameterNotFoundAction: Deny and skips
// the binding otherwise). Kyverno's CLI gives CEL the numbers of its
// files as doubles, the API server whole numbers as ints: NewInput keeps
// the host's numbers for the CLI and makes whole numbers ints otherwise.
//
// The result: skip when the match conditions do not hold ("match
// conditions aren't met"), error with the message of the first validation
// that errored (the failure policy does not change that), fail with the
// message of the first that is false (messageExpression's, message, or
// "failed expression: <expression>"), pass with no message. Audit
// annotations are evaluated (a spent budget is an error) but give no
// property, and bindings' validationActions change nothing, as in Kyverno.
//
// Where Kyverno's background scan stops on a problem (params it cannot
// read), the binding gives an error result instead; a policy without
// bindings is matched with the namespace's labels (Kyverno's background
// scan has none there).
//
// # Limits
//
// Every expression has Kubernetes' cost limits (per expression, and the
// budgets of validations, match conditions and audit annotations) and
// stops when its context is done, as for validate.cel (engine/celrule).
//
// The package does no I/O: params come from the host (Options.Params). It
// depends on engine, engine/kyverno (YAML splitting and the schema
// checker), engine/celrule, engine/vpol (matcher, document decoding, number normalization),
// engine/match (selectors), Kubernetes' API types and apimachinery; it
// must not import client-go, grpc, engine/policy or engine/eval.
package vap
