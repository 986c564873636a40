package eval_test

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/ivpol"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vap"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// vpolCase holds what a case about the policies.kyverno.io kinds adds to
// the request and to the data sources of the CEL libraries.
type vpolCase struct {
	// CELExceptions are policies.kyverno.io PolicyException documents
	// (YAML) in force.
	CELExceptions string `json:"celExceptions,omitempty"`
	// NamespaceObject is the request's Namespace, as the host has it.
	NamespaceObject map[string]any `json:"namespaceObject,omitempty"`
	// ResourcePlural is the request's resource ("pods"); default: guessed
	// from the kind.
	ResourcePlural string `json:"resourcePlural,omitempty"`
	// ResourceGroup and ResourceVersion are the group and version of
	// ResourcePlural (AdmissionRequest.resource); default: the kind's.
	ResourceGroup   string `json:"resourceGroup,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// Subresource is the request's subresource ("scale").
	Subresource string `json:"subresource,omitempty"`
	// CELResources serve resource.Get and resource.List (by the resource
	// guessed from their kind, namespace and name).
	CELResources []map[string]any `json:"celResources,omitempty"`
	// Images serve image.GetMetadata, by image.
	Images map[string]map[string]any `json:"images,omitempty"`
	// HTTP serves http.Get and http.Post, by URL.
	HTTP map[string]any `json:"http,omitempty"`
	// GlobalContext serves globalContext.Get, by entry name.
	GlobalContext map[string]any `json:"globalContext,omitempty"`
	// NoCELData gives the engine no data source at all.
	NoCELData bool `json:"noCELData,omitempty"`
}

// casePolicies decodes and compiles the case's policies of both
// generations, in order.
func casePolicies(tc testCase) ([]*policy.Policy, error) {
	objs, err := kyverno.SplitDocuments(tc.Note, []byte(tc.Policy))
	if err != nil {
		return nil, err
	}
	// The MutatingAdmissionPolicies are compiled with the bindings of
	// the case.
	_, bindings, err := mpol.DecodeAdmission(tc.Note, []byte(tc.Policy))
	if err != nil {
		return nil, err
	}
	compileAdmission := func(d *mpol.AdmissionPolicyDocument) (*policy.Policy, error) {
		return policy.CompileMutatingAdmission(d, bindings)
	}
	var out []*policy.Policy
	for i, o := range objs {
		apiVersion, _ := o.Value["apiVersion"].(string)
		kind, _ := o.Value["kind"].(string)
		var p *policy.Policy
		switch {
		case vpol.IsPolicy(apiVersion, kind):
			p, err = celPolicy(o.Value, vpol.DecodePolicy, policy.CompileValidating)
		case mpol.IsPolicy(apiVersion, kind):
			p, err = celPolicy(o.Value, mpol.DecodePolicy, policy.CompileMutating)
		case mpol.IsAdmissionPolicy(apiVersion, kind):
			p, err = celPolicy(o.Value, mpol.DecodeAdmissionPolicy, compileAdmission)
		case mpol.IsBinding(apiVersion, kind):
			continue
		case ivpol.IsPolicy(apiVersion, kind):
			p, err = celPolicy(o.Value, ivpol.DecodePolicy, policy.CompileImageValidating)
		}
		if err != nil {
			return nil, kyverno.NewDocumentError(tc.Note, i+1, o.Line, err)
		}
		if p != nil {
			out = append(out, p)
			continue
		}
		if vap.IsPolicy(apiVersion, kind) || vap.IsBinding(apiVersion, kind) {
			p, err := caseVAP(tc, o) // vap_cases_test.go
			if err != nil {
				return nil, kyverno.NewDocumentError(tc.Note, i+1, o.Line, err)
			}
			if p != nil {
				out = append(out, p)
			}
			continue
		}
		raw, err := json.Marshal(o.Value)
		if err != nil {
			return nil, err
		}
		docs, err := kyverno.DecodePolicies(tc.Note, raw)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			p, err := policy.Compile(d)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// celPolicy decodes and compiles a policies.kyverno.io policy.
func celPolicy[D any](m map[string]any, decode func(map[string]any) (D, error), compile func(D) (*policy.Policy, error)) (*policy.Policy, error) {
	doc, err := decode(m)
	if err != nil {
		return nil, err
	}
	return compile(doc)
}

// request adds the case's request fields and exceptions to req.
func (c vpolCase) request(note string, req *eval.Request) error {
	req.NamespaceObject = c.NamespaceObject
	req.Resource = c.ResourcePlural
	req.ResourceGroup, req.ResourceVersion = c.ResourceGroup, c.ResourceVersion
	req.Subresource = c.Subresource
	if c.CELExceptions == "" {
		return nil
	}
	docs, err := vpol.DecodeExceptions(note, []byte(c.CELExceptions))
	if err != nil {
		return err
	}
	for _, d := range docs {
		ex, err := vpol.CompileException(d)
		if err != nil {
			return err
		}
		req.CELExceptions = append(req.CELExceptions, ex)
	}
	return nil
}

func (c vpolCase) sources() kyvernocel.Sources {
	if c.NoCELData {
		return kyvernocel.Sources{}
	}
	return kyvernocel.Sources{Resources: caseResources(c.CELResources), HTTP: caseHTTP(c.HTTP), ImageData: caseImages(c.Images), GlobalContext: caseGlobals(c.GlobalContext)}
}

type caseResources []map[string]any

func (r caseResources) find(apiVersion, resource, namespace string, each func(map[string]any) bool) {
	for _, o := range r {
		av, _ := o["apiVersion"].(string)
		kind, _ := o["kind"].(string)
		gv, _ := schema.ParseGroupVersion(av)
		gvr, _ := meta.UnsafeGuessKindToResource(gv.WithKind(kind))
		md, _ := o["metadata"].(map[string]any)
		ns, _ := md["namespace"].(string)
		if av == apiVersion && gvr.Resource == resource && ns == namespace && !each(o) {
			return
		}
	}
}

func (r caseResources) GetResource(_ context.Context, apiVersion, resource, namespace, name string) (map[string]any, error) {
	var out map[string]any
	r.find(apiVersion, resource, namespace, func(o map[string]any) bool {
		if md, _ := o["metadata"].(map[string]any); md["name"] == name {
			out = o
			return false
		}
		return true
	})
	if out == nil {
		return nil, fmt.Errorf("%s %s/%s: %w", resource, namespace, name, kyvernocel.ErrNotFound)
	}
	return out, nil
}

func (r caseResources) ListResources(_ context.Context, apiVersion, resource, namespace string, _ map[string]string) (map[string]any, error) {
	items := []any{}
	r.find(apiVersion, resource, namespace, func(o map[string]any) bool {
		items = append(items, o)
		return true
	})
	return map[string]any{"items": items}, nil
}

func (r caseResources) PostResource(_ context.Context, _, _, _ string, data map[string]any) (map[string]any, error) {
	return data, nil
}

type caseHTTP map[string]any

func (h caseHTTP) Get(_ context.Context, url string, _ map[string]string) (any, error) {
	if v, ok := h[url]; ok {
		return v, nil
	}
	return nil, fmt.Errorf("GET %s: %w", url, kyvernocel.ErrNotFound)
}

func (h caseHTTP) Post(_ context.Context, url string, _ any, _ map[string]string) (any, error) {
	if v, ok := h[url]; ok {
		return v, nil
	}
	return nil, fmt.Errorf("POST %s: %w", url, kyvernocel.ErrNotFound)
}

func (h caseHTTP) Client(string) (kyvernocel.HTTP, error) { return h, nil }

type caseImages map[string]map[string]any

func (c caseImages) ImageData(_ context.Context, image string) (map[string]any, error) {
	if m, ok := c[image]; ok {
		return m, nil
	}
	return nil, fmt.Errorf("image data for %s not found in the context", image)
}

type caseGlobals map[string]any

func (c caseGlobals) GlobalReference(_ context.Context, name, projection string) (any, error) {
	v := c[name]
	if projection != "" {
		m, _ := v.(map[string]any)
		return m[projection], nil
	}
	return v, nil
}
