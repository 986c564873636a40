package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/autogen"
	"github.com/verdict-policy/verdict/engine/celrule"
	"github.com/verdict-policy/verdict/engine/condition"
	"github.com/verdict-policy/verdict/engine/dpol"
	"github.com/verdict-policy/verdict/engine/gpol"
	"github.com/verdict-policy/verdict/engine/ivpol"
	"github.com/verdict-policy/verdict/engine/jmespath"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/match"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/pattern"
	"github.com/verdict-policy/verdict/engine/podsecurity"
	"github.com/verdict-policy/verdict/engine/vap"
	"github.com/verdict-policy/verdict/engine/variables"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// Annotations read from policies.
const (
	AnnotationScored   = "policies.kyverno.io/scored"
	AnnotationCategory = "policies.kyverno.io/category"
	AnnotationSeverity = "policies.kyverno.io/severity"
)

// Action is a validation failure action.
type Action string

// The two failure actions. Kyverno accepts either case in policies.
const (
	Audit   Action = "Audit"
	Enforce Action = "Enforce"
)

// ActionOverride sets the action for some namespaces.
type ActionOverride struct {
	Action     Action
	Namespaces []string
	Selector   *match.Selector
}

// Policy is a compiled ClusterPolicy or Policy. It is immutable and safe for
// concurrent use.
type Policy struct {
	doc       *kyverno.Document
	hash      string
	kind      string
	name      string
	namespace string

	// Background is spec.background (default true).
	Background bool
	// Admission is spec.admission (default true).
	Admission bool
	// Action is spec.validationFailureAction (default Audit).
	Action Action
	// Overrides are spec.validationFailureActionOverrides.
	Overrides []ActionOverride
	// ApplyOne is spec.applyRules == One: stop after the first rule that
	// applied.
	ApplyOne bool
	// Scored is false when the policy is annotated
	// policies.kyverno.io/scored: "false".
	Scored bool
	// Category and Severity come from the annotations.
	Category string
	Severity string
	// Rules are the rules in evaluation order, autogen rules included.
	Rules []*Rule
	// Validating is set for a ValidatingPolicy or NamespacedValidatingPolicy
	// (CompileValidating, validating.go); Rules is then empty.
	Validating *vpol.Policy
	// VAP is set for a Kubernetes ValidatingAdmissionPolicy (CompileVAP,
	// admission.go); Rules is then empty.
	VAP *vap.Policy
	// Mutating is set for a MutatingPolicy or NamespacedMutatingPolicy
	// (CompileMutating, validating.go), MutatingAdmission for a
	// MutatingAdmissionPolicy (CompileMutatingAdmission); Rules is then
	// empty.
	Mutating          *mpol.Policy
	MutatingAdmission *mpol.AdmissionPolicy
	// ImageValidating is set for an ImageValidatingPolicy or
	// NamespacedImageValidatingPolicy (CompileImageValidating); Rules is
	// then empty.
	ImageValidating *ivpol.Policy
	// Generating is set for a GeneratingPolicy or
	// NamespacedGeneratingPolicy (CompileGenerating, generating.go); Rules
	// is then empty.
	Generating *gpol.Policy
	// Deleting is set for a DeletingPolicy or NamespacedDeletingPolicy
	// (CompileDeleting, deleting.go); Rules is then empty.
	Deleting *dpol.Policy
}

// Document returns the policy as written. Callers must not modify it.
func (p *Policy) Document() *kyverno.Document { return p.doc }

// Kind is ClusterPolicy, Policy, ValidatingPolicy,
// NamespacedValidatingPolicy, ValidatingAdmissionPolicy, MutatingPolicy or
// NamespacedMutatingPolicy.
func (p *Policy) Kind() string { return p.kind }

// Name is metadata.name.
func (p *Policy) Name() string { return p.name }

// Namespace is metadata.namespace of a namespaced Policy,
// NamespacedValidatingPolicy or NamespacedMutatingPolicy ("" for the
// cluster-wide kinds).
func (p *Policy) Namespace() string { return p.namespace }

// Namespaced reports whether the policy is a namespaced Policy,
// NamespacedValidatingPolicy or NamespacedMutatingPolicy.
func (p *Policy) Namespaced() bool {
	return p.kind == "Policy" || p.kind == vpol.KindNamespacedValidatingPolicy || p.kind == mpol.KindNamespacedMutatingPolicy ||
		p.kind == gpol.KindNamespacedGeneratingPolicy || p.kind == dpol.KindNamespacedDeletingPolicy
}

