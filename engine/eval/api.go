package eval

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vap"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// Mode says why a request is evaluated.
type Mode int

const (
	// Admission: the request comes from the API server (or a caller that
	// stands in for it, such as the CLI).
	Admission Mode = iota
	// Background: a scan of a stored resource. Rules with background: false,
	// and rules that read request.userInfo, roles, clusterRoles or subjects,
	// are skipped.
	Background
)

// UserInfo is the authenticated user of an admission request
// (authentication/v1 UserInfo).
type UserInfo struct {
	Username string              `json:"username,omitempty"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

// Request is one resource to evaluate, with what admission knows about it.
type Request struct {
	// Operation is CREATE, UPDATE, DELETE or CONNECT. Default: CREATE.
	Operation string
	// Object is the resource (for DELETE, the object being deleted may be
	// given as OldObject only).
	Object map[string]any
	// OldObject is the previous state for UPDATE and DELETE.
	OldObject map[string]any
	// Subresource is the subresource of the request ("status", "exec", ...).
	Subresource string
	// Kind overrides the kind of Object for subresource requests
	// ("PodExecOptions" is evaluated as Pod/exec). Optional.
	Group, Version, Kind string
	// Namespace of the request; defaults to Object's metadata.namespace.
	Namespace string
	// NamespaceLabels are the labels of the request's namespace, for
	// namespaceSelector.
	NamespaceLabels map[string]string
	// UserInfo, Roles and ClusterRoles describe the requester.
	UserInfo     UserInfo
	Roles        []string
	ClusterRoles []string
	// DryRun is the admission dryRun flag.
	DryRun bool
	// Mode is Admission (default) or Background.
	Mode Mode
	// Variables are values that override variables of the evaluation scope,
	// keyed by their dotted name ("request.operation",
	// "request.object.metadata.name", or a context entry name). A context
	// entry with a value here is not loaded. The CLI fills it from the test's
	// values file.
	Variables map[string]any
	// RuleVariables are Variables that apply to one rule only, on top of
	// Variables (the CLI's per-rule values).
	RuleVariables map[RuleKey]map[string]any
	// GenerateExisting replays an existing trigger as Kyverno does when a
	// policy with generateExisting is created or updated: only generate
	// rules with generateExisting run, and what they generate carries the
	// label kyverno.io/background-gen-rule (see generate.go).
	GenerateExisting bool
	// MutateExisting replays an existing trigger as Kyverno does when a
	// policy with mutateExistingOnPolicyUpdate is created or updated: only
	// mutate rules with targets and mutateExistingOnPolicyUpdate run,
	// returning their target patches (Response.Targets); the trigger is
	// not patched and no other rule runs. Mode should be Background.
	MutateExisting bool
	// Exceptions are the PolicyExceptions in force (compiled with
	// policy.CompileException); those that match exempt rules.
	Exceptions []*policy.Exception

	// The fields below serve the policies.kyverno.io kinds (vpol.go,
	// mpol.go).

	// Resource is the plural resource name of the request ("pods"), for
	// matchConstraints and request.resource. Default: guessed from the
	// kind, as Kyverno's CLI does.
	Resource string
	// ResourceGroup and ResourceVersion are the group and version of
	// Resource (AdmissionRequest.resource), when set. Default: the kind's.
	ResourceGroup, ResourceVersion string
	// NamespaceObject is the Namespace of the request, when the host has
	// it (the CLI's values file). Default: Lookup.Namespace; without one,
	// namespaceObject is null.
	NamespaceObject map[string]any
	// CELExceptions are the policies.kyverno.io PolicyExceptions in force
	// (compiled with vpol.CompileException).
	CELExceptions []*vpol.Exception

	// VAPBindings are the ValidatingAdmissionPolicyBindings in force
	// (compiled with vap.CompileBinding): a ValidatingAdmissionPolicy is
	// evaluated once per binding that names it and matches, in this order
	// (vap.go).
	VAPBindings []*vap.Binding
}

// RuleKey names a rule of a policy.
type RuleKey struct {
	Policy, Rule string
}

// Status is the result of one rule on one resource.
type Status string

// The five results of guides/reports.md.
const (
	StatusPass  Status = "pass"
	StatusFail  Status = "fail"
	StatusWarn  Status = "warn"
	StatusError Status = "error"
	StatusSkip  Status = "skip"
)

// RuleType is the kind of a rule.
type RuleType string

// Rule types, as Kyverno names them in reports.
const (
	RuleValidation  RuleType = "Validation"
	RuleMutation    RuleType = "Mutation"
	RuleGeneration  RuleType = "Generation"
	RuleImageVerify RuleType = "ImageVerify"
	// RuleDeletion is the result of a DeletingPolicy (dpol.go).
	RuleDeletion RuleType = "Deletion"
)

// RuleResult is what one rule decided for one resource.
type RuleResult struct {
	// Policy is the policy name; PolicyNamespace is set for namespaced
	// Policies.
	Policy          string
	PolicyNamespace string
	// Rule is the rule name (autogen rules carry their autogen- prefix).
	Rule   string
	Type   RuleType
	Status Status
	// Message is Kyverno's message for the result.
	Message string
	// Enforce is true when a fail of this rule blocks admission.
	Enforce bool
	// Scored is false when the policy is annotated
	// policies.kyverno.io/scored: "false" (fail is then reported as warn).
	Scored bool
	// Category and Severity come from the policy annotations.
	Category string
	Severity string
	// Properties are the rule's reportProperties, rendered.
	Properties map[string]string
	// Path is, for an error of a MutatingPolicy, the field of the policy
	// whose evaluation failed ("spec.mutations[1].jsonPatch.expression"),
	// which Kyverno's message does not name.
	Path string
	// Target is true for the result of one target of a MutatingPolicy's
	// mutate-existing (mpolexisting.go): about that target, reported with
	// the trigger (the request's resource), as Kyverno's CLI reports it,
	// which leaves it out of its counts.
	Target bool
}

// Response is the outcome of evaluating policies against one request.
type Response struct {
	Results []RuleResult
	// Patched is the object after the mutate rules of every policy (nil
	// when none changed it); Patch is the RFC 6902 JSON Patch from
	// Request.Object to Patched, as JSON, ready for an AdmissionResponse.
	// Mutations record the object after each policy (see mutate.go).
	Patched   map[string]any
	Patch     []byte
	Mutations []Mutation
	// Targets are the existing resources mutate rules with targets patched
	// (mutate existing); the host applies them.
	Targets []TargetPatch
	// Generated are the resources generate rules ask the host to create,
	// update or delete (see generate.go); GenerateErrors are the rules
	// whose generation failed after their match and preconditions held.
	Generated      []Generated
	GenerateErrors []GenerateError
	// Steps is the work the evaluation took, in the steps of
	// Options.MaxSteps.
	Steps int64
}

// Lookup supplies cluster data for context entries. The server implements
// it with Kubernetes clients, the CLI with values files, tests with maps.
// A method that has no data returns an error wrapping engine.ErrNotFound.
type Lookup interface {
	// ConfigMap returns the ConfigMap namespace/name as a JSON object.
	ConfigMap(ctx context.Context, namespace, name string) (map[string]any, error)
	// APICall performs an apiCall context entry (after variables were
	// substituted) and returns the decoded JSON response.
	APICall(ctx context.Context, call APICall) (any, error)
	// GlobalContext returns the data of a GlobalContextEntry.
	GlobalContext(ctx context.Context, name string) (any, error)
	// ImageData returns the imageRegistry data of an image reference.
	ImageData(ctx context.Context, reference string) (any, error)
	// Namespace returns the Namespace object name, for CEL's
	// namespaceObject. A host without cluster data returns ErrUndefined:
	// CEL then sees a Namespace with only its name, as in Kyverno's CLI.
	Namespace(ctx context.Context, name string) (map[string]any, error)
	// Params returns the params resources of a validate.cel rule
	// (paramKind, paramRef); see ParamQuery.
	Params(ctx context.Context, q ParamQuery) ([]map[string]any, error)
	// Resource returns one cluster object (mutate targets, clone sources,
	// generated resources); an object that does not exist is an error
	// wrapping engine.ErrNotFound. namespace is "" for cluster-scoped kinds.
	Resource(ctx context.Context, apiVersion, kind, namespace, name string) (map[string]any, error)
	// Resources lists the objects of a kind in a namespace ("" for every
	// namespace) whose labels match selector (mutate targets, cloneList
	// sources, downstream of a trigger). apiVersion may be "" (any
	// version).
	Resources(ctx context.Context, apiVersion, kind, namespace string, selector labels.Selector) ([]map[string]any, error)
}

// APICall is an apiCall context entry with its variables substituted.
type APICall struct {
	// URLPath is the API server path (when Service is empty).
	URLPath string
	// Method is GET or POST.
	Method string
	// Data is the POST body.
	Data map[string]any
	// ServiceURL, Headers and CABundle describe a call to a service.
	ServiceURL string
	Headers    map[string]string
	CABundle   string
}

// DefaultMaxSteps is the default of Options.MaxSteps. The largest
// evaluation of the engine's case corpus, the kyverno/policies conformance
// corpus and the benchmarks takes under 300 steps. A step costs from a few
// nanoseconds (a resource node a pattern visits) to a few microseconds (a
// foreach element), so the default stops a hostile policy and resource
// pair after a second or two of work: a nested foreach over a Pod with
// 50,000 containers after 1.6s, an AnyIn between two lists of 50,000
// after 0.1s (measured on the 2-core CI machine). Work inside one
// JMESPath query is not counted (one step per query): only the context's
// deadline bounds a single slow query.
const DefaultMaxSteps = 5_000_000

// Options configure an Engine.
type Options struct {
	// Lookup supplies cluster data. Default: none (every lookup fails with
	// engine.ErrNotFound).
	Lookup Lookup
	// Now is the clock of time_* functions. Default: time.Now.
	Now func() time.Time
	// ImageVerifier checks image signatures for verifyImages rules
	// (verifyimages.go). Default: none (those rules report an error).
	ImageVerifier ImageVerifier
	// CELData are the data sources of Kyverno's CEL libraries
	// (resource, http, image.GetMetadata, globalContext) for
	// ValidatingPolicies and MutatingPolicies. Default: none (those calls
	// are errors that name the missing source).
	CELData kyvernocel.Sources
	// ApplyTypes are the structured-merge-diff types the
	// ApplyConfigurations of MutatingPolicies merge with, beyond the
	// built-in kinds (mpol.NewSchemas: the custom resources of CRDs).
	// Default: the built-in kinds only (another kind is an error, as in
	// Kyverno's CLI without CRDs).
	ApplyTypes vpol.ApplyTypes

	// KyvernoCLI evaluates as Kyverno's CLI does where it differs from
	// Kyverno's controllers: ValidatingAdmissionPolicies with bindings
	// are matched by their bindings only, get their params as the CLI
	// does and a namespaceObject of name and labels (vap.Options.CLI).
	// Default false: as Kyverno's background scans.
	KyvernoCLI bool

	// MaxSteps bounds the work of one Evaluate call, in steps (see
	// engine.Budget): one per rule, foreach element, JMESPath query,
	// condition and context entry, one per resource node a pattern
	// visits and per pair of elements AnyIn or AllIn compare, one per 64
	// characters a wildcard compares, for each element of a mutate
	// foreach one per element of its list, and for a patchStrategicMerge
	// n² per list of n elements it merges into (kyaml's merge compares
	// every element with every other; the charge comes before the patch,
	// which the deadline cannot interrupt). The rule that goes past it reports an error with code
	// engine.CodeBudgetExceeded, and so does every rule that applies after
	// it. The context given to Evaluate bounds the evaluation too: once it
	// is done, the rule being evaluated reports an error
	// (engine.CodeCanceled) and Evaluate returns. Default:
	// DefaultMaxSteps; negative: no step limit (the context still stops
	// the evaluation).
	MaxSteps int64
}
