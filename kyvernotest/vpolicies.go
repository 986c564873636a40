package kyvernotest

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// This file holds what the test runner does for the policies.kyverno.io
// kinds: ValidatingPolicy and NamespacedValidatingPolicy documents, the
// test's policies.kyverno.io PolicyExceptions, its context file (a
// cli.kyverno.io Context: resources for resource.Get and resource.List,
// image data for image.GetMetadata), its apiCallResponses as http.Get and
// http.Post mocks, its globalContextEntries for globalContext.Get, and the
// Namespace objects of the values file for namespaceObject.

// validatingPolicyOf decodes and compiles a ValidatingPolicy or
// NamespacedValidatingPolicy document into p.
func validatingPolicyOf(p *Policy, o kyverno.Object) *Policy {
	return celPolicyOf(p, o, vpol.DecodePolicy, policy.CompileValidating, func(c *policy.Policy) (drops []bool) {
		for _, v := range c.Validating.Variants() {
			drops = append(drops, v.DropsUnmatched())
		}
		return drops
	})
}

// mutatingPolicyOf decodes and compiles a MutatingPolicy or
// NamespacedMutatingPolicy document into p.
func mutatingPolicyOf(p *Policy, o kyverno.Object) *Policy {
	return celPolicyOf(p, o, mpol.Policies.DecodePolicy, policy.CompileMutating, func(c *policy.Policy) (drops []bool) {
		for _, v := range c.Mutating.Variants() {
			drops = append(drops, v.DropsUnmatched())
		}
		return drops
	})
}

// celPolicyOf decodes (errors wrapped with the document's place) and
// compiles a policies.kyverno.io policy or a ValidatingAdmissionPolicy
// document into p. drops says, for each variant of the compiled policy
// (the policy, its autogen variants), whether Kyverno's CLI drops its
// empty response for a resource it does not match.
func celPolicyOf[D any](p *Policy, o kyverno.Object, decode func(map[string]any) (D, error), compile func(D) (*policy.Policy, error), drops func(*policy.Policy) []bool) *Policy {
	p.ruleless = true
	doc, err := decode(o.Value)
	if err != nil {
		p.Err = kyverno.NewDocumentError(p.Path, 1, o.Line, err)
		return p
	}
	compiled, err := compile(doc)
	if err != nil {
		p.Err = err
		return p
	}
	// Kyverno's CLI evaluates these kinds on every resource it is given,
	// whatever their evaluation.admission.enabled says.
	compiled.Admission = true
	p.Compiled = compiled
	// Kyverno's CLI keeps the empty response of a variant that does not
	// match a resource unless its constraints are a single plain resource
	// rule: then the resource counts as excluded rather than not found.
	for _, d := range drops(compiled) {
		if !d {
			p.responds = true
		}
	}
	return p
}

// celPrepare loads what the policies.kyverno.io kinds of a test need:
// its policies.kyverno.io PolicyExceptions, the Namespace objects of its
// values (into s), and the data of the CEL libraries.
func (r *runner) celPrepare(s *suiteRun, t *Test, values *ValuesSpec, globals map[string]any, full func(string) string) (*celData, error) {
	var err error
	paths := make([]string, len(t.Exceptions))
	for i, p := range t.Exceptions {
		paths[i] = full(p)
	}
	if s.celExceptions, err = r.load.celExceptions(paths); err != nil {
		return nil, err
	}
	if s.namespaces, err = namespaceObjects(values); err != nil {
		return nil, fmt.Errorf("load values: %w", err)
	}
	var c *CLIContext
	if t.Context != "" {
		if c, err = r.load.cliContext(full(t.Context)); err != nil {
			return nil, err
		}
	}
	if len(t.ClusterResources) > 0 {
		// Kyverno's CLI serves the clusterResources' objects from its
		// fake cluster, with the context file's.
		all := &CLIContext{}
		if c != nil {
			all.Spec.Resources = append(all.Spec.Resources, c.Spec.Resources...)
			all.Spec.Images = c.Spec.Images
		}
		for _, p := range t.ClusterResources {
			cr, err := r.load.clusterResources(full(p))
			if err != nil {
				return nil, err
			}
			all.Spec.Resources = append(all.Spec.Resources, cr.Spec.Resources...)
		}
		c = all
	}
	return newCELData(c, t.APICallResponses, globals)
}

