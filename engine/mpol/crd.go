package mpol

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/schemaconv"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// Schemas are the structured-merge-diff types of custom resources that
// ApplyConfigurations merge with, made from CustomResourceDefinitions as
// Kyverno's CLI makes them from the CRD files of a test
// (kubectl-validate's local CRD client: each version's schema as a
// structural schema in Kubernetes' OpenAPI form, with apiVersion, kind and
// the built-in ObjectMeta added; then Kubernetes' type converter, unknown
// fields not preserved). A kind of a group and version no CRD defines
// keeps its built-in type (builtins.yaml). A nil *Schemas has no custom
// resource. It is safe for concurrent use.
type Schemas struct {
	ts *typeSet
}

// errNotV1CRD is the error of a CustomResourceDefinition that is not
// apiextensions.k8s.io/v1.
var errNotV1CRD = errors.New("only apiextensions.k8s.io/v1 CustomResourceDefinitions are read")

// NewSchemas makes the types of the versions of crds (decoded
// CustomResourceDefinition documents of apiextensions.k8s.io/v1) that
// have a schema. A CRD that does not decode, or whose schema Kubernetes
// cannot read as a structural schema (schema.NewStructural), is an error
// naming the CRD.
func NewSchemas(crds []map[string]any) (*Schemas, error) {
	b, err := builtins()
	if err != nil {
		return nil, err
	}
	models := map[string]*spec.Schema{}
	kinds := map[string]string{}
	gvs := map[string]bool{}
	for _, doc := range crds {
		md, _ := doc["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		if v, _ := doc["apiVersion"].(string); v != apiextensionsv1.SchemeGroupVersion.String() {
			return nil, fmt.Errorf("CustomResourceDefinition %q: apiVersion %q: %w", name, v, errNotV1CRD)
		}
		raw, err := json.Marshal(doc)
		if err != nil {
			return nil, fmt.Errorf("CustomResourceDefinition %q: %w", name, err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := json.Unmarshal(raw, &crd); err != nil {
			return nil, fmt.Errorf("CustomResourceDefinition %q: %w", name, err)
		}
		apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&crd)
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
			sch, err := crdModel(v.Schema.OpenAPIV3Schema)
			if err != nil {
				return nil, fmt.Errorf("CustomResourceDefinition %q version %s: %w", crd.Name, v.Name, err)
			}
			key := fmt.Sprintf("%s/%s.%s", gvk.Group, gvk.Version, gvk.Kind)
			models[key] = sch
			gv := gvk.GroupVersion().String()
			kinds[gv+"/"+gvk.Kind] = key
			gvs[gv] = true
		}
	}
	if len(models) == 0 {
		return nil, nil
	}
	s, err := schemaconv.ToSchemaFromOpenAPI(models, false)
	if err != nil {
		return nil, fmt.Errorf("failed to convert models to schema: %w", err)
	}
	// The custom types, then the built-in ones their metadata names.
	types := slices.Clone(s.Types)
	sort.Slice(types, func(i, j int) bool { return types[i].Name < types[j].Name })
	types = append(types, b.parser.Schema.Types...)
	return &Schemas{ts: &typeSet{parser: &typed.Parser{Schema: smdschema.Schema{Types: types}}, kinds: kinds, gvs: gvs}}, nil
}

// crdModel is the OpenAPI model of one version's schema as
// kubectl-validate's local CRD client builds it.
func crdModel(props *apiextensionsv1.JSONSchemaProps) (*spec.Schema, error) {
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, &internal, nil); err != nil {
		return nil, err
	}
	ss, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return nil, err
	}
	sch := ss.ToKubeOpenAPI()
	if sch.Properties == nil {
		sch.Properties = map[string]spec.Schema{}
	}
	sch.Properties["metadata"] = spec.Schema{SchemaProps: spec.SchemaProps{
		AllOf:   []spec.Schema{{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef("#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")}}},
		Default: map[string]any{},
	}}
	sch.Properties["apiVersion"] = spec.Schema{SchemaProps: spec.SchemaProps{Default: "", Type: spec.StringOrArray{"string"}}}
	sch.Properties["kind"] = spec.Schema{SchemaProps: spec.SchemaProps{Default: "", Type: spec.StringOrArray{"string"}}}
	return sch, nil
}

// TypeOf returns the type of obj's kind (vpol.ApplyTypes): a custom
// resource's when a CRD defines its group and version, else the built-in
// one.
func (s *Schemas) TypeOf(obj map[string]any) (*typed.ParseableType, error) {
	gvk := gvkOf(obj)
	if s != nil && s.ts.gvs[gvk.GroupVersion().String()] {
		return s.ts.typeOf(gvk)
	}
	return builtinType(obj)
}
