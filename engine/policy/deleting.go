package policy

import (
	"github.com/verdict-policy/verdict/engine/dpol"
)

// CompileDeleting compiles a DeletingPolicy or NamespacedDeletingPolicy
// (engine/dpol) into the compiled form of the other kinds: Rules is empty
// and Deleting is set. Neither Admission nor Background is set: eval
// runs it only as Kyverno's CLI does (Options.KyvernoCLI), on the
// resources given.
func CompileDeleting(doc *dpol.Document) (*Policy, error) {
	dp, err := dpol.Compile(doc)
	if err != nil {
		return nil, err
	}
	p := celPolicy(doc.APIVersion, doc.Kind, &doc.Metadata, dp.Namespace, dp.Hash)
	p.Deleting = dp
	return p, nil
}
