package mpol

import (
	_ "embed"

	policiesv1 "github.com/kyverno/api/api/policies.kyverno.io/v1"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// schemaJSON holds the CRD schemas of the kinds by "Kind/version", made
// by engine/vpol/gen_schema.go from the MutatingPolicy and
// NamespacedMutatingPolicy CRDs:
//
//	go run ./engine/vpol/gen_schema.go \
//	    ../shared/kyverno-docs/crds/schemas-policies.kyverno.io/policies.kyverno.io_mutatingpolicies.yaml \
//	    ../shared/kyverno-docs/crds/schemas-policies.kyverno.io/policies.kyverno.io_namespacedmutatingpolicies.yaml > engine/mpol/schema.json
//
//go:embed schema.json
var schemaJSON []byte

var family = vpol.NewFamily[policiesv1.MutatingPolicySpec]("mpol", KindMutatingPolicy, schemaJSON)

// Decode reads every MutatingPolicy and NamespacedMutatingPolicy of data
// (multi-document YAML or JSON, Lists included) and returns them in
// order; other documents are skipped. source names the input in errors;
// the problems of a document are wrapped with the source, its index and
// its line.
func Decode(source string, data []byte) ([]*Document, error) {
	return family.Decode(source, data)
}

// DecodePolicy decodes one MutatingPolicy or NamespacedMutatingPolicy (a
// JSON object, as kyverno.SplitDocuments returns it), strictly against
// the CRD schema of its version, as engine/vpol decodes its kinds: an
// unknown field, or a value of the wrong type, is an error with Code
// engine.CodeDecode and the field path ("spec.mutations[0].patchTyp"); a
// version the CRD does not serve is an error with Code
// engine.CodeUnsupported at "apiVersion". Every problem is reported, as
// engine.Errors sorted by path.
func DecodePolicy(m map[string]any) (*Document, error) {
	return family.DecodePolicy(m)
}
