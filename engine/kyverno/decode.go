package kyverno

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/verdict-policy/verdict/engine"
)

// The versions and kinds DecodePolicies decodes.
const (
	GroupVersionV1      = "kyverno.io/v1"
	GroupVersionV2beta1 = "kyverno.io/v2beta1"
	KindClusterPolicy   = "ClusterPolicy"
	KindPolicy          = "Policy"
)

// DecodePolicies reads every YAML or JSON document in data (multi-document
// YAML separated by "---" lines, comments, a JSON object, a v1 List) and
// returns the ClusterPolicies and Policies of kyverno.io/v1 and
// kyverno.io/v2beta1, in order. source names the input in errors (a file
// path).
//
// Other documents are handled as Kyverno's CLI handles them: a document that
// is not a Kubernetes object (not a mapping, no apiVersion and no kind), or
// whose group/version neither Kubernetes 1.32 nor Kyverno defines (a custom
// resource, a kustomization), is skipped; so are the items of a List that
// are not policies. Any other kind is an error with Code
// engine.CodeUnsupported: Kyverno rejects Kubernetes kinds that are not
// policies, and this engine evaluates no other Kyverno policy type.
//
// Decoding is strict, against the CRD schema of the document's version: an
// unknown field, a repeated key or a value of the wrong type is an error with
// Code engine.CodeDecode and the field path ("spec.rules[2].validate.patern");
// so is a document whose maps and lists nest deeper than MaxDocumentDepth.
// As in Kyverno, unknown fields inside a nested foreach are ignored. Every
// problem of a document is reported, wrapped with the source, the document's
// index (1-based, empty documents not counted) and its first line.
func DecodePolicies(source string, data []byte) ([]*Document, error) {
	chunks, err := splitChunks(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	var out []*Document
	var errs []error
	fast := &fastYAML{}
	for i, c := range chunks {
		vs, err := parseChunk(c, true, fast)
		if err != nil {
			errs = append(errs, docError(source, i+1, c.line, err))
			continue
		}
		if err := checkDocumentDepth(vs[0].v, MaxDocumentDepth); err != nil {
			errs = append(errs, docError(source, i+1, c.line, err))
			continue
		}
		docs, err := decodeObject(vs[0].v, "", false)
		if err != nil {
			errs = append(errs, docError(source, i+1, c.line, err))
			continue
		}
		out = append(out, docs...)
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	return out, nil
}

// DecodePolicyValue decodes one document that was already read into JSON
// values (map[string]any, []any, string, float64, bool and nil, as Decoder
// returns them) as DecodePolicies decodes the same document written as one
// line of JSON: the same checks, the same errors (document 1, line 1 of
// source), without writing and reading the document again. The Documents
// hold a copy of v's maps and lists, never v's own.
func DecodePolicyValue(source string, v any) ([]*Document, error) {
	if err := checkDocumentDepth(v, MaxDocumentDepth); err != nil {
		return nil, docError(source, 1, 1, err)
	}
	docs, err := decodeObject(copyJSON(v), "", false)
	if err != nil {
		return nil, docError(source, 1, 1, err)
	}
	return docs, nil
}

// copyJSON copies a JSON value as writing it as JSON and reading it back
// would: maps and lists are new, and -0 becomes 0 (json.Marshal writes
// "-0", which YAML reads as the integer 0).
func copyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyJSON(e)
		}
		return out
	case float64:
		if x == 0 {
			return float64(0)
		}
	}
	return v
}

