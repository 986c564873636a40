package policy

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/verdict-policy/verdict/engine/ivpol"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// CompileValidating compiles a ValidatingPolicy or NamespacedValidatingPolicy
// (engine/vpol) into the same compiled form as the kyverno.io kinds, so
// that servers, caches and evaluation hold both generations side by side:
// Rules is empty and Validating is set, which eval runs in the validate
// phase as Kyverno runs these kinds.
//
// Background and Admission are spec.evaluation.background.enabled and
// spec.evaluation.admission.enabled; Action is Enforce when
// spec.validationActions holds Deny, Audit otherwise; Scored, Category
// and Severity come from the annotations, as for the kyverno.io kinds.
// Document returns the policy's metadata with an empty kyverno.io spec;
// Validating.Document returns the policy as written.
func CompileValidating(doc *vpol.Document) (*Policy, error) {
	vp, err := vpol.Compile(doc)
	if err != nil {
		return nil, err
	}
	p := celPolicy(doc.APIVersion, doc.Kind, &doc.Metadata, vp.Namespace(), vp.Hash())
	p.Background, p.Admission, p.Validating = vp.Background, vp.Admission, vp
	if slices.Contains(vp.Actions, vpol.ActionDeny) {
		p.Action = Enforce
	}
	return p, nil
}

// CompileMutating compiles a MutatingPolicy or NamespacedMutatingPolicy
// (engine/mpol) into the compiled form of the other kinds: Rules is empty
// and Mutating is set, which eval runs in the mutate phase, after the
// mutate rules of the kyverno.io kinds, as Kyverno's CLI runs these kinds.
// Background and Admission are spec.evaluation.background.enabled and
// spec.evaluation.admission.enabled; Scored, Category and Severity come
// from the annotations. Document returns the policy's metadata with an
// empty kyverno.io spec; Mutating.Document returns the policy as written.
func CompileMutating(doc *mpol.Document) (*Policy, error) {
	mp, err := mpol.Compile(doc)
	if err != nil {
		return nil, err
	}
	p := celPolicy(doc.APIVersion, doc.Kind, &doc.Metadata, mp.Namespace, mp.Hash)
	p.Background, p.Admission, p.Mutating = mp.Background, mp.Admission, mp
	return p, nil
}

// CompileMutatingAdmission compiles a Kubernetes MutatingAdmissionPolicy
// with the bindings that name it (engine/mpol) into the compiled form of
// the other kinds: Rules is empty and MutatingAdmission is set, which eval
// runs in the mutate phase before the MutatingPolicies, as Kyverno's CLI
// runs them.
func CompileMutatingAdmission(doc *mpol.AdmissionPolicyDocument, bindings []*mpol.BindingDocument) (*Policy, error) {
	ap, err := mpol.CompileAdmissionPolicy(doc, bindings)
	if err != nil {
		return nil, err
	}
	p := celPolicy(doc.APIVersion, doc.Kind, &doc.Metadata, "", ap.Hash)
	p.Background, p.Admission, p.MutatingAdmission = true, true, ap
	return p, nil
}

// CompileImageValidating compiles an ImageValidatingPolicy or
// NamespacedImageValidatingPolicy (engine/ivpol) into the compiled form of
// the other kinds: Rules is empty and ImageValidating is set, which eval
// runs in the validate phase. Action is Enforce when
// spec.validationActions holds Deny.
func CompileImageValidating(doc *ivpol.Document) (*Policy, error) {
	ip, err := ivpol.Compile(doc)
	if err != nil {
		return nil, err
	}
	p := celPolicy(doc.APIVersion, doc.Kind, &doc.Metadata, ip.Namespace, ip.Hash)
	p.Background, p.Admission, p.ImageValidating = ip.Background, ip.Admission, ip
	if slices.Contains(ip.Actions, vpol.ActionDeny) {
		p.Action = Enforce
	}
	return p, nil
}

// celPolicy is the compiled form of a policies.kyverno.io policy, before
// its kind's fields: its identity, and what the annotations say (Scored,
// Category, Severity), with an Audit action.
func celPolicy(apiVersion, kind string, md *metav1.ObjectMeta, namespace, hash string) *Policy {
	return &Policy{
		doc: &kyverno.Document{
			APIVersion: apiVersion,
			Kind:       kind,
			Metadata: kyverno.ObjectMeta{
				Name:            md.Name,
				GenerateName:    md.GenerateName,
				Namespace:       md.Namespace,
				UID:             string(md.UID),
				ResourceVersion: md.ResourceVersion,
				Generation:      md.Generation,
				Labels:          md.Labels,
				Annotations:     md.Annotations,
			},
		},
		hash:      hash,
		kind:      kind,
		name:      md.Name,
		namespace: namespace,
		Action:    Audit,
		Scored:    md.Annotations[AnnotationScored] != "false",
		Category:  md.Annotations[AnnotationCategory],
		Severity:  md.Annotations[AnnotationSeverity],
	}
}
