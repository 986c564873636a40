package policy

import (
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/vap"
)

// Labels of ValidatingAdmissionPolicies and their bindings that Kyverno's
// background scans read (pkg/controllers/report/utils).
const (
	// LabelVAPReports: "true" on a ValidatingAdmissionPolicy includes it
	// in background scans.
	LabelVAPReports = "reports.kyverno.io/enabled"
	// LabelReportsDisabled on a ValidatingAdmissionPolicyBinding (any
	// value) leaves it out of background scans.
	LabelReportsDisabled = "reports.kyverno.io/disabled"
)

// CompileVAP compiles a Kubernetes ValidatingAdmissionPolicy (engine/vap)
// into the compiled form of the other kinds: Rules is empty and VAP is
// set, which eval runs in the validate phase, as Kyverno's CLI and
// background scans run these policies.
//
// Kubernetes enforces ValidatingAdmissionPolicies itself: Admission is
// false (admission requests do not evaluate them; a host that evaluates
// them at admission, as Kyverno's CLI does, sets it) and Action is Audit,
// so that nothing Verdict decides denies for them. Background is true for
// a policy labelled reports.kyverno.io/enabled: "true" only: Kyverno's
// background scans report on those alone (with
// --validatingAdmissionPolicyReports).
// Scored, Category and Severity come from the annotations, as Kyverno's
// reports read them. Document returns the policy's metadata with an empty
// kyverno.io spec; VAP.Document returns the policy as written.
func CompileVAP(doc *vap.Document) (*Policy, error) {
	vp, err := vap.Compile(doc)
	if err != nil {
		return nil, err
	}
	md := doc.Metadata
	return &Policy{
		doc: &kyverno.Document{
			APIVersion: doc.APIVersion,
			Kind:       doc.Kind,
			Metadata: kyverno.ObjectMeta{
				Name:            md.Name,
				GenerateName:    md.GenerateName,
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
		Background: md.Labels[LabelVAPReports] == "true",
		Action:     Audit,
		Scored:     md.Annotations[AnnotationScored] != "false",
		Category:   md.Annotations[AnnotationCategory],
		Severity:   md.Annotations[AnnotationSeverity],
		VAP:        vp,
	}, nil
}