// decodeObject decodes one document (or List item) whose path is prefix.
func decodeObject(v any, prefix string, item bool) ([]*Document, error) {
	m, ok := v.(map[string]any)
	if !ok || (m["apiVersion"] == nil && m["kind"] == nil) {
		return nil, nil
	}
	apiVersion, ok1 := m["apiVersion"].(string)
	kind, ok2 := m["kind"].(string)
	if !ok1 || !ok2 {
		var errs engine.Errors
		if !ok1 {
			errs = append(errs, typeError(prefix+"apiVersion", "string", m["apiVersion"]))
		}
		if !ok2 {
			errs = append(errs, typeError(prefix+"kind", "string", m["kind"]))
		}
		return nil, errs.Err()
	}
	if kind == "List" && apiVersion == "v1" {
		items, ok := m["items"].([]any)
		if !ok && m["items"] != nil {
			return nil, typeError(prefix+"items", "array", m["items"])
		}
		var out []*Document
		var errs engine.Errors
		for i, it := range items {
			docs, err := decodeObject(it, prefix+"items["+strconv.Itoa(i)+"].", true)
			errs = append(errs, engine.As(err)...)
			out = append(out, docs...)
		}
		if err := errs.Err(); err != nil {
			return nil, err
		}
		return out, nil
	}
	schema := policySchemas()[strings.TrimPrefix(apiVersion, "kyverno.io/")]
	if !strings.HasPrefix(apiVersion, "kyverno.io/") || schema == nil || (kind != KindClusterPolicy && kind != KindPolicy) {
		if item || !knownGroupVersions[apiVersion] {
			return nil, nil
		}
		return nil, engine.Errorf(engine.CodeUnsupported, prefix+"kind",
			fmt.Sprintf("%s %s is not a ClusterPolicy or Policy of %s or %s", apiVersion, kind, GroupVersionV1, GroupVersionV2beta1))
	}
	var errs, typeErrs engine.Errors
	checkSchema(m, schema, prefix, &errs)
	doc := new(Document)
	decodeInto(m, reflect.ValueOf(doc).Elem(), prefix, &typeErrs)
	// Where the schema and the Go types agree, both report the same
	// problem; keep the schema's. The types alone check the parts the
	// schema leaves free (a nested foreach).
	seen := make(map[string]bool, len(errs))
	for _, e := range errs {
		seen[e.Path] = true
	}
	for _, e := range typeErrs {
		if !seen[e.Path] {
			errs = append(errs, e)
		}
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return []*Document{doc}, nil
}

// knownGroupVersions are the group/versions Kyverno's CLI has schemas for:
// those of Kubernetes 1.32 and of Kyverno's CRDs.
var knownGroupVersions = setOf(
	"v1", "admissionregistration.k8s.io/v1", "admissionregistration.k8s.io/v1alpha1",
	"admissionregistration.k8s.io/v1beta1", "apiextensions.k8s.io/v1", "apiregistration.k8s.io/v1",
	"apps/v1", "authentication.k8s.io/v1", "authentication.k8s.io/v1beta1", "authorization.k8s.io/v1",
	"autoscaling/v1", "autoscaling/v2", "batch/v1", "certificates.k8s.io/v1",
	"certificates.k8s.io/v1alpha1", "coordination.k8s.io/v1", "coordination.k8s.io/v1alpha2",
	"discovery.k8s.io/v1", "events.k8s.io/v1", "flowcontrol.apiserver.k8s.io/v1",
	"internal.apiserver.k8s.io/v1alpha1", "networking.k8s.io/v1", "networking.k8s.io/v1beta1",
	"node.k8s.io/v1", "policy/v1", "rbac.authorization.k8s.io/v1", "resource.k8s.io/v1alpha3",
	"resource.k8s.io/v1beta1", "scheduling.k8s.io/v1", "storage.k8s.io/v1", "storage.k8s.io/v1alpha1",
	"storage.k8s.io/v1beta1", "storagemigration.k8s.io/v1alpha1", "cli.kyverno.io/v1alpha1",
	"kyverno.io/v1", "kyverno.io/v2", "kyverno.io/v2beta1", "policies.kyverno.io/v1",
	"policies.kyverno.io/v1alpha1", "policies.kyverno.io/v1beta1",
)

func setOf(items ...string) map[string]bool {
	m := make(map[string]bool, len(items))
	for _, it := range items {
		m[it] = true
	}
	return m
}

//go:embed schema.json
var schemaJSON []byte

// schemaNode is the part of an OpenAPI v3 schema strict decoding checks.
// schema.json is made by gen_schema.go from the CRDs.
type schemaNode struct {
	Type                 string                 `json:"type"`
	Format               string                 `json:"format"`
	Preserve             bool                   `json:"preserve"`
	Properties           map[string]*schemaNode `json:"properties"`
	Items                *schemaNode            `json:"items"`
	AdditionalProperties *schemaNode            `json:"additionalProperties"`
}

// policySchemas returns the ClusterPolicy / Policy schema by version.
var policySchemas = sync.OnceValue(func() map[string]*schemaNode {
	var out map[string]*schemaNode
	if err := json.Unmarshal(schemaJSON, &out); err != nil {
		panic("kyverno: schema.json: " + err.Error()) // the embedded file is broken: a build error
	}
	return out
})

// checkSchema reports every value of v that is unknown to schema s or has
// the wrong type. null is accepted everywhere, as Kubernetes drops it.
func checkSchema(v any, s *schemaNode, path string, errs *engine.Errors) {
	if v == nil {
		return
	}
	switch s.Type {
	case "":
		return
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			*errs = append(*errs, typeError(path, "object", v))
			return
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			e := m[k]
			switch {
			case s.Properties[k] != nil:
				checkSchema(e, s.Properties[k], joinPath(path, k), errs)
			case s.AdditionalProperties != nil:
				checkSchema(e, s.AdditionalProperties, joinPath(path, k), errs)
			case s.Preserve:
			default:
				*errs = append(*errs, engine.Errorf(engine.CodeDecode, joinPath(path, k), "unknown field"))
			}
		}
	case "array":
		l, ok := v.([]any)
		if !ok {
			*errs = append(*errs, typeError(path, "array", v))
			return
		}
		if s.Items != nil {
			for i, e := range l {
				checkSchema(e, s.Items, indexPath(path, i), errs)
			}
		}
	case "string":
		if _, ok := v.(string); !ok {
			*errs = append(*errs, typeError(path, "string", v))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			*errs = append(*errs, typeError(path, "boolean", v))
		}
	case "number":
		if _, ok := toFloat(v); !ok {
			*errs = append(*errs, typeError(path, "number", v))
		}
	case "integer":
		f, ok := toFloat(v)
		if !ok || f != math.Trunc(f) {
			*errs = append(*errs, typeError(path, "integer", v))
			return
		}
		if s.Format == "int32" && (f < math.MinInt32 || f > math.MaxInt32) {
			*errs = append(*errs, engine.Errorf(engine.CodeDecode, path, "value out of int32 range"))
		}
	}
}