// Hash is the SHA-256 of the policy's spec and identity, hex encoded: it
// changes with every change that can change a result.
func (p *Policy) Hash() string { return p.hash }

// RuleType says what a rule does.
type RuleType int

// Rule types.
const (
	Validate RuleType = iota
	Mutate
	Generate
	VerifyImages
)

func (t RuleType) String() string {
	switch t {
	case Mutate:
		return "Mutation"
	case Generate:
		return "Generation"
	case VerifyImages:
		return "ImageVerify"
	default:
		return "Validation"
	}
}

// Rule is a compiled rule.
type Rule struct {
	// Name is the rule name (autogen rules carry their prefix).
	Name string
	// Raw is the rule as written (for autogen rules, as generated).
	Raw  *kyverno.Rule
	Type RuleType
	// Path locates the rule in the policy, e.g. "spec.rules[2]".
	Path string

	// Match decides whether the rule applies to a resource (match, exclude
	// and the policy's namespace).
	Match *match.Rule

	Context       []*ContextEntry
	Preconditions *Conditions // nil when the rule has none

	// Validate is set for validate rules this engine evaluates.
	Validate *Validation
	// CEL is set for validate.cel rules, PodSecurity for
	// validate.podSecurity rules (Validate is then nil).
	CEL         *celrule.Rule
	PodSecurity *podsecurity.Checker
	// Manifests is set for validate.manifests rules (manifests.go).
	Manifests *Manifests
	// Mutate is set for mutate rules (mutate.go), Generate for generate
	// rules (generate.go).
	Mutate   *Mutation
	Generate *Generation
	// Images is set for verifyImages rules (verifyimages.go).
	Images *ImageRules
	// Unsupported, when not empty, says why this engine cannot evaluate the
	// rule yet; evaluation reports an error result with this text.
	Unsupported string

	// Action is the rule's failure action: validate.failureAction or the
	// policy's.
	Action    Action
	Overrides []ActionOverride
	// AllowExistingViolations is validate.allowExistingViolations (default
	// true).
	AllowExistingViolations bool
	// UsesUserInfo is true when the rule reads request.userInfo, roles,
	// clusterRoles, serviceAccountName/Namespace, or selects by subjects,
	// roles or clusterRoles: it is skipped in background scans.
	UsesUserInfo bool
	// ReportProperties are templates of rule.reportProperties.
	ReportProperties map[string]*variables.Template
}

// ContextEntry is a compiled context entry.
type ContextEntry struct {
	Name string
	// PolicyNamespace is the namespace of the namespaced Policy the entry
	// belongs to, "" in a ClusterPolicy. Such an entry reads ConfigMaps and
	// API paths of that namespace only, as Kyverno 1.19 requires
	// (CVE-2026-22039).
	PolicyNamespace string
	// Matcher tells whether a query refers to the entry, which then loads
	// (Kyverno's deferred loading).
	Matcher *regexp.Regexp
	Path    string
	// Exactly one of the following is set.
	Variable        *VariableEntry
	ConfigMap       *ConfigMapEntry
	APICall         *APICallEntry
	GlobalReference *GlobalReferenceEntry
	ImageRegistry   *ImageRegistryEntry
}

// VariableEntry is a context.variable entry.
type VariableEntry struct {
	Value    *variables.Document // nil when unset
	JMESPath *variables.Template // nil when unset; renders to the expression text
	Default  *variables.Document // nil when unset
}

// ConfigMapEntry is a context.configMap entry.
type ConfigMapEntry struct {
	Name, Namespace *variables.Template
}

// APICallEntry is a context.apiCall entry.
type APICallEntry struct {
	URLPath    *variables.Template
	Method     string
	Data       []APICallData
	ServiceURL *variables.Template
	Headers    []APICallHeader
	CABundle   string
	JMESPath   *variables.Template // nil when unset
	Default    *variables.Document // nil when unset
}

// APICallData is one key of an apiCall POST body.
type APICallData struct {
	Key   string
	Value *variables.Document
}

// APICallHeader is one header of a service call.
type APICallHeader struct {
	Key   string
	Value *variables.Template
}

// GlobalReferenceEntry is a context.globalReference entry.
type GlobalReferenceEntry struct {
	Name     *variables.Template
	JMESPath *variables.Template
}

