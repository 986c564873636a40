package vap

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/celrule"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/match"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// Validation actions of a binding: those of a ValidatingPolicy.
const (
	ActionDeny  = vpol.ActionDeny
	ActionWarn  = vpol.ActionWarn
	ActionAudit = vpol.ActionAudit
)

// Policy is a compiled ValidatingAdmissionPolicy. It is immutable and safe
// for concurrent use.
type Policy struct {
	doc  *Document
	hash string

	// FailurePolicyIgnore is spec.failurePolicy: Ignore (default Fail, as
	// Kyverno runs a policy without one): an expression that errors is
	// then an error result that does not deny, and a match condition that
	// errors makes the policy skip.
	FailurePolicyIgnore bool
	// ParamKind is spec.paramKind; nil without (params is then not
	// declared, and the paramRef of a binding is ignored).
	ParamKind *ParamKind

	match *vpol.Matcher
	rule  *celrule.Rule
}

// ParamKind is the kind of a policy's params.
type ParamKind struct {
	APIVersion, Kind string
}

// Document returns the policy as written. Callers must not modify it.
func (p *Policy) Document() *Document { return p.doc }

// Name is metadata.name.
func (p *Policy) Name() string { return p.doc.Metadata.Name }

// Hash is the SHA-256 of the policy's kind, name, annotations and spec,
// hex encoded.
func (p *Policy) Hash() string { return p.hash }

// MatchConstraints returns spec.matchConstraints. Callers must not modify
// it.
func (p *Policy) MatchConstraints() *admissionregistrationv1.MatchResources {
	return p.doc.Spec.MatchConstraints
}

// Compile checks doc and compiles it: every expression once, in
// Kubernetes' CEL environment (celrule.CompileAdmission). It returns every
// problem found, as engine.Errors sorted by path, Code
// engine.CodeInvalidPolicy: what the API server requires (a name,
// matchConstraints with resource rules, the fields of each expression, a
// known failure policy, selectors that parse) and expressions that do not
// compile or do not have their type (a validation that is not bool), with
// Kubernetes' message.
func Compile(doc *Document) (*Policy, error) {
	p := &Policy{doc: doc, hash: hashOf(doc.Kind, &doc.Metadata, &doc.Spec)}
	spec := &doc.Spec
	var probs vpol.Problems
	bad := probs.Invalid
	if doc.Metadata.Name == "" {
		bad("metadata.name", "a policy needs a name")
	}
	ignore, fpErr := vpol.FailurePolicyIgnore(spec.FailurePolicy)
	if fpErr != nil {
		probs.Errs = append(probs.Errs, fpErr)
	}
	p.FailurePolicyIgnore = ignore
	if k := spec.ParamKind; k != nil {
		if k.APIVersion == "" {
			bad("spec.paramKind.apiVersion", "a paramKind needs an apiVersion")
		}
		if k.Kind == "" {
			bad("spec.paramKind.kind", "a paramKind needs a kind")
		}
		p.ParamKind = &ParamKind{APIVersion: k.APIVersion, Kind: k.Kind}
	}
	if mc := spec.MatchConstraints; mc == nil || len(mc.ResourceRules) == 0 {
		bad("spec.matchConstraints.resourceRules", "a ValidatingAdmissionPolicy needs matchConstraints with at least one resource rule")
	} else {
		probs.Errs = append(probs.Errs, checkSelectors(mc, "spec.matchConstraints")...)
		p.match = vpol.CompileMatcher(mc)
	}
	cs := celrule.AdmissionSpec{HasParams: spec.ParamKind != nil}
	named := func(path, what, name, expression string) celrule.NamedExpression {
		if name == "" {
			bad(path+".name", "a %s needs a name", what)
		}
		if expression == "" {
			bad(path+".expression", "a %s needs an expression", what)
		}
		return celrule.NamedExpression{Name: name, Expression: expression}
	}
	for i, m := range spec.MatchConditions {
		cs.MatchConditions = append(cs.MatchConditions, named(fmt.Sprintf("spec.matchConditions[%d]", i), "match condition", m.Name, m.Expression))
	}
	for i, v := range spec.Variables {
		cs.Variables = append(cs.Variables, named(fmt.Sprintf("spec.variables[%d]", i), "variable", v.Name, v.Expression))
	}
	for i, v := range spec.Validations {
		if v.Expression == "" {
			bad(fmt.Sprintf("spec.validations[%d].expression", i), "a validation needs an expression")
		}
		cs.Validations = append(cs.Validations, celrule.Validation{Expression: v.Expression, Message: v.Message, MessageExpression: v.MessageExpression})
	}
	for i, a := range spec.AuditAnnotations {
		if a.Key == "" {
			bad(fmt.Sprintf("spec.auditAnnotations[%d].key", i), "an audit annotation needs a key")
		}
		if a.ValueExpression == "" {
			bad(fmt.Sprintf("spec.auditAnnotations[%d].valueExpression", i), "an audit annotation needs a valueExpression")
		}
		cs.AuditAnnotations = append(cs.AuditAnnotations, celrule.AuditAnnotation{Key: a.Key, ValueExpression: a.ValueExpression})
	}
	if len(probs.Errs) == 0 {
		rule, err := celrule.CompileAdmission(cs, "spec")
		if err != nil {
			probs.Errs = append(probs.Errs, engine.As(err)...)
		}
		p.rule = rule
	}
	if err := probs.Errs.Err(); err != nil {
		return nil, fmt.Errorf("compile %s %q: %w", KindPolicy, doc.Metadata.Name, err)
	}
	return p, nil
}

