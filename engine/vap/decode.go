package vap

import (
	_ "embed"
	"fmt"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/vpol"
)

//go:embed schema.json
var schemaJSON []byte

// kinds decodes both kinds against their schemas by "Kind/version"
// (gen_schema.go), in the versions Kyverno's CLI loads.
var kinds = vpol.NewGroupKinds("vap", Group, schemaJSON, servedVersions)

// Decode reads every ValidatingAdmissionPolicy of data (multi-document
// YAML or JSON, Lists included) and returns them in order; other
// documents are skipped. source names the input in errors. Each document
// is decoded by DecodePolicy; the problems of a document are wrapped with
// the source, its index and its line, and every document's are reported.
func Decode(source string, data []byte) ([]*Document, error) {
	return vpol.DecodeAll(source, data, IsPolicy, DecodePolicy)
}

// DecodeBindings reads every ValidatingAdmissionPolicyBinding of data, as
// Decode reads policies.
func DecodeBindings(source string, data []byte) ([]*BindingDocument, error) {
	return vpol.DecodeAll(source, data, IsBinding, DecodeBinding)
}

// DecodePolicy decodes one ValidatingAdmissionPolicy (a JSON object, as
// kyverno.SplitDocuments returns it) strictly against the schema of
// Kubernetes' type: an unknown field, or a value of the wrong type, is an
// error with Code engine.CodeDecode and the field path
// ("spec.validations[0].expresion"); a version Kyverno's CLI does not load
// is an error with Code engine.CodeUnsupported at "apiVersion". Every
// problem is reported, as engine.Errors sorted by path.
func DecodePolicy(m map[string]any) (*Document, error) {
	var d Document
	if err := decodeKind(m, KindPolicy, &d.APIVersion, &d.Kind, &d.Metadata, &d.Spec); err != nil {
		return nil, err
	}
	return &d, nil
}

// DecodeBinding decodes one ValidatingAdmissionPolicyBinding as
// DecodePolicy decodes policies.
func DecodeBinding(m map[string]any) (*BindingDocument, error) {
	var d BindingDocument
	if err := decodeKind(m, KindBinding, &d.APIVersion, &d.Kind, &d.Metadata, &d.Spec); err != nil {
		return nil, err
	}
	return &d, nil
}

// decodeKind decodes m, which must be of kind want, into meta and spec.
func decodeKind(m map[string]any, want string, apiVersion, kind *string, meta, spec any) error {
	if k, _ := m["kind"].(string); k != "" && k != want {
		apiVersion, _ := m["apiVersion"].(string)
		return engine.Errorf(engine.CodeUnsupported, "kind", fmt.Sprintf("%s %s is not a %s", apiVersion, k, want))
	}
	var err error
	*apiVersion, *kind, err = kinds.Decode(m, meta, spec)
	return err
}