// ImageRegistryEntry is a context.imageRegistry entry.
type ImageRegistryEntry struct {
	Reference *variables.Template
	JMESPath  *variables.Template
}

// Conditions is a compiled precondition or deny block: the legacy list
// (all must hold) or any/all, evaluated by condition.Conditions.Eval.
type Conditions = condition.Conditions[*Condition]

// Condition is one compiled condition.
type Condition struct {
	Key      *variables.Document
	Operator condition.Operator
	Value    *variables.Document
	Message  string
	Path     string
}

// Validation is a compiled validate rule (pattern, anyPattern, deny or
// foreach).
type Validation struct {
	Message    *variables.Template // nil when validate.message is empty
	RawMessage string
	Checks
}

// Checks is the one check of a validate rule or of a foreach entry: a
// pattern, an anyPattern, a deny or a nested foreach (the others nil).
type Checks struct {
	Pattern    *Pattern   // nil when unset
	AnyPattern []*Pattern // nil when unset
	Deny       *Conditions
	Foreach    []*Foreach
}

// Pattern is a validate pattern: pre-compiled when it holds no variables,
// otherwise compiled after substitution at evaluation.
type Pattern struct {
	Static  *pattern.Pattern
	Dynamic *variables.Document
	Path    string
}

// Foreach is a compiled validate.foreach entry.
type Foreach struct {
	List          *jmespath.Query
	ListSource    string
	ElementScope  *bool
	Context       []*ContextEntry
	Preconditions *Conditions
	Checks
	Path string
}

// Compile checks doc and compiles it. It returns every problem found, as an
// engine.Errors sorted by path.
func Compile(doc *kyverno.Document) (*Policy, error) {
	return CompileWith(doc, CompileOptions{})
}

// CompileOptions tune Compile to the host's use of the policy.
type CompileOptions struct {
	// DeferCEL compiles the CEL expressions of a validate.cel rule when
	// the rule is first evaluated (celrule.Spec.Deferred), for a
	// short-lived run that evaluates few of its rules (verdict test). The
	// problems Compile reports are the same. Default false: a long-lived
	// host compiles everything when it loads the policy, so that no
	// evaluation pays for it.
	DeferCEL bool
}

// CompileWith is Compile with options.
func CompileWith(doc *kyverno.Document, opts CompileOptions) (*Policy, error) {
	c := &compiler{opts: opts}
	p := c.policy(doc)
	if err := c.errs.Err(); err != nil {
		return nil, fmt.Errorf("compile %s %q: %w", kindOf(doc), doc.Metadata.Name, err)
	}
	return p, nil
}

func kindOf(doc *kyverno.Document) string {
	if doc.Kind == "" {
		return "policy"
	}
	return doc.Kind
}

type compiler struct {
	opts CompileOptions
	errs engine.Errors
	// policyNamespace is the namespace of a namespaced Policy being
	// compiled ("" for a ClusterPolicy): its context entries may read that
	// namespace only.
	policyNamespace string
}

func (c *compiler) add(err error, code engine.Code, path string) {
	if err == nil {
		return
	}
	if es := engine.As(err); len(es) > 0 {
		c.errs = append(c.errs, es...)
		return
	}
	c.errs = append(c.errs, &engine.Error{Code: code, Path: path, Message: err.Error(), Err: err})
}

func (c *compiler) errorf(code engine.Code, path, format string, args ...any) {
	c.errs = append(c.errs, engine.Errorf(code, path, fmt.Sprintf(format, args...)))
}