// Binding is a compiled ValidatingAdmissionPolicyBinding. It is immutable
// and safe for concurrent use.
type Binding struct {
	doc  *BindingDocument
	hash string

	// Actions are spec.validationActions, without repeats. Kyverno's
	// results do not depend on them.
	Actions []string
	// ParamRef is spec.paramRef; nil without.
	ParamRef *ParamRef

	// match is spec.matchResources; nil when unset (the binding matches
	// every request its policy does).
	match *vpol.Matcher
}

// ParamRef is a binding's paramRef.
type ParamRef struct {
	// Name and Namespace are paramRef.name and paramRef.namespace.
	Name, Namespace string
	// Selector is paramRef.selector (nil when unset); when set, Name is
	// not used, as in Kyverno.
	Selector *match.Selector
	// LabelSelector is paramRef.selector as written.
	LabelSelector *metav1.LabelSelector
	// DenyNotFound is parameterNotFoundAction: Deny.
	DenyNotFound bool
}

// Document returns the binding as written. Callers must not modify it.
func (b *Binding) Document() *BindingDocument { return b.doc }

// Name is metadata.name.
func (b *Binding) Name() string { return b.doc.Metadata.Name }

// PolicyName is spec.policyName: the ValidatingAdmissionPolicy it binds.
func (b *Binding) PolicyName() string { return b.doc.Spec.PolicyName }

// Hash is the SHA-256 of the binding's kind, name, annotations and spec,
// hex encoded.
func (b *Binding) Hash() string { return b.hash }

// CompileBinding checks doc and compiles its matchResources and paramRef.
// It returns every problem found, as engine.Errors sorted by path, Code
// engine.CodeInvalidPolicy: a binding needs a name and a policyName, its
// validation actions and parameterNotFoundAction must be known, its
// selectors must parse.
func CompileBinding(doc *BindingDocument) (*Binding, error) {
	b := &Binding{doc: doc, hash: hashOf(doc.Kind, &doc.Metadata, &doc.Spec)}
	spec := &doc.Spec
	var probs vpol.Problems
	bad := probs.Invalid
	if doc.Metadata.Name == "" {
		bad("metadata.name", "a binding needs a name")
	}
	if spec.PolicyName == "" {
		bad("spec.policyName", "a binding needs the name of its ValidatingAdmissionPolicy")
	}
	for i, a := range spec.ValidationActions {
		switch string(a) {
		case ActionDeny, ActionWarn, ActionAudit:
			if !slices.Contains(b.Actions, string(a)) {
				b.Actions = append(b.Actions, string(a))
			}
		default:
			bad(fmt.Sprintf("spec.validationActions[%d]", i), "unknown validation action %q (want Deny, Warn or Audit)", a)
		}
	}
	if mr := spec.MatchResources; mr != nil {
		probs.Errs = append(probs.Errs, checkSelectors(mr, "spec.matchResources")...)
		b.match = vpol.CompileMatcher(mr)
	}
	if ref := spec.ParamRef; ref != nil {
		pr := &ParamRef{Name: ref.Name, Namespace: ref.Namespace, LabelSelector: ref.Selector}
		if a := ref.ParameterNotFoundAction; a != nil {
			switch *a {
			case admissionregistrationv1.AllowAction:
			case admissionregistrationv1.DenyAction:
				pr.DenyNotFound = true
			default:
				bad("spec.paramRef.parameterNotFoundAction", "unknown action %q (want Allow or Deny)", *a)
			}
		}
		if ref.Selector != nil {
			if _, err := metav1.LabelSelectorAsSelector(ref.Selector); err != nil {
				bad("spec.paramRef.selector", "%v", err)
			} else {
				sel, err := match.CompileSelector(kyvernoSelector(ref.Selector), "spec.paramRef.selector")
				if err != nil {
					probs.Errs = append(probs.Errs, engine.As(err)...)
				}
				pr.Selector = sel
			}
		}
		b.ParamRef = pr
	}
	if err := probs.Errs.Err(); err != nil {
		return nil, fmt.Errorf("compile %s %q: %w", KindBinding, doc.Metadata.Name, err)
	}
	return b, nil
}

// checkSelectors reports the selectors of mc that do not parse, as the
// API server refuses them.
func checkSelectors(mc *admissionregistrationv1.MatchResources, path string) engine.Errors {
	var errs engine.Errors
	for field, sel := range map[string]*metav1.LabelSelector{"namespaceSelector": mc.NamespaceSelector, "objectSelector": mc.ObjectSelector} {
		if sel == nil {
			continue
		}
		if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, path+"."+field, err.Error()))
		}
	}
	return errs
}

// kyvernoSelector is sel in engine/match's form (its values hold no
// wildcards: Kubernetes' label values cannot).
func kyvernoSelector(sel *metav1.LabelSelector) *kyverno.LabelSelector {
	out := &kyverno.LabelSelector{MatchLabels: sel.MatchLabels}
	for _, e := range sel.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, kyverno.LabelSelectorRequirement{Key: e.Key, Operator: string(e.Operator), Values: e.Values})
	}
	return out
}

func hashOf(kind string, md *metav1.ObjectMeta, spec any) string {
	b, err := json.Marshal(struct {
		Kind, Name  string
		Annotations map[string]string
		Spec        any
	}{kind, md.Name, md.Annotations, spec})
	if err != nil {
		b = []byte(kind + "/" + md.Name)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
