package vap

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/vpol"
)

//go:embed schema.json
var schemaJSON []byte

// schemas are the schemas by "Kind/version" (gen_schema.go).
var schemas = sync.OnceValue(func() map[string]*kyverno.Schema {
	s, err := kyverno.ParseSchemas(schemaJSON)
	if err != nil {
		panic("vap: schema.json: " + err.Error()) // the embedded file is broken: a build error
	}
	return s
})

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
	meta, spec, err := decode(m, &d.APIVersion, &d.Kind, KindPolicy)
	if err != nil {
		return nil, err
	}
	if err := unmarshal(meta, &d.Metadata, "metadata"); err != nil {
		return nil, err
	}
	if err := unmarshal(spec, &d.Spec, "spec"); err != nil {
		return nil, err
	}
	return &d, nil
}

// DecodeBinding decodes one ValidatingAdmissionPolicyBinding as
// DecodePolicy decodes policies.
func DecodeBinding(m map[string]any) (*BindingDocument, error) {
	var d BindingDocument
	meta, spec, err := decode(m, &d.APIVersion, &d.Kind, KindBinding)
	if err != nil {
		return nil, err
	}
	if err := unmarshal(meta, &d.Metadata, "metadata"); err != nil {
		return nil, err
	}
	if err := unmarshal(spec, &d.Spec, "spec"); err != nil {
		return nil, err
	}
	return &d, nil
}

// decode checks m against the schema of its kind (want) and version and
// returns its metadata and spec.
func decode(m map[string]any, apiVersion, kind *string, want string) (meta, spec any, err error) {
	var ok1, ok2 bool
	*apiVersion, ok1 = m["apiVersion"].(string)
	*kind, ok2 = m["kind"].(string)
	if !ok1 || !ok2 {
		var errs engine.Errors
		if !ok1 {
			errs = append(errs, kyverno.TypeError("apiVersion", "string", m["apiVersion"]))
		}
		if !ok2 {
			errs = append(errs, kyverno.TypeError("kind", "string", m["kind"]))
		}
		return nil, nil, errs.Err()
	}
	group, version, _ := strings.Cut(*apiVersion, "/")
	if group != Group || *kind != want {
		return nil, nil, engine.Errorf(engine.CodeUnsupported, "kind", fmt.Sprintf("%s %s is not a %s", *apiVersion, *kind, want))
	}
	versions := servedVersions[*kind]
	if !slices.Contains(versions, version) {
		return nil, nil, engine.Errorf(engine.CodeUnsupported, "apiVersion",
			fmt.Sprintf("%s %s is not supported: Kyverno loads %s/%s only", *apiVersion, *kind, Group, strings.Join(versions, ", "+Group+"/")))
	}
	s := schemas()[*kind+"/"+version]
	if s == nil {
		return nil, nil, engine.Errorf(engine.CodeUnsupported, "apiVersion", fmt.Sprintf("no schema for %s %s", *apiVersion, *kind))
	}
	if err := kyverno.CheckSchema(m, s, "").Err(); err != nil {
		return nil, nil, err
	}
	return m["metadata"], m["spec"], nil
}

// unmarshal sets out from v, a value the schema accepted. What the schema
// leaves to the Go types (a timestamp's format) is reported at path.
func unmarshal(v any, out any, path string) error {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return &engine.Error{Code: engine.CodeDecode, Path: path, Message: err.Error(), Err: err}
	}
	if err := json.Unmarshal(b, out); err != nil {
		p := path
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			p = path + "." + te.Field
		}
		return &engine.Error{Code: engine.CodeDecode, Path: p, Message: err.Error(), Err: err}
	}
	return nil
}
