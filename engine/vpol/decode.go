package vpol

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
)

//go:embed schema.json
var schemaJSON []byte

// kinds are this package's kinds: the CRD schemas by "Kind/version"
// (gen_schema.go) and the served versions.
var kinds = NewKinds("vpol", schemaJSON, servedVersions)

// Kinds decodes the documents of some policies.kyverno.io kinds as this
// package decodes its own: strictly, against the CRD schema of each
// served version. The other packages of the group (engine/mpol, ...)
// decode theirs through a Family (family.go) made from a schema file of
// their own, made by gen_schema.go; engine/vap through NewGroupKinds.
type Kinds struct {
	group    string
	versions map[string][]string
	schemas  func() map[string]*kyverno.Schema
}

// NewKinds returns the kinds of schemaJSON (gen_schema.go's output,
// embedded by pkg) with the versions served of each kind. A schema file
// that does not parse is a build error: the first decode panics.
func NewKinds(pkg string, schemaJSON []byte, versions map[string][]string) *Kinds {
	return NewGroupKinds(pkg, Group, schemaJSON, versions)
}

// NewGroupKinds is NewKinds for kinds of another API group
// (admissionregistration.k8s.io for engine/vap).
func NewGroupKinds(pkg, group string, schemaJSON []byte, versions map[string][]string) *Kinds {
	return &Kinds{group: group, versions: versions, schemas: sync.OnceValue(func() map[string]*kyverno.Schema {
		s, err := kyverno.ParseSchemas(schemaJSON)
		if err != nil {
			panic(pkg + ": schema.json: " + err.Error()) // the embedded file is broken: a build error
		}
		return s
	})}
}

// Decode checks m against the schema of its kind and version, as
// DecodePolicy does, and sets meta and spec from its metadata and spec.
func (k *Kinds) Decode(m map[string]any, meta, spec any) (apiVersion, kind string, err error) {
	md, sp, err := k.decode(m, &apiVersion, &kind)
	if err != nil {
		return apiVersion, kind, err
	}
	if err := unmarshal(md, meta, "metadata"); err != nil {
		return apiVersion, kind, err
	}
	return apiVersion, kind, unmarshal(sp, spec, "spec")
}

// DecodeAll decodes with dec every document of data (multi-document
// YAML or JSON, Lists included) whose apiVersion and kind keep accepts,
// in order, as Decode does.
func DecodeAll[T any](source string, data []byte, keep func(apiVersion, kind string) bool, dec func(map[string]any) (T, error)) ([]T, error) {
	return decodeAll(source, data, keep, dec)
}

// Decode reads every ValidatingPolicy and NamespacedValidatingPolicy of
// data (multi-document YAML or JSON, Lists included) and returns them in
// order; other documents are skipped. source names the input in errors.
// Each document is decoded by DecodePolicy; the problems of a document are
// wrapped with the source, its index and its line.
func Decode(source string, data []byte) ([]*Document, error) {
	return decodeAll(source, data, IsPolicy, DecodePolicy)
}

// decodeAll decodes with dec every document of data whose apiVersion and
// kind keep accepts, in order; the problems of a document are wrapped with
// the source, its index and its line, and every document's are reported.
func decodeAll[T any](source string, data []byte, keep func(apiVersion, kind string) bool, dec func(map[string]any) (T, error)) ([]T, error) {
	objs, err := kyverno.SplitDocuments(source, data)
	if err != nil {
		return nil, err
	}
	var out []T
	var errs []error
	for i, o := range objs {
		apiVersion, _ := o.Value["apiVersion"].(string)
		kind, _ := o.Value["kind"].(string)
		if !keep(apiVersion, kind) {
			continue
		}
		d, err := dec(o.Value)
		if err != nil {
			errs = append(errs, kyverno.NewDocumentError(source, i+1, o.Line, err))
			continue
		}
		out = append(out, d)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// DecodePolicy decodes one ValidatingPolicy or NamespacedValidatingPolicy
// (a JSON object, as kyverno.SplitDocuments returns it), strictly against
// the CRD schema of its version: an unknown field, or a value of the wrong
// type, is an error with Code engine.CodeDecode and the field path
// ("spec.validations[0].expresion"); a version the CRD does not serve is
// an error with Code engine.CodeUnsupported at "apiVersion". Every problem
// is reported, as engine.Errors sorted by path.
func DecodePolicy(m map[string]any) (*Document, error) {
	var d Document
	var err error
	if d.APIVersion, d.Kind, err = kinds.Decode(m, &d.Metadata, &d.Spec); err != nil {
		return nil, err
	}
	return &d, nil
}

// DecodeException decodes one policies.kyverno.io PolicyException as
// DecodePolicy decodes policies.
func DecodeException(m map[string]any) (*ExceptionDocument, error) {
	var d ExceptionDocument
	meta, spec, err := kinds.decode(m, &d.APIVersion, &d.Kind)
	if err != nil {
		return nil, err
	}
	if d.Kind != KindPolicyException {
		return nil, engine.Errorf(engine.CodeUnsupported, "kind", fmt.Sprintf("%s %s is not a PolicyException", d.APIVersion, d.Kind))
	}
	if err := unmarshal(meta, &d.Metadata, "metadata"); err != nil {
		return nil, err
	}
	if err := unmarshal(spec, &d.Spec, "spec"); err != nil {
		return nil, err
	}
	return &d, nil
}

// DecodeExceptions reads every policies.kyverno.io PolicyException of data
// (multi-document YAML or JSON); other documents are skipped.
func DecodeExceptions(source string, data []byte) ([]*ExceptionDocument, error) {
	return decodeAll(source, data, IsException, DecodeException)
}

// decode checks m against the schema of its kind and version and returns
// its metadata and spec.
func (k *Kinds) decode(m map[string]any, apiVersion, kind *string) (meta, spec any, err error) {
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
	versions, known := k.versions[*kind]
	if group != k.group || !known {
		return nil, nil, engine.Errorf(engine.CodeUnsupported, "kind", fmt.Sprintf("%s %s is not a kind of %s this engine decodes", *apiVersion, *kind, k.group))
	}
	if !slices.Contains(versions, version) {
		return nil, nil, engine.Errorf(engine.CodeUnsupported, "apiVersion",
			fmt.Sprintf("%s is not a served version of %s (served: %s/%s)", *apiVersion, *kind, k.group, strings.Join(versions, ", "+k.group+"/")))
	}
	s := k.schemas()[*kind+"/"+version]
	if s == nil {
		return nil, nil, engine.Errorf(engine.CodeUnsupported, "apiVersion", fmt.Sprintf("no schema for %s %s", *apiVersion, *kind))
	}
	errs := kyverno.CheckSchema(m, s, "")
	if err := errs.Err(); err != nil {
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