// decodeInto sets rv from the JSON value v. Keys without a field are
// ignored (checkSchema reports them where the schema does not allow them);
// values of the wrong type are reported.
func decodeInto(v any, rv reflect.Value, path string, errs *engine.Errors) {
	if v == nil {
		return
	}
	switch rv.Kind() {
	case reflect.Interface:
		rv.Set(reflect.ValueOf(v))
	case reflect.Pointer:
		p := reflect.New(rv.Type().Elem())
		decodeInto(v, p.Elem(), path, errs)
		rv.Set(p)
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			*errs = append(*errs, typeError(path, "object", v))
			return
		}
		decodeFields(m, rv, path, errs)
	case reflect.Slice:
		l, ok := v.([]any)
		if !ok {
			*errs = append(*errs, typeError(path, "array", v))
			return
		}
		s := reflect.MakeSlice(rv.Type(), len(l), len(l))
		for i, e := range l {
			decodeInto(e, s.Index(i), indexPath(path, i), errs)
		}
		rv.Set(s)
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			*errs = append(*errs, typeError(path, "object", v))
			return
		}
		out := reflect.MakeMapWithSize(rv.Type(), len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			e := reflect.New(rv.Type().Elem()).Elem()
			decodeInto(m[k], e, joinPath(path, k), errs)
			out.SetMapIndex(reflect.ValueOf(k), e)
		}
		rv.Set(out)
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			*errs = append(*errs, typeError(path, "string", v))
			return
		}
		rv.SetString(s)
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			*errs = append(*errs, typeError(path, "boolean", v))
			return
		}
		rv.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f, ok := toFloat(v)
		if !ok || f != math.Trunc(f) {
			*errs = append(*errs, typeError(path, "integer", v))
			return
		}
		if rv.OverflowInt(int64(f)) || f < math.MinInt64 || f >= math.MaxInt64 {
			*errs = append(*errs, engine.Errorf(engine.CodeDecode, path, "value out of range"))
			return
		}
		rv.SetInt(int64(f))
	default:
		*errs = append(*errs, engine.Errorf(engine.CodeDecode, path, fmt.Sprintf("cannot decode into %s", rv.Type())))
	}
}

// decodeFields sets the fields of struct rv from m, by their JSON names;
// embedded structs without a name take their fields from m too.
func decodeFields(m map[string]any, rv reflect.Value, path string, errs *engine.Errors) {
	t := rv.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			decodeFields(m, rv.Field(i), path, errs)
			continue
		}
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		if e, ok := m[name]; ok {
			decodeInto(e, rv.Field(i), joinPath(path, name), errs)
		}
	}
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func typeError(path, want string, got any) *engine.Error {
	return engine.Errorf(engine.CodeDecode, path, "expected "+want+", got "+jsonType(got))
}

// joinPath appends a field or map key to a path: ".name" for plain names,
// `["a/b"]` for keys with other characters.
func joinPath(path, key string) string {
	if !plainKey(key) {
		return strings.TrimSuffix(path, ".") + "[" + strconv.Quote(key) + "]"
	}
	if path == "" || strings.HasSuffix(path, ".") {
		return path + key
	}
	return path + "." + key
}

func indexPath(path string, i int) string {
	return strings.TrimSuffix(path, ".") + "[" + strconv.Itoa(i) + "]"
}

func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '$') {
			return false
		}
	}
	return true
}
