package cases

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/dpol"
	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/gpol"
	"github.com/verdict-policy/verdict/engine/ivpol"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vap"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// Now is the clock of the cases: time functions and the times of
// generated objects read it.
var Now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Documents splits the case's policy documents, in order, as JSON.
func (c *Case) Documents() ([][]byte, error) {
	objs, err := kyverno.SplitDocuments(c.Note, []byte(c.Policy))
	if err != nil {
		return nil, err
	}
	out := make([][]byte, 0, len(objs))
	for _, o := range objs {
		raw, err := json.Marshal(o.Value)
		if err != nil {
			return nil, err
		}
		out = append(out, raw)
	}
	return out, nil
}

// CELKinds reports whether one of the case's policies is of the CEL
// kinds: the policies.kyverno.io ValidatingPolicies, MutatingPolicies,
// ImageValidatingPolicies, GeneratingPolicies and DeletingPolicies, or
// Kubernetes' ValidatingAdmissionPolicies and MutatingAdmissionPolicies
// and their bindings (which a runner gives a decision server as its own
// policies rather than inline).
func (c *Case) CELKinds() (bool, error) {
	objs, err := kyverno.SplitDocuments(c.Note, []byte(c.Policy))
	if err != nil {
		return false, err
	}
	for _, o := range objs {
		apiVersion, _ := o.Value["apiVersion"].(string)
		kind, _ := o.Value["kind"].(string)
		if vpol.IsPolicy(apiVersion, kind) || mpol.Policies.IsPolicy(apiVersion, kind) || mpol.IsAdmissionPolicy(apiVersion, kind) ||
			mpol.IsBinding(apiVersion, kind) || vap.IsPolicy(apiVersion, kind) || vap.IsBinding(apiVersion, kind) ||
			ivpol.Policies.IsPolicy(apiVersion, kind) || gpol.Policies.IsPolicy(apiVersion, kind) || dpol.Policies.IsPolicy(apiVersion, kind) {
			return true, nil
		}
	}
	return false, nil
}

