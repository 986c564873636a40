package policy

import (
	"slices"

	"github.com/verdict-policy/verdict/engine/kyverno"
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
	md := doc.Metadata
	p := &Policy{
		doc: &kyverno.Document{
			APIVersion: doc.APIVersion,
			Kind:       doc.Kind,
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
		hash:       vp.Hash(),
		kind:       doc.Kind,
		name:       md.Name,
		namespace:  vp.Namespace(),
		Background: vp.Background,
		Admission:  vp.Admission,
		Action:     Audit,
		Scored:     md.Annotations[AnnotationScored] != "false",
		Category:   md.Annotations[AnnotationCategory],
		Severity:   md.Annotations[AnnotationSeverity],
		Validating: vp,
	}
	if slices.Contains(vp.Actions, vpol.ActionDeny) {
		p.Action = Enforce
	}
	return p, nil
}