// ClusterResource is a cli.kyverno.io ClusterResource file (a test's
// clusterResources): the objects of the CLI's fake cluster, and the paths
// of CRDs, whose schemas the ApplyConfigurations of MutatingPolicies merge
// custom resources with (crds.go).
type ClusterResource struct {
	APIVersion string         `json:"apiVersion,omitempty"`
	Kind       string         `json:"kind,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	Spec       struct {
		CRDs      []string         `json:"crds,omitempty"`
		Resources []map[string]any `json:"resources,omitempty"`
	} `json:"spec"`
}

// clusterResources loads a ClusterResource file, strictly.
func (l *loader) clusterResources(path string) (*ClusterResource, error) {
	return cachedFile(l, "clusterresources", "load cluster resources", path, func(path string, data []byte) (*ClusterResource, error) {
		var c ClusterResource
		if err := unmarshalStrict(data, &c); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if c.Kind != "" && c.Kind != "ClusterResource" {
			return nil, fmt.Errorf("%s: kind %q is not ClusterResource", path, c.Kind)
		}
		return &c, nil
	})
}

// applyCEL loads what the policies.kyverno.io kinds need for Apply: the
// policies.kyverno.io PolicyExceptions of the exception files, the
// Namespace objects of the values (into s) and the context file.
func applyCEL(l *loader, s *suiteRun, exceptionPaths []string, opts ApplyOptions, values *ValuesSpec) (*celData, error) {
	var err error
	if s.celExceptions, err = l.celExceptions(exceptionPaths); err != nil {
		return nil, err
	}
	if s.namespaces, err = namespaceObjects(values); err != nil {
		return nil, fmt.Errorf("load values: %w", err)
	}
	c, err := loadNamed(opts.ContextFile, l.cliContext)
	if err != nil {
		return nil, err
	}
	return newCELData(c, nil, nil)
}

// celExceptions loads the policies.kyverno.io PolicyExceptions of the
// test's exceptions files (the kyverno.io ones are loaded by exceptions).
func (l *loader) celExceptions(paths []string) ([]*vpol.Exception, error) {
	return loadExceptions(l, "celexception", paths, vpol.DecodeExceptions, func(d *vpol.ExceptionDocument) (*vpol.Exception, error) {
		// Kyverno's CLI applies exceptions whatever their expiresAt says.
		d.Spec.ExpiresAt = nil
		return vpol.CompileException(d)
	})
}

// CLIContext is a cli.kyverno.io/v1alpha1 Context file: the cluster
// objects and image data Kyverno's CEL libraries read in the CLI.
type CLIContext struct {
	APIVersion string         `json:"apiVersion,omitempty"`
	Kind       string         `json:"kind,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	Spec       struct {
		Resources []map[string]any `json:"resources,omitempty"`
		Images    []ImageData      `json:"images,omitempty"`
	} `json:"spec"`
}

// ImageData is an image of a Context file, as image.GetMetadata returns it.
type ImageData struct {
	Image         string `json:"image"`
	ResolvedImage string `json:"resolvedImage"`
	Registry      string `json:"registry"`
	Repository    string `json:"repository"`
	Tag           string `json:"tag,omitempty"`
	Digest        string `json:"digest,omitempty"`
	ImageIndex    any    `json:"imageIndex,omitempty"`
	Manifest      any    `json:"manifest,omitempty"`
	ConfigData    any    `json:"config,omitempty"`
}

// ParseCLIContext decodes a Context file strictly.
func ParseCLIContext(name string, data []byte) (*CLIContext, error) {
	return parseCLIFile(name, data, "Context", func(c *CLIContext) (string, string) { return c.APIVersion, c.Kind })
}

func (l *loader) cliContext(path string) (*CLIContext, error) {
	return cachedFile(l, "context", "load context", path, ParseCLIContext)
}

// celData is the data of Kyverno's CEL libraries in the CLI, as its fake
// context provider holds it: objects by group/version/resource, namespace
// and name; image data by image; HTTP mocks by "METHOD:url" and "url";
// global context entries by name.
type celData struct {
	objects map[string]map[string]map[string]map[string]any
	// targets are the test's targetResources by group/version/resource
	// (addTargets).
	targets map[string][]map[string]any
	images  map[string]map[string]any
	http    map[string]any
	globals map[string]any
}