func (c *compiler) policy(doc *kyverno.Document) *Policy {
	p := &Policy{
		doc:        doc,
		kind:       doc.Kind,
		name:       doc.Metadata.Name,
		Background: boolOr(doc.Spec.Background, true),
		Admission:  boolOr(doc.Spec.Admission, true),
		Scored:     doc.Metadata.Annotations[AnnotationScored] != "false",
		Category:   doc.Metadata.Annotations[AnnotationCategory],
		Severity:   doc.Metadata.Annotations[AnnotationSeverity],
		ApplyOne:   strings.EqualFold(doc.Spec.ApplyRules, "One"),
	}
	switch doc.Kind {
	case "ClusterPolicy":
	case "Policy":
		p.namespace = doc.Metadata.Namespace
		if p.namespace == "" {
			p.namespace = "default"
		}
	default:
		c.errorf(engine.CodeInvalidPolicy, "kind", "kind %q is not ClusterPolicy or Policy", doc.Kind)
	}
	if p.name == "" {
		c.errorf(engine.CodeInvalidPolicy, "metadata.name", "a policy needs a name")
	}
	if p.Namespaced() {
		c.policyNamespace = p.namespace
	}
	p.hash = hashOf(doc)
	p.Action = c.action(doc.Spec.ValidationFailureAction, "spec.validationFailureAction", Audit)
	p.Overrides = c.overrides(doc.Spec.ValidationFailureActionOverrides, "spec.validationFailureActionOverrides")
	if len(doc.Spec.Rules) == 0 {
		c.errorf(engine.CodeInvalidPolicy, "spec.rules", "a policy needs at least one rule")
	}

	rules, err := autogen.Rules(doc)
	if err != nil {
		c.add(err, engine.CodeInvalidPolicy, "spec.rules")
		rules = doc.Spec.Rules
	}
	names := map[string]bool{}
	// failed holds the rules written in the policy that have a problem:
	// their autogen copies have the same ones, which are not reported
	// again.
	failed := map[string]bool{}
	for i := range rules {
		raw := &rules[i]
		path := fmt.Sprintf("spec.rules[%d]", i)
		autogenCopy := i >= len(doc.Spec.Rules)
		if autogenCopy {
			// Autogen rules are reported against the rule they come from.
			path = fmt.Sprintf("spec.rules[%s]", raw.Name)
		}
		if names[raw.Name] {
			c.errorf(engine.CodeInvalidPolicy, path+".name", "duplicate rule name %q", raw.Name)
		}
		names[raw.Name] = true
		before := len(c.errs)
		r := c.rule(p, raw, path)
		if !autogenCopy {
			c.invalidVariables(p, raw, path) // allowedvars.go
			if len(c.errs) > before {
				failed[raw.Name] = true
			}
		} else if failed[autogenSource(raw.Name)] {
			c.errs = c.errs[:before]
		}
		if r != nil {
			p.Rules = append(p.Rules, r)
		}
	}
	return p
}

// autogenSource is the name of the rule an autogen rule was made from.
func autogenSource(name string) string {
	if s, ok := strings.CutPrefix(name, "autogen-cronjob-"); ok {
		return s
	}
	s, _ := strings.CutPrefix(name, "autogen-")
	return s
}

