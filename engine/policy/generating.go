package policy

import (
	"github.com/verdict-policy/verdict/engine/gpol"
)

// CompileGenerating compiles a GeneratingPolicy or
// NamespacedGeneratingPolicy (engine/gpol) into the compiled form of the
// other kinds: Rules is empty and Generating is set, which eval runs in
// the generate phase, after the generate rules of the kyverno.io kinds.
// Admission is spec.evaluation.admission.enabled; Background is false
// (the kind has no background results: generateExisting replays existing
// triggers through Request.GenerateExisting). Scored, Category and
// Severity come from the annotations.
func CompileGenerating(doc *gpol.Document) (*Policy, error) {
	gp, err := gpol.Compile(doc)
	if err != nil {
		return nil, err
	}
	p := celPolicy(doc.APIVersion, doc.Kind, &doc.Metadata, gp.Namespace, gp.Hash)
	p.Admission, p.Generating = gp.Admission, gp
	return p, nil
}
