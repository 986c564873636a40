// Package vpol reads, compiles and evaluates Kyverno's ValidatingPolicy and
// NamespacedValidatingPolicy (policies.kyverno.io) and the
// policies.kyverno.io PolicyException, with the results of Kyverno v1.19
// (pkg/cel/policies/vpol).
//
// Read first: Document and ExceptionDocument (types.go), the kinds as
// written with Kyverno's own spec types (github.com/kyverno/api); Decode
// and DecodePolicy (decode.go); Compile and Policy (compile.go); NewInput
// and Policy.Evaluate (input.go, eval.go); CompileException
// (exception.go). engine/policy wraps a compiled Policy into the compiled
// form of the kyverno.io kinds (policy.CompileValidating) and engine/eval
// runs it in the validate phase.
//
// # Decoding
//
// Strict, as for the kyverno.io kinds (engine/kyverno): each document is
// checked against the CRD schema of its version (schema.json, made by
// gen_schema.go from the CRDs), so an unknown field or a value of the
// wrong type is an *engine.Error with Code engine.CodeDecode and the field
// path. ValidatingPolicy is served in v1, v1beta1 and v1alpha1,
// NamespacedValidatingPolicy in v1 and v1beta1, PolicyException in all
// three, as the CRDs and Kyverno's CLI have them; another version is an
// error with Code engine.CodeUnsupported.
//
// # Compilation
//
// Compile compiles every expression once, in the policy's CEL environment
// (engine/kyvernocel): match conditions and validations must be bool,
// messageExpressions string, audit annotations string or null, as Kyverno
// requires; each variable gets the type of its expression for the
// expressions after it. A policy on Pods only gets its autogen variants
// for pod controllers (autogen.go: one for Deployment-like controllers,
// one for CronJobs, or those of autogen.podControllers.controllers), each
// compiled as a policy of its own, as Kyverno does. Problems are
// engine.Errors with the field path (Code engine.CodeInvalidPolicy;
// engine.CodeUnsupported for the HTTP and Envoy evaluation modes).
//
// # Evaluation
//
// Evaluate runs each variant whose matchConstraints match the request
// (match.go: Kubernetes' rule, namespace and object predicates, as
// Kyverno's pkg/cel/matching; matchPolicy Equivalent matches exactly, as
// in Kyverno; JSON-mode policies skip them): PolicyExceptions that name
// the policy and match exempt it (result "exception": skip, or pass with
// reportResult: pass) or hand their allowedValues and images to the
// expressions (`exceptions`); match conditions that do not hold skip it;
// the first validation that is false fails it with its message (the
// messageExpression's, the message, or "CEL expression validation failed
// at index N"); an error is an error result. Variables are evaluated
// lazily, at most once per evaluation (kyvernocel.Variables); a name
// declared twice is its last declaration, as in Kyverno, and a variable
// that reads its own name is an error (Kyverno recurses until it runs out
// of stack). The variables object, oldObject, request and namespaceObject
// are what Kyverno gives CEL: the objects as the host gives them (an
// absent object is an empty object), namespaceObject null when the host
// has no Namespace, and request with the objects as JSON decoding has
// them (whole numbers are int64, Normalize), built the first time an
// expression reads it.
//
// An Input keeps what the evaluations of a request share: request, the
// libraries, the namespace labels, each made on first use, and the
// activation and variables of the variant being evaluated, reset for the
// next one, so that evaluating a policy allocates little besides what
// cel-go allocates for each program it runs.
//
// # Limits
//
// Every expression has Kubernetes' runtime cost limit
// (kyvernocel.CostLimit) and the parser's limits of kyvernocel; an
// evaluation stops when its context is done (checked every
// kyvernocel.InterruptCheckFrequency comprehension iterations). Data
// sources are the host's (kyvernocel.Sources): they bound their own calls.
//
// # For the other kinds of the group
//
// engine/mpol (and ivpol, gpol, dpol) decode, compile, match and exempt
// as this package does, through small exported hooks: Kinds and DecodeAll
// (strict decoding of a set of kinds against their CRD schemas),
// CompileExpression, Hash, Matcher, CanAutogen and AutogenConfigs,
// MatchConditions (Kyverno's one match of the conditions) and
// AuditAnnotations, Input.Activation, Input.WithObject and Input.Now,
// Exception.Matches, Exception.Exempts and ExceptionResult.
//
// The package does no I/O. It depends on engine, engine/kyverno (YAML
// splitting and the schema checker), engine/kyvernocel, Kyverno's API
// types, cel-go and apimachinery; it must not import client-go, grpc,
// engine/policy or engine/eval.
package vpol