// newCELData builds the data from a test's context file (nil without one),
// its apiCallResponses and its globalContextEntries, resolved by
// runner.globalMocks.
func newCELData(c *CLIContext, calls []APICallResponse, globals map[string]any) (*celData, error) {
	d := &celData{objects: map[string]map[string]map[string]map[string]any{}, images: map[string]map[string]any{}, globals: globals}
	if c != nil {
		for _, r := range c.Spec.Resources {
			apiVersion, _ := r["apiVersion"].(string)
			kind, _ := r["kind"].(string)
			gv, err := schema.ParseGroupVersion(apiVersion)
			if err != nil {
				return nil, fmt.Errorf("context resource %s %s: %w", apiVersion, kind, err)
			}
			gvr, _ := meta.UnsafeGuessKindToResource(gv.WithKind(kind))
			md, _ := r["metadata"].(map[string]any)
			ns, _ := md["namespace"].(string)
			name, _ := md["name"].(string)
			byNS := d.objects[gvr.String()]
			if byNS == nil {
				byNS = map[string]map[string]map[string]any{}
				d.objects[gvr.String()] = byNS
			}
			if byNS[ns] == nil {
				byNS[ns] = map[string]map[string]any{}
			}
			byNS[ns][name] = vpol.Normalize(r).(map[string]any)
		}
		for _, img := range c.Spec.Images {
			raw, err := json.Marshal(img)
			if err != nil {
				return nil, fmt.Errorf("context image %s: %w", img.Image, err)
			}
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				return nil, fmt.Errorf("context image %s: %w", img.Image, err)
			}
			d.images[img.Image] = m
		}
	}
	for _, call := range calls {
		key := call.key()
		status := call.Response.StatusCode
		if status == 0 {
			status = 200
		}
		if d.http == nil {
			d.http = map[string]any{}
		}
		d.http[key] = map[string]any{"body": call.Response.Body, "statusCode": int64(status)}
	}
	return d, nil
}

// sources are the engine's data sources for this data.
func (d *celData) sources() kyvernocel.Sources {
	return kyvernocel.Sources{Resources: d, HTTP: celHTTP{d}, ImageData: d, GlobalContext: d}
}

// GetResource implements kyvernocel.Resources.
func (d *celData) GetResource(_ context.Context, apiVersion, resource, namespace, name string) (map[string]any, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	gvr := gv.WithResource(resource)
	if obj, ok := d.objects[gvr.String()][namespace][name]; ok {
		return obj, nil
	}
	return nil, fmt.Errorf("%s %q: %w", gvr.GroupResource(), name, engine.ErrNotFound)
}

// ListResources implements kyvernocel.Resources as Kyverno's CLI does: the
// objects of the namespace, labels ignored; a resource the context has no
// object of is an error.
func (d *celData) ListResources(_ context.Context, apiVersion, resource, namespace string, _ map[string]string) (map[string]any, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	gvr := gv.WithResource(resource)
	byNS, ok := d.objects[gvr.String()]
	if !ok {
		return nil, fmt.Errorf("%s resource not found", gvr.GroupResource())
	}
	items := make([]any, 0, len(byNS[namespace]))
	for _, obj := range byNS[namespace] {
		items = append(items, obj)
	}
	return map[string]any{"items": items}, nil
}

// PostResource implements kyvernocel.Resources: the CLI creates nothing.
func (d *celData) PostResource(_ context.Context, apiVersion, resource, _ string, _ map[string]any) (map[string]any, error) {
	return nil, fmt.Errorf("resource.Post(%s, %s): the CLI has no cluster to create resources in", apiVersion, resource)
}

// ImageData implements kyvernocel.ImageData from the context's images.
func (d *celData) ImageData(_ context.Context, image string) (map[string]any, error) {
	if m, ok := d.images[image]; ok {
		return m, nil
	}
	return nil, fmt.Errorf("image data for %s not found in the context", image)
}

// GlobalReference implements kyvernocel.GlobalContext from the test's
// globalContextEntries: an unknown entry is null, a projection is a key of
// the entry's data.
func (d *celData) GlobalReference(_ context.Context, name, projection string) (any, error) {
	data, ok := d.globals[name]
	if !ok {
		return nil, nil
	}
	if projection == "" {
		return data, nil
	}
	m, ok := data.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("projection %q not found in global context entry %q: stored value is not an object", projection, name)
	}
	v, ok := m[projection]
	if !ok {
		return nil, fmt.Errorf("projection %q not found in global context entry %q", projection, name)
	}
	return v, nil
}

// celHTTP serves http.Get and http.Post from the test's apiCallResponses.
// The CLI makes no network calls: a URL without a mock is an error.
type celHTTP struct{ d *celData }

func (h celHTTP) Get(_ context.Context, url string, _ map[string]string) (any, error) {
	return h.mock("GET", url)
}

func (h celHTTP) Post(_ context.Context, url string, _ any, _ map[string]string) (any, error) {
	return h.mock("POST", url)
}

func (h celHTTP) Client(string) (kyvernocel.HTTP, error) { return h, nil }

func (h celHTTP) mock(method, url string) (any, error) {
	if v, ok := h.d.http[method+":"+url]; ok {
		return v, nil
	}
	if v, ok := h.d.http[url]; ok {
		return v, nil
	}
	return nil, fmt.Errorf("%s %s: no apiCallResponses mock, and the CLI makes no network calls", method, url)
}