// Policies decodes and compiles the case's policies of both generations,
// in order: the kyverno.io kinds, ValidatingPolicies, MutatingPolicies,
// ImageValidatingPolicies, GeneratingPolicies, DeletingPolicies,
// MutatingAdmissionPolicies (with the case's bindings) and
// ValidatingAdmissionPolicies (evaluated at admission only in a case run
// as Kyverno's CLI; their bindings are in EvalRequest).
func (c *Case) Policies() ([]*policy.Policy, error) {
	objs, err := kyverno.SplitDocuments(c.Note, []byte(c.Policy))
	if err != nil {
		return nil, err
	}
	_, bindings, err := mpol.DecodeAdmission(c.Note, []byte(c.Policy))
	if err != nil {
		return nil, err
	}
	compileAdmission := func(d *mpol.AdmissionPolicyDocument) (*policy.Policy, error) {
		return policy.CompileMutatingAdmission(d, bindings)
	}
	compileVAP := func(d *vap.Document) (*policy.Policy, error) {
		p, err := policy.CompileVAP(d)
		if err != nil {
			return nil, err
		}
		p.Admission = c.KyvernoCLI
		return p, nil
	}
	var out []*policy.Policy
	for i, o := range objs {
		apiVersion, _ := o.Value["apiVersion"].(string)
		kind, _ := o.Value["kind"].(string)
		var p *policy.Policy
		switch {
		case vpol.IsPolicy(apiVersion, kind):
			p, err = celPolicy(o.Value, vpol.DecodePolicy, policy.CompileValidating)
		case mpol.Policies.IsPolicy(apiVersion, kind):
			p, err = celPolicy(o.Value, mpol.Policies.DecodePolicy, policy.CompileMutating)
		case mpol.IsAdmissionPolicy(apiVersion, kind):
			p, err = celPolicy(o.Value, mpol.DecodeAdmissionPolicy, compileAdmission)
		case ivpol.Policies.IsPolicy(apiVersion, kind):
			p, err = celPolicy(o.Value, ivpol.Policies.DecodePolicy, policy.CompileImageValidating)
		case gpol.Policies.IsPolicy(apiVersion, kind):
			p, err = celPolicy(o.Value, gpol.Policies.DecodePolicy, policy.CompileGenerating)
		case dpol.Policies.IsPolicy(apiVersion, kind):
			p, err = celPolicy(o.Value, dpol.Policies.DecodePolicy, policy.CompileDeleting)
		case vap.IsPolicy(apiVersion, kind):
			p, err = celPolicy(o.Value, vap.DecodePolicy, compileVAP)
		case mpol.IsBinding(apiVersion, kind), vap.IsBinding(apiVersion, kind):
			continue
		}
		if err != nil {
			return nil, kyverno.NewDocumentError(c.Note, i+1, o.Line, err)
		}
		if p != nil {
			out = append(out, p)
			continue
		}
		raw, err := json.Marshal(o.Value)
		if err != nil {
			return nil, err
		}
		ps, err := decodeCompile(c.Note, string(raw), kyverno.DecodePolicies, policy.Compile)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

// celPolicy decodes and compiles a policy of the CEL kinds.
func celPolicy[D any](m map[string]any, decode func(map[string]any) (D, error), compile func(D) (*policy.Policy, error)) (*policy.Policy, error) {
	doc, err := decode(m)
	if err != nil {
		return nil, err
	}
	return compile(doc)
}

// Bindings compiles the case's ValidatingAdmissionPolicyBindings, in
// order.
func (c *Case) Bindings() ([]*vap.Binding, error) {
	return decodeCompile(c.Note, c.Policy, vap.DecodeBindings, vap.CompileBinding)
}

// decodeCompile decodes the documents of text with decode and compiles
// each, in order; note names text in errors.
func decodeCompile[D, T any](note, text string, decode func(string, []byte) ([]D, error), compile func(D) (T, error)) ([]T, error) {
	docs, err := decode(note, []byte(text))
	if err != nil {
		return nil, err
	}
	var out []T
	for _, d := range docs {
		t, err := compile(d)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// EvalRequest is the case's request for the engine: the object, the request
// fields, and the PolicyExceptions of both groups compiled.
func (c *Case) EvalRequest() (*eval.Request, error) {
	req := &eval.Request{
		Object: c.Resource, NamespaceObject: c.NamespaceObject,
		Resource: c.ResourcePlural, ResourceGroup: c.ResourceGroup, ResourceVersion: c.ResourceVersion, Subresource: c.Subresource,
	}
	var err error
	if req.VAPBindings, err = c.Bindings(); err != nil {
		return nil, err
	}
	if c.Exceptions != "" {
		if req.Exceptions, err = decodeCompile(c.Note, c.Exceptions, kyverno.DecodeExceptions, policy.CompileException); err != nil {
			return nil, err
		}
	}
	if c.CELExceptions != "" {
		if req.CELExceptions, err = decodeCompile(c.Note, c.CELExceptions, vpol.DecodeExceptions, vpol.CompileException); err != nil {
			return nil, err
		}
	}
	r := c.Request
	if r == nil {
		return req, nil
	}
	req.Operation = r.Operation
	req.OldObject = r.OldObject
	req.NamespaceLabels = r.NamespaceLabels
	req.UserInfo = r.UserInfo
	req.Roles = r.Roles
	req.ClusterRoles = r.ClusterRoles
	req.Variables = r.Variables
	for k, v := range r.RuleVariables {
		pol, rule, _ := strings.Cut(k, "/")
		if req.RuleVariables == nil {
			req.RuleVariables = map[eval.RuleKey]map[string]any{}
		}
		req.RuleVariables[eval.RuleKey{Policy: pol, Rule: rule}] = v
	}
	if r.Background {
		req.Mode = eval.Background
	}
	req.GenerateExisting = r.GenerateExisting
	req.MutateExisting = r.MutateExisting
	return req, nil
}

// Lookup serves the case's cluster data: its ConfigMaps, params, cluster
// objects and NamespaceObject (for a host that reads the request's
// Namespace itself). There is no cluster otherwise, as in Kyverno's CLI:
// other namespaces are undefined and other lookups fail. In a case run as
// Kyverno's CLI, the params of a ValidatingAdmissionPolicyBinding are
// found as the CLI finds them.
func (c *Case) Lookup() eval.Lookup {
	return mapLookup{configMaps: c.ConfigMaps, params: c.Params, cluster: c.Cluster, namespace: c.NamespaceObject, cli: c.KyvernoCLI}
}

// NamespaceLabels are the labels of the request's namespace: the
// request's, else those of the NamespaceObject.
func (c *Case) NamespaceLabels() map[string]string {
	if c.Request != nil && c.Request.NamespaceLabels != nil {
		return c.Request.NamespaceLabels
	}
	if c.NamespaceObject == nil {
		return nil
	}
	md, _ := c.NamespaceObject["metadata"].(map[string]any)
	return labelsOf(md)
}

// Sources are the data sources of the CEL libraries of the case (none
// with NoCELData).
func (c *Case) Sources() kyvernocel.Sources {
	if c.NoCELData {
		return kyvernocel.Sources{}
	}
	return kyvernocel.Sources{Resources: celResources(c.CELResources), HTTP: celHTTP(c.HTTP), ImageData: celImages(c.Images), GlobalContext: celGlobals(c.GlobalContext)}
}

type mapLookup struct {
	eval.Lookup
	configMaps map[string]map[string]any
	params     []map[string]any
	cluster    []map[string]any
	namespace  map[string]any
	cli        bool
}

func (m mapLookup) ConfigMap(_ context.Context, namespace, name string) (map[string]any, error) {
	if cm, ok := m.configMaps[namespace+"/"+name]; ok {
		return cm, nil
	}
	return nil, engine.ErrNotFound
}

func (m mapLookup) Namespace(_ context.Context, name string) (map[string]any, error) {
	if md, _ := m.namespace["metadata"].(map[string]any); md != nil && md["name"] == name {
		return m.namespace, nil
	}
	return nil, eval.ErrUndefined
}

// Params serves the case's params: by kind, namespace (paramRef's or the
// request's) and name or selector.
func (m mapLookup) Params(_ context.Context, q eval.ParamQuery) ([]map[string]any, error) {
	if m.cli && q.Binding != "" {
		return m.cliBindingParams(q), nil
	}
	ns := q.Namespace
	if ns == "" {
		ns = q.RequestNamespace
	}
	var out []map[string]any
	for _, p := range m.params {
		md, _ := p["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		pns, _ := md["namespace"].(string)
		if p["apiVersion"] != q.APIVersion || p["kind"] != q.Kind || pns != ns {
			continue
		}
		if q.Name != "" {
			if name == q.Name {
				return []map[string]any{p}, nil
			}
			continue
		}
		if q.Selector != nil && q.Selector.Matches(labelsOf(md)) {
			out = append(out, p)
		}
	}
	if q.Name != "" {
		return nil, fmt.Errorf("%ss %q not found", strings.ToLower(q.Kind), q.Name)
	}
	return out, nil
}

// cliBindingParams are the params of a binding as Kyverno's CLI finds them
// among the params resources (matchesSelector in pkg/admissionpolicy):
// whatever their kind, by selector, else by name (namespace ignored then),
// else by namespace.
func (m mapLookup) cliBindingParams(q eval.ParamQuery) []map[string]any {
	var out []map[string]any
	for _, p := range m.params {
		md, _ := p["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		ns, _ := md["namespace"].(string)
		var ok bool
		switch {
		case q.Selector != nil:
			ok = q.Selector.Matches(labelsOf(md))
		case q.Name != "":
			ok = name == q.Name
		case q.Namespace != "":
			ok = ns == q.Namespace
		}
		if ok {
			out = append(out, p)
		}
	}
	return out
}

func (m mapLookup) Resource(_ context.Context, apiVersion, kind, namespace, name string) (map[string]any, error) {
	for _, o := range m.cluster {
		md, _ := o["metadata"].(map[string]any)
		ns, _ := md["namespace"].(string)
		if o["apiVersion"] == apiVersion && o["kind"] == kind && md["name"] == name && ns == namespace {
			return o, nil
		}
	}
	return nil, engine.ErrNotFound
}

func (m mapLookup) Resources(_ context.Context, apiVersion, kind, namespace string, selector labels.Selector) ([]map[string]any, error) {
	var out []map[string]any
	for _, o := range m.cluster {
		md, _ := o["metadata"].(map[string]any)
		if apiVersion != "" && o["apiVersion"] != apiVersion || o["kind"] != kind || namespace != "" && md["namespace"] != namespace {
			continue
		}
		if selector.Matches(labelsOf(md)) {
			out = append(out, o)
		}
	}
	return out, nil
}

func labelsOf(md map[string]any) labels.Set {
	ls := labels.Set{}
	if l, ok := md["labels"].(map[string]any); ok {
		for k, v := range l {
			ls[k], _ = v.(string)
		}
	}
	return ls
}

type celResources []map[string]any

func (r celResources) find(apiVersion, resource, namespace string, each func(map[string]any) bool) {
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

func (r celResources) GetResource(_ context.Context, apiVersion, resource, namespace, name string) (map[string]any, error) {
	var out map[string]any
	r.find(apiVersion, resource, namespace, func(o map[string]any) bool {
		if md, _ := o["metadata"].(map[string]any); md["name"] == name {
			out = o
			return false
		}
		return true
	})
	if out == nil {
		return nil, fmt.Errorf("%s %s/%s: %w", resource, namespace, name, engine.ErrNotFound)
	}
	return out, nil
}

func (r celResources) ListResources(_ context.Context, apiVersion, resource, namespace string, _ map[string]string) (map[string]any, error) {
	items := []any{}
	r.find(apiVersion, resource, namespace, func(o map[string]any) bool {
		items = append(items, o)
		return true
	})
	return map[string]any{"items": items}, nil
}

func (r celResources) PostResource(_ context.Context, _, _, _ string, data map[string]any) (map[string]any, error) {
	return data, nil
}

type celHTTP map[string]any

func (h celHTTP) Get(_ context.Context, url string, _ map[string]string) (any, error) {
	if v, ok := h[url]; ok {
		return v, nil
	}
	return nil, fmt.Errorf("GET %s: %w", url, engine.ErrNotFound)
}

func (h celHTTP) Post(_ context.Context, url string, _ any, _ map[string]string) (any, error) {
	if v, ok := h[url]; ok {
		return v, nil
	}
	return nil, fmt.Errorf("POST %s: %w", url, engine.ErrNotFound)
}

func (h celHTTP) Client(string) (kyvernocel.HTTP, error) { return h, nil }

type celImages map[string]map[string]any

func (c celImages) ImageData(_ context.Context, image string) (map[string]any, error) {
	if m, ok := c[image]; ok {
		return m, nil
	}
	return nil, fmt.Errorf("image data for %s not found in the context", image)
}

type celGlobals map[string]any

func (c celGlobals) GlobalReference(_ context.Context, name, projection string) (any, error) {
	v := c[name]
	if projection != "" {
		m, _ := v.(map[string]any)
		return m[projection], nil
	}
	return v, nil
}

// ListAllNamespaces implements eval.AllNamespacesLister: the objects of
// the resource in every namespace, as the cluster lists them.
func (r celResources) ListAllNamespaces(_ context.Context, apiVersion, resource string) ([]map[string]any, error) {
	var out []map[string]any
	for _, o := range r {
		av, _ := o["apiVersion"].(string)
		kind, _ := o["kind"].(string)
		gv, _ := schema.ParseGroupVersion(av)
		if gvr, _ := meta.UnsafeGuessKindToResource(gv.WithKind(kind)); av == apiVersion && gvr.Resource == resource {
			out = append(out, o)
		}
	}
	return out, nil
}
