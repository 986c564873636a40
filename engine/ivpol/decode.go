package ivpol

import (
	_ "embed"

	policiesv1 "github.com/kyverno/api/api/policies.kyverno.io/v1"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// schemaJSON holds the CRD schemas of the kinds by "Kind/version", made
// by engine/vpol/gen_schema.go:
//
//	go run ./engine/vpol/gen_schema.go \
//	    ../shared/kyverno-docs/crds/schemas-policies.kyverno.io/policies.kyverno.io_imagevalidatingpolicies.yaml \
//	    ../shared/kyverno-docs/crds/schemas-policies.kyverno.io/policies.kyverno.io_namespacedimagevalidatingpolicies.yaml > engine/ivpol/schema.json
//
//go:embed schema.json
var schemaJSON []byte

var family = vpol.NewFamily[policiesv1.ImageValidatingPolicySpec]("ivpol", KindImageValidatingPolicy, schemaJSON)

// Decode reads every ImageValidatingPolicy and
// NamespacedImageValidatingPolicy of data (multi-document YAML or JSON,
// Lists included) and returns them in order; other documents are skipped.
// source names the input in errors.
func Decode(source string, data []byte) ([]*Document, error) {
	return family.Decode(source, data)
}

// DecodePolicy decodes one policy (a JSON object, as
// kyverno.SplitDocuments returns it) strictly against the CRD schema of
// its version: an unknown field or a value of the wrong type is an error
// with Code engine.CodeDecode and the field path
// ("spec.attestors[0].cosign.ky"); a version the CRD does not serve is an
// error with Code engine.CodeUnsupported at "apiVersion".
func DecodePolicy(m map[string]any) (*Document, error) {
	return family.DecodePolicy(m)
}
