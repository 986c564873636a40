// Package celrule evaluates validate.cel rules (and their celPreconditions)
// as Kyverno v1.19 does: with Kubernetes' ValidatingAdmissionPolicy CEL
// environment, so that expressions written for ValidatingAdmissionPolicies
// behave the same (pkg/engine/handlers/validation/validate_cel.go and
// k8s.io/apiserver's admission/plugin/cel and policy/validating).
//
// Read first: Compile (a *Rule per rule, every expression compiled once:
// in Compile, or with Spec.Deferred by the rule's first evaluation),
// NewInput (the request as CEL sees it, built once per request and shared
// between rules) and Rule.Evaluate (an Outcome with Kyverno's message).
//
// # Environment
//
// Kubernetes' base environment (k8s.io/apiserver/pkg/cel/environment, the
// StoredExpressions set: every Kubernetes library — quantity, url, regex,
// lists, format, ip, cidr, semver, sets, strings, authz — and Kubernetes'
// per-expression cost limit), Kyverno's orValue compatibility macro, and
// the variables of a ValidatingAdmissionPolicy: object, oldObject,
// request (typed as Kubernetes' AdmissionRequest), namespaceObject,
// params (for rules with paramKind and paramRef), variables, and
// authorizer (not in messageExpressions). The shared base environment is
// built once per process; each rule with variables extends it with its
// own `variables` type, and the rules without variables share one
// extension per params and authorizer (built once, never changed).
//
// # Semantics
//
// Kyverno runs Kubernetes' validator with the Fail failure policy and reads
// the first denying decision. So an expression that does not compile, has
// the wrong type or errors at runtime fails the rule (its message names
// the expression), like a false one; celPreconditions that do not hold
// skip it ("cel preconditions not met"); a precondition error fails it.
// Messages are, in order: the messageExpression's (trimmed, one line, at
// most 5 KiB), the expression's message, validate.message, "failed
// expression: <expression>". The cost budgets are Kubernetes' (10M for
// validations and messages, 2.5M for preconditions, 1M per expression).
//
// Values are used as they are given: numbers of a resource decoded as
// float64 (as Kyverno's CLI has them) are doubles in CEL, int64 are ints.
//
// # ValidatingAdmissionPolicies
//
// CompileAdmission (admission.go) compiles the expressions of a
// Kubernetes ValidatingAdmissionPolicy (engine/vap) into the same Rule:
// authorizer is not declared, params is when the policy has a paramKind,
// and an expression that does not compile is a compile error with its
// field path. Rule.Validate is Kubernetes' validator for one params
// object with the policy's failure policy (Ignore: errors do not deny, a
// match condition error does not match); its decisions tell errors from
// denials, which Kyverno reports differently for these policies.
// NewAdmissionInput gives them the namespaceObject Kyverno builds for
// them.
//
// The package depends on cel-go and k8s.io/apiserver's CEL packages (which
// bring klog and component-base's feature gates and metrics registry, read
// only), engine, engine/kyverno and engine/match. It must not import
// client-go, engine/eval or engine/policy. It does no I/O: params and the
// Namespace come from the caller.
package celrule