func hashOf(doc *kyverno.Document) string {
	b, err := json.Marshal(struct {
		Kind, Name, Namespace string
		Annotations           map[string]string
		Spec                  kyverno.Spec
	}{doc.Kind, doc.Metadata.Name, doc.Metadata.Namespace, doc.Metadata.Annotations, doc.Spec})
	if err != nil {
		// A decoded document always marshals; keep the hash usable anyway.
		b = []byte(doc.Metadata.Name)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

func (c *compiler) action(s, path string, def Action) Action {
	switch strings.ToLower(s) {
	case "":
		return def
	case "audit":
		return Audit
	case "enforce":
		return Enforce
	default:
		c.errorf(engine.CodeInvalidPolicy, path, "unknown failure action %q (want Audit or Enforce)", s)
		return def
	}
}

func (c *compiler) overrides(in []kyverno.ValidationFailureActionOverride, path string) []ActionOverride {
	var out []ActionOverride
	for i, o := range in {
		p := fmt.Sprintf("%s[%d]", path, i)
		ov := ActionOverride{
			Action:     c.action(o.Action, p+".action", Audit),
			Namespaces: o.Namespaces,
		}
		if o.NamespaceSelector != nil {
			// Kyverno accepts a selector that cannot be built here; it
			// never matches.
			ov.Selector, _ = match.CompileSelector(o.NamespaceSelector, p+".namespaceSelector")
		}
		out = append(out, ov)
	}
	return out
}

func (c *compiler) rule(p *Policy, raw *kyverno.Rule, path string) *Rule {
	r := &Rule{Name: raw.Name, Raw: raw, Path: path, Action: p.Action, Overrides: p.Overrides, AllowExistingViolations: true}
	if raw.Name == "" {
		c.errorf(engine.CodeInvalidPolicy, path+".name", "a rule needs a name")
	}
	var err error
	r.Match, err = match.CompileRule(raw, path, match.RuleOptions{PolicyNamespace: p.namespace, Background: p.Background})
	c.add(err, engine.CodeInvalidPolicy, path+".match")
	r.Context = c.contextEntries(raw.Context, path+".context")
	if raw.Preconditions != nil {
		r.Preconditions = c.conditions(raw.Preconditions, path+".preconditions")
	}
	if len(raw.ReportProperties) > 0 {
		r.ReportProperties = map[string]*variables.Template{}
		for k, v := range raw.ReportProperties {
			r.ReportProperties[k] = c.template(v, path+".reportProperties."+k)
		}
	}

	kinds := 0
	if raw.Validate != nil {
		kinds++
		r.Type = Validate
	}
	if raw.Mutate != nil {
		kinds++
		r.Type = Mutate
		r.Mutate = c.mutation(p, raw.Mutate, path+".mutate")
	}
	if raw.Generate != nil {
		kinds++
		r.Type = Generate
		r.Generate = c.generation(p, raw.Generate, path+".generate")
	}
	if len(raw.VerifyImages) > 0 {
		kinds++
		r.Type = VerifyImages
		r.Images, r.Unsupported = c.verifyImages(raw.VerifyImages, raw.ImageExtractors, path) // verifyimages.go
	}
	switch {
	case kinds == 0:
		c.errorf(engine.CodeInvalidPolicy, path, "a rule needs one of validate, mutate, generate or verifyImages")
	case kinds > 1:
		c.errorf(engine.CodeInvalidPolicy, path, "a rule may have only one of validate, mutate, generate or verifyImages")
	}
	if raw.Validate != nil {
		v := raw.Validate
		vpath := path + ".validate"
		r.Action = c.action(v.FailureAction, vpath+".failureAction", p.Action)
		if len(v.FailureActionOverrides) > 0 {
			r.Overrides = c.overrides(v.FailureActionOverrides, vpath+".failureActionOverrides")
		}
		r.AllowExistingViolations = boolOr(v.AllowExistingViolations, true)
		c.celPreconditionsOutsideCEL(raw, path)
		switch {
		case v.Manifests != nil:
			// First, as in Kyverno's handler choice.
			r.Manifests, r.Unsupported = c.manifests(v.Manifests, vpath+".manifests") // manifests.go
		case v.CEL != nil:
			r.CEL = c.cel(raw, path, vpath)
		case v.PodSecurity != nil:
			r.PodSecurity = c.podSecurity(v, vpath)
		case v.Assert != nil:
			r.Unsupported = "validate.assert rules are not supported yet"
		default:
			r.Validate = c.validation(v, vpath)
		}
	}

	if p, name := elementOutsideForeach(raw, path); p != "" {
		c.errorf(engine.CodeInvalidVariable, p, "variable %q is only defined inside a foreach", name)
	}
	r.UsesUserInfo = usesUserInfo(raw)
	if p.Background && r.UsesUserInfo {
		c.errorf(engine.CodeBackgroundUserInfo, path,
			"rule %q uses request.userInfo, roles, clusterRoles, subjects or serviceAccountName/Namespace, which background scans do not have: set spec.background to false", raw.Name)
	}
	return r
}

func (c *compiler) validation(v *kyverno.Validation, path string) *Validation {
	out := &Validation{RawMessage: v.Message}
	if v.Message != "" {
		out.Message = c.template(v.Message, path+".message")
	}
	var n int
	out.Checks, n = c.checks(v.Pattern, v.AnyPattern, v.Deny, v.Foreach, path)
	if n != 1 {
		c.errorf(engine.CodeInvalidPolicy, path, "a validate rule needs exactly one of pattern, anyPattern, deny, foreach, podSecurity, cel or manifests")
	}
	return out
}

// checks compiles the checks of a validate rule or foreach entry at path;
// n is how many are set (one is valid).
func (c *compiler) checks(pat, anyPat any, deny *kyverno.Deny, each []kyverno.ForEachValidation, path string) (out Checks, n int) {
	if pat != nil {
		n++
		out.Pattern = c.pattern(pat, path+".pattern")
	}
	if anyPat != nil {
		n++
		out.AnyPattern = c.anyPattern(anyPat, path+".anyPattern")
	}
	if deny != nil {
		n++
		out.Deny = c.deny(deny, path+".deny")
	}
	if len(each) > 0 {
		n++
		out.Foreach = c.foreach(each, path+".foreach")
	}
	return out, n
}

func (c *compiler) deny(d *kyverno.Deny, path string) *Conditions {
	if d.Conditions == nil {
		// A deny without conditions always denies.
		return &Conditions{}
	}
	return c.conditions(d.Conditions, path+".conditions")
}

func (c *compiler) foreach(in []kyverno.ForEachValidation, path string) []*Foreach {
	var out []*Foreach
	for i := range in {
		f := &in[i]
		p := fmt.Sprintf("%s[%d]", path, i)
		fe := &Foreach{ListSource: f.List, ElementScope: f.ElementScope, Path: p}
		fe.List = c.foreachList(f.List, p+".list")
		fe.Context = c.contextEntries(f.Context, p+".context")
		if f.Preconditions != nil {
			fe.Preconditions = c.anyAll(f.Preconditions, p+".preconditions")
		}
		var n int
		fe.Checks, n = c.checks(f.Pattern, f.AnyPattern, f.Deny, f.Foreach, p)
		if n != 1 {
			c.errorf(engine.CodeInvalidPolicy, p, "a foreach needs exactly one of pattern, anyPattern, deny or foreach")
		}
		out = append(out, fe)
	}
	return out
}

// foreachList compiles the list of a foreach at path: nil, with an error,
// when it is empty or does not parse.
func (c *compiler) foreachList(list, path string) *jmespath.Query {
	if list == "" {
		c.errorf(engine.CodeInvalidPolicy, path, "foreach needs a list")
		return nil
	}
	q, err := jmespath.Parse(strings.TrimSpace(stripBraces(list)))
	if err != nil {
		c.listError(path, list, err)
	}
	return q
}

// listError records that the list of a foreach does not parse.
func (c *compiler) listError(path, list string, err error) {
	c.errs = append(c.errs, &engine.Error{Code: engine.CodeInvalidVariable, Path: path,
		Message: fmt.Sprintf("invalid JMESPath %q: %v", jmespath.Excerpt(list), err), Err: err})
}

// stripBraces accepts a foreach list written as "{{ expr }}", which Kyverno
// also evaluates as the plain expression.
func stripBraces(s string) string {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "{{") && strings.HasSuffix(t, "}}") && strings.Count(t, "{{") == 1 {
		return t[2 : len(t)-2]
	}
	return s
}

func (c *compiler) pattern(raw any, path string) *Pattern {
	doc, err := variables.ParseDocument(raw)
	if err != nil {
		c.add(prefixPath(err, path), engine.CodeInvalidVariable, path)
		return &Pattern{Path: path}
	}
	if doc.HasVariables() {
		return &Pattern{Dynamic: doc, Path: path}
	}
	// Without variables, rendering only resolves $(...) references, which
	// depend on the policy alone: compile the result once.
	resolved, err := doc.Render(variables.Env{})
	if err != nil {
		c.add(prefixPath(err, path), engine.CodeInvalidPattern, path)
		return &Pattern{Path: path}
	}
	pat, err := pattern.Compile(resolved)
	if err != nil {
		c.add(prefixPath(err, path), engine.CodeInvalidPattern, path)
	}
	return &Pattern{Static: pat, Path: path}
}

func (c *compiler) anyPattern(raw any, path string) []*Pattern {
	list, ok := raw.([]any)
	if !ok {
		c.errorf(engine.CodeInvalidPolicy, path, "anyPattern must be a list of patterns")
		return nil
	}
	return compileEach(list, path, c.pattern)
}

// compileEach compiles each item of list with f, at path[i].
func compileEach[T any](list []any, path string, f func(any, string) T) []T {
	out := make([]T, 0, len(list))
	for i, item := range list {
		out = append(out, f(item, fmt.Sprintf("%s[%d]", path, i)))
	}
	return out
}

// conditions compiles a preconditions or deny.conditions value: a legacy
// list, or {any, all}.
func (c *compiler) conditions(raw any, path string) *Conditions {
	switch t := raw.(type) {
	case []any:
		out := &Conditions{Legacy: true}
		for i, e := range t {
			out.All = append(out.All, c.condition(e, fmt.Sprintf("%s[%d]", path, i)))
		}
		return out
	case map[string]any:
		out := &Conditions{}
		for k := range t {
			if k != "any" && k != "all" {
				c.errorf(engine.CodeDecode, path+"."+k, "unknown field (want any or all)")
			}
		}
		if a, ok := t["any"]; ok && a != nil {
			out.Any = c.conditionList(a, path+".any")
			if out.Any == nil {
				out.Any = []*Condition{} // `any: []` is present, and fails
			}
		}
		if a, ok := t["all"]; ok {
			out.All = c.conditionList(a, path+".all")
		}
		return out
	default:
		c.errorf(engine.CodeInvalidPolicy, path, "conditions must be a list or an object with any/all")
		return &Conditions{}
	}
}

func (c *compiler) anyAll(in *kyverno.AnyAllConditions, path string) *Conditions {
	out := &Conditions{}
	if in.Any != nil {
		out.Any = make([]*Condition, 0, len(in.Any))
	}
	for i := range in.Any {
		out.Any = append(out.Any, c.typedCondition(&in.Any[i], fmt.Sprintf("%s.any[%d]", path, i)))
	}
	for i := range in.All {
		out.All = append(out.All, c.typedCondition(&in.All[i], fmt.Sprintf("%s.all[%d]", path, i)))
	}
	return out
}

func (c *compiler) conditionList(raw any, path string) []*Condition {
	if raw == nil {
		return nil
	}
	list, ok := raw.([]any)
	if !ok {
		c.errorf(engine.CodeInvalidPolicy, path, "must be a list of conditions")
		return nil
	}
	return compileEach(list, path, c.condition)
}

func (c *compiler) condition(raw any, path string) *Condition {
	m, ok := raw.(map[string]any)
	if !ok {
		c.errorf(engine.CodeInvalidPolicy, path, "a condition must be an object with key, operator and value")
		return &Condition{Path: path}
	}
	var cond kyverno.Condition
	for k, v := range m {
		switch k {
		case "key":
			cond.Key = v
		case "value":
			cond.Value = v
		case "operator":
			s, ok := v.(string)
			if !ok {
				c.errorf(engine.CodeDecode, path+".operator", "must be a string")
			}
			cond.Operator = s
		case "message":
			s, ok := v.(string)
			if !ok {
				c.errorf(engine.CodeDecode, path+".message", "must be a string")
			}
			cond.Message = s
		default:
			c.errorf(engine.CodeDecode, path+"."+k, "unknown field")
		}
	}
	return c.typedCondition(&cond, path)
}

func (c *compiler) typedCondition(in *kyverno.Condition, path string) *Condition {
	out := &Condition{Message: in.Message, Path: path}
	op, err := condition.ParseOperator(in.Operator)
	if err != nil {
		c.add(prefixPath(err, path+".operator"), engine.CodeInvalidPolicy, path+".operator")
	}
	out.Operator = op
	out.Key = c.document(in.Key, path+".key")
	out.Value = c.document(in.Value, path+".value")
	return out
}

func (c *compiler) document(raw any, path string) *variables.Document {
	d, err := variables.ParseDocument(raw)
	if err != nil {
		c.add(prefixPath(err, path), engine.CodeInvalidVariable, path)
		d, _ = variables.ParseDocument(nil)
	}
	return d
}

func (c *compiler) template(s, path string) *variables.Template {
	t, err := variables.Parse(s)
	if err != nil {
		c.add(prefixPath(err, path), engine.CodeInvalidVariable, path)
		t, _ = variables.Parse("")
	}
	return t
}

func (c *compiler) optTemplate(s, path string) *variables.Template {
	if s == "" {
		return nil
	}
	return c.template(s, path)
}

// contextJMESPath compiles the jmesPath of a variable, apiCall or
// globalReference context entry: a template that renders to the expression.
// One without variables must parse, as Kyverno's policy validation checks
// (without checking function calls, which Kyverno leaves to evaluation);
// this also applies the limits of jmespath.Parse at compile time.
func (c *compiler) contextJMESPath(s, path string) *variables.Template {
	t := c.optTemplate(s, path)
	if t == nil || variables.IsVariable(s) {
		return t
	}
	if err := jmespath.CheckSyntax(s); err != nil {
		c.errs = append(c.errs, &engine.Error{Code: engine.CodeInvalidVariable, Path: path,
			Message: fmt.Sprintf("failed to parse JMESPath %s: %s", jmespath.Excerpt(s), engine.As(err)[0].Message), Err: err})
	}
	return t
}

func (c *compiler) contextEntries(in []kyverno.ContextEntry, path string) []*ContextEntry {
	var out []*ContextEntry
	for i := range in {
		e := &in[i]
		p := fmt.Sprintf("%s[%d]", path, i)
		ce := &ContextEntry{Name: e.Name, Matcher: NameMatcher(e.Name), Path: p, PolicyNamespace: c.policyNamespace}
		if e.Name == "" {
			c.errorf(engine.CodeInvalidPolicy, p+".name", "a context entry needs a name")
		}
		n := 0
		if v := e.Variable; v != nil {
			n++
			ve := &VariableEntry{JMESPath: c.contextJMESPath(v.JMESPath, p+".variable.jmesPath")}
			if v.Value != nil {
				ve.Value = c.document(v.Value, p+".variable.value")
			}
			if v.Default != nil {
				ve.Default = c.document(v.Default, p+".variable.default")
			}
			if v.Value == nil && v.JMESPath == "" {
				c.errorf(engine.CodeInvalidPolicy, p+".variable", "a variable needs a value or a jmesPath")
			}
			ce.Variable = ve
		}
		if cm := e.ConfigMap; cm != nil {
			n++
			ce.ConfigMap = &ConfigMapEntry{
				Name:      c.template(cm.Name, p+".configMap.name"),
				Namespace: c.template(cm.Namespace, p+".configMap.namespace"),
			}
		}
		if a := e.APICall; a != nil {
			n++
			ae := &APICallEntry{
				URLPath:  c.optTemplate(a.URLPath, p+".apiCall.urlPath"),
				Method:   a.Method,
				JMESPath: c.contextJMESPath(a.JMESPath, p+".apiCall.jmesPath"),
			}
			if ae.Method == "" {
				ae.Method = "GET"
			}
			for j, d := range a.Data {
				ae.Data = append(ae.Data, APICallData{Key: d.Key, Value: c.document(d.Value, fmt.Sprintf("%s.apiCall.data[%d].value", p, j))})
			}
			if s := a.Service; s != nil {
				ae.ServiceURL = c.template(s.URL, p+".apiCall.service.url")
				ae.CABundle = s.CABundle
				for j, h := range s.Headers {
					ae.Headers = append(ae.Headers, APICallHeader{Key: h.Key, Value: c.template(h.Value, fmt.Sprintf("%s.apiCall.service.headers[%d].value", p, j))})
				}
			}
			if a.Default != nil {
				ae.Default = c.document(a.Default, p+".apiCall.default")
			}
			ce.APICall = ae
		}
		if g := e.GlobalReference; g != nil {
			n++
			ce.GlobalReference = &GlobalReferenceEntry{
				Name:     c.template(g.Name, p+".globalReference.name"),
				JMESPath: c.contextJMESPath(g.JMESPath, p+".globalReference.jmesPath"),
			}
		}
		if r := e.ImageRegistry; r != nil {
			n++
			ce.ImageRegistry = &ImageRegistryEntry{
				Reference: c.template(r.Reference, p+".imageRegistry.reference"),
				JMESPath:  c.optTemplate(r.JMESPath, p+".imageRegistry.jmesPath"),
			}
		}
		if n != 1 {
			c.errorf(engine.CodeInvalidPolicy, p, "a context entry needs exactly one of variable, configMap, apiCall, globalReference or imageRegistry")
		}
		out = append(out, ce)
	}
	return out
}

// prefixPath makes the paths of engine errors found inside a sub-document
// absolute.
func prefixPath(err error, prefix string) error {
	return mapPaths(err, func(path string) string {
		switch {
		case path == "":
			return prefix
		case strings.HasPrefix(path, prefix):
			return path
		case strings.HasPrefix(path, "["), strings.HasPrefix(path, "."):
			return prefix + path
		}
		return prefix + "." + path
	})
}

// mapPaths is err with the path of each of its engine errors (copies)
// given by f; an error that holds none is returned as it is.
func mapPaths(err error, f func(string) string) error {
	es := engine.As(err)
	if len(es) == 0 {
		return err
	}
	out := make(engine.Errors, 0, len(es))
	for _, e := range es {
		cp := *e
		cp.Path = f(cp.Path)
		out = append(out, &cp)
	}
	return out
}

// NameMatcher returns Kyverno's test of whether a JMESPath query refers to
// the context entry name: the name as a word not preceded by a dot.
func NameMatcher(name string) *regexp.Regexp {
	return regexp.MustCompile(`(?:\A|\z|\s|[^.0-9A-Za-z])` + regexp.QuoteMeta(name) + `\b`)
}