// namespaceObjects are the Namespace objects of the values file by name,
// as Kyverno's CLI gives them to namespaceObject: the namespaces entries
// (which win), then Namespaces with the labels of namespaceSelector
// entries, each as Kubernetes converts a typed Namespace.
func namespaceObjects(spec *ValuesSpec) (map[string]map[string]any, error) {
	if spec == nil {
		return nil, nil
	}
	out := map[string]map[string]any{}
	for _, n := range spec.NamespaceSelectors {
		ns := corev1.Namespace{}
		ns.APIVersion, ns.Kind = "v1", "Namespace"
		ns.Name, ns.Labels = n.Name, n.Labels
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&ns)
		if err != nil {
			return nil, fmt.Errorf("namespace %s: %w", n.Name, err)
		}
		out[n.Name] = obj
	}
	for _, raw := range spec.Namespaces {
		b, err := json.Marshal(raw)
		if err != nil {
			return nil, err
		}
		var ns corev1.Namespace
		if err := json.Unmarshal(b, &ns); err != nil {
			return nil, fmt.Errorf("values namespaces: %w", err)
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&ns)
		if err != nil {
			return nil, fmt.Errorf("namespace %s: %w", ns.Name, err)
		}
		out[ns.Name] = obj
	}
	return out, nil
}

// admissionDocumentOf decodes a MutatingAdmissionPolicy or a binding into
// p; the policy is compiled with the bindings of its test
// (admissionPolicies).
func admissionDocumentOf(p *Policy, o kyverno.Object) *Policy {
	p.ruleless = true
	var err error
	if mpol.IsBinding(p.APIVersion, p.Kind) {
		p.mapBinding, err = mpol.DecodeBinding(o.Value)
	} else {
		p.admission, err = mpol.DecodeAdmissionPolicy(o.Value)
	}
	if err != nil {
		p.Err = kyverno.NewDocumentError(p.Path, 1, o.Line, err)
	}
	return p
}

// admissionPolicies compiles the MutatingAdmissionPolicies of pols with
// the bindings among them (Kyverno's CLI binds a policy with the bindings
// of the policy files of its test), on copies (the loader shares its
// policies between tests), and leaves the bindings out.
func admissionPolicies(pols []*Policy) []*Policy {
	var binds []*mpol.BindingDocument
	for _, p := range pols {
		if p.mapBinding != nil {
			binds = append(binds, p.mapBinding)
		}
	}
	out := make([]*Policy, 0, len(pols))
	for _, p := range pols {
		switch {
		case p.Kind == mpol.KindMutatingAdmissionPolicyBinding:
			if p.Err != nil {
				out = append(out, p) // reported as a policy that does not load
			}
		case p.admission != nil:
			cp := *p
			if compiled, err := policy.CompileMutatingAdmission(p.admission, binds); err != nil {
				cp.Err = err
			} else {
				cp.Compiled = compiled
			}
			out = append(out, &cp)
		default:
			out = append(out, p)
		}
	}
	return out
}

// addTargets adds a test's targetResources, as Kyverno's CLI registers
// them with its fake context: resource.Get and resource.List find them,
// and ListAllNamespaces lists them as the targets of MutatingPolicies.
func (d *celData) addTargets(ts []*Resource) {
	for _, t := range ts {
		gv, err := schema.ParseGroupVersion(t.APIVersion)
		if err != nil {
			continue // the loader checked it
		}
		gvr, _ := meta.UnsafeGuessKindToResource(gv.WithKind(t.Kind))
		obj := vpol.Normalize(t.Object).(map[string]any)
		byNS := d.objects[gvr.String()]
		if byNS == nil {
			byNS = map[string]map[string]map[string]any{}
			d.objects[gvr.String()] = byNS
		}
		md, _ := obj["metadata"].(map[string]any)
		ns, _ := md["namespace"].(string)
		if byNS[ns] == nil {
			byNS[ns] = map[string]map[string]any{}
		}
		byNS[ns][t.Name] = obj
		if d.targets == nil {
			d.targets = map[string][]map[string]any{}
		}
		d.targets[gvr.String()] = append(d.targets[gvr.String()], obj)
	}
}

// ListAllNamespaces implements eval.AllNamespacesLister as Kyverno's CLI
// finds the targets of a MutatingPolicy: the test's targetResources of
// the resource.
func (d *celData) ListAllNamespaces(_ context.Context, apiVersion, resource string) ([]map[string]any, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	return d.targets[gv.WithResource(resource).String()], nil
}

// dropsEmpty and keepsEmpty are the drops of celPolicyOf for a kind whose
// every empty response Kyverno's CLI drops, or keeps.
func dropsEmpty(*policy.Policy) []bool { return []bool{true} }
func keepsEmpty(*policy.Policy) []bool { return []bool{false} }
