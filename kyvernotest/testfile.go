package kyvernotest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Test is one cli.kyverno.io/v1alpha1 Test document of a kyverno-test.yaml
// file. Field names and meaning follow Kyverno's CLI; fields of the
// schema that Verdict does not act on yet are decoded (so that a test file
// that uses them is not an error) and reported where they change results.
type Test struct {
	APIVersion string         `json:"apiVersion,omitempty"`
	Kind       string         `json:"kind,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`

	// Name is the deprecated top-level name (metadata.name replaces it).
	Name string `json:"name,omitempty"`

	// Policies and Resources are files or folders, relative to the test
	// file's folder.
	Policies  []string `json:"policies,omitempty"`
	Resources []string `json:"resources,omitempty"`

	JSONPayload     string   `json:"jsonPayload,omitempty"`
	JSONPayloads    []string `json:"jsonPayloads,omitempty"`
	HTTPPayloads    []string `json:"httpPayloads,omitempty"`
	EnvoyPayloads   []string `json:"envoyPayloads,omitempty"`
	TargetResources []string `json:"targetResources,omitempty"`
	ParamResources  []string `json:"paramResources,omitempty"`

	// Variables names a values file; Values holds the same inline (and wins
	// over Variables, as in Kyverno).
	Variables string      `json:"variables,omitempty"`
	Values    *ValuesSpec `json:"values,omitempty"`
	// UserInfo names a cli.kyverno.io UserInfo file.
	UserInfo string `json:"userinfo,omitempty"`

	Results []ExpectedResult `json:"results,omitempty"`

	Exceptions           []string             `json:"exceptions,omitempty"`
	Context              string               `json:"context,omitempty"`
	ClusterResources     []string             `json:"clusterResources,omitempty"`
	APICallResponses     []APICallResponse    `json:"apiCallResponses,omitempty"`
	GlobalContextEntries []GlobalContextEntry `json:"globalContextEntries,omitempty"`
}

// DisplayName is metadata.name, or the deprecated top-level name.
func (t *Test) DisplayName() string {
	if n, ok := t.Metadata["name"].(string); ok && n != "" {
		return n
	}
	return t.Name
}

// testPath is the path p of a test in folder dir: p itself when
// absolute, else relative to dir.
func testPath(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// files are the files and folders the test names (policies, resources,
// values, user info, exceptions, context and the expected results'
// resource files), for a test in folder dir.
func (t *Test) files(dir string) []string {
	var out []string
	add := func(ps ...string) {
		for _, p := range ps {
			if p != "" {
				out = append(out, testPath(dir, p))
			}
		}
	}
	add(t.Policies...)
	add(t.Resources...)
	add(t.TargetResources...)
	add(t.ParamResources...)
	add(t.Exceptions...)
	add(t.ClusterResources...)
	add(t.Variables, t.UserInfo, t.Context)
	for _, e := range t.Results {
		add(e.PatchedResources, e.PatchedResource, e.GeneratedResource, e.CloneSourceResource)
		add(e.GeneratedResources...)
	}
	return out
}

// ExpectedResult is one entry of a Test's results.
type ExpectedResult struct {
	// Policy is the policy name; a namespaced Policy may be written
	// namespace/name.
	Policy string `json:"policy"`
	// Rule is the rule name. Results of autogen rules (autogen-<rule>,
	// autogen-cronjob-<rule>) are checked against the same entry.
	Rule string `json:"rule,omitempty"`

	IsValidatingAdmissionPolicy bool `json:"isValidatingAdmissionPolicy,omitempty"`
	IsMutatingAdmissionPolicy   bool `json:"isMutatingAdmissionPolicy,omitempty"`
	IsValidatingPolicy          bool `json:"isValidatingPolicy,omitempty"`
	IsDeletingPolicy            bool `json:"isDeletingPolicy,omitempty"`
	IsImageValidatingPolicy     bool `json:"isImageValidatingPolicy,omitempty"`
	IsGeneratingPolicy          bool `json:"isGeneratingPolicy,omitempty"`
	IsMutatingPolicy            bool `json:"isMutatingPolicy,omitempty"`

	// Result is the expected pass, fail, warn, error or skip.
	Result string `json:"result"`
	// Kind is informative: Kyverno does not use it to select resources.
	Kind string `json:"kind"`
	// Operation, when set, evaluates the resources as a CREATE, UPDATE or
	// DELETE request for this result only.
	Operation string `json:"operation,omitempty"`

	PatchedResources string `json:"patchedResources,omitempty"`
	// PatchedResource is the older name of PatchedResources (Kyverno
	// before v1.8); Kyverno v1.19 rejects it, Verdict reads it as
	// PatchedResources.
	PatchedResource        string `json:"patchedResource,omitempty"`
	GeneratedResource      string `json:"generatedResource,omitempty"`
	CloneSourceResource    string `json:"cloneSourceResource,omitempty"`
	FailOnMissingResources bool   `json:"failOnMissingResources,omitempty"`

	// Resources are resource names, or namespace/name.
	Resources          []string       `json:"resources,omitempty"`
	ResourceSpecs      []ResourceSpec `json:"resourceSpecs,omitempty"`
	GeneratedResources []string       `json:"generatedResources,omitempty"`

	// Resource, Status and Namespace are the older schema's fields:
	// resource is one entry of resources, status is result, and namespace
	// qualifies resource names that have none.
	Resource  string `json:"resource,omitempty"`
	Status    string `json:"status,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// ResourceSpec selects a resource by group, version, namespace and name.
type ResourceSpec struct {
	Group       string `json:"group,omitempty"`
	Version     string `json:"version,omitempty"`
	Kind        string `json:"kind,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	Name        string `json:"name,omitempty"`
}

// APICallResponse mocks an apiCall context entry (by urlPath or service
// url, optionally by method).
type APICallResponse struct {
	URL      string `json:"url,omitempty"`
	URLPath  string `json:"urlPath,omitempty"`
	Method   string `json:"method,omitempty"`
	Response struct {
		StatusCode int `json:"statusCode,omitempty"`
		Body       any `json:"body"`
	} `json:"response"`
}

// GlobalContextEntry mocks the data of a GlobalContextEntry: exactly one
// of Data (an object), Resources (objects) or ResourceFiles (YAML files of
// objects, relative to the test's folder), then FieldPath and Projections
// (see runner.globalMocks).
type GlobalContextEntry struct {
	Name          string                    `json:"name"`
	Data          any                       `json:"data,omitempty"`
	Resources     []any                     `json:"resources,omitempty"`
	ResourceFiles []string                  `json:"resourceFiles,omitempty"`
	FieldPath     string                    `json:"fieldPath,omitempty"`
	Projections   []GlobalContextProjection `json:"projections,omitempty"`
}

// GlobalContextProjection is a projection of a GlobalContextEntry mock:
// the key Name of the entry's data is the result of the JMESPath Path.
type GlobalContextProjection struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// ParseTests decodes the Test documents of a test file. Decoding is strict:
// an unknown field is an error that names it. name is used in errors only.
func ParseTests(name string, data []byte) ([]*Test, error) {
	docs, err := splitYAML(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: no test document", name)
	}
	tests := make([]*Test, 0, len(docs))
	for i, doc := range docs {
		var t Test
		if err := unmarshalStrict(doc, &t); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i+1, err)
		}
		if err := t.normalize(); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i+1, err)
		}
		tests = append(tests, &t)
	}
	return tests, nil
}

// normalize folds the older schema into the current one and removes
// duplicate paths, as Kyverno's loader does.
func (t *Test) normalize() error {
	// kyverno.io/v1 is the apiVersion of older test files, which Kyverno's
	// CLI still runs (it reads no apiVersion).
	if t.APIVersion != "" && t.APIVersion != "cli.kyverno.io/v1alpha1" && t.APIVersion != "kyverno.io/v1" {
		return fmt.Errorf("apiVersion %q is not cli.kyverno.io/v1alpha1", t.APIVersion)
	}
	if t.Kind != "" && t.Kind != "Test" {
		return fmt.Errorf("kind %q is not Test", t.Kind)
	}
	if t.Values != nil {
		if err := t.Values.checkNames(); err != nil {
			return fmt.Errorf("values: %w", err)
		}
	}
	t.Policies = dedupe(t.Policies)
	t.Resources = dedupe(t.Resources)
	if t.JSONPayload != "" && len(t.JSONPayloads) == 0 {
		t.JSONPayloads = []string{t.JSONPayload}
	}
	t.JSONPayload = ""
	var payloads []string
	for _, p := range t.JSONPayloads {
		if strings.TrimSpace(p) != "" {
			payloads = append(payloads, path.Clean(p))
		}
	}
	t.JSONPayloads = dedupe(payloads)
	for i := range t.Results {
		r := &t.Results[i]
		if r.Result == "" {
			r.Result = r.Status
		}
		if r.Resource != "" {
			r.Resources = append(r.Resources, r.Resource)
		}
		if r.Namespace != "" {
			for j, name := range r.Resources {
				if !strings.Contains(name, "/") {
					r.Resources[j] = r.Namespace + "/" + name
				}
			}
		}
		r.Resource, r.Status, r.Namespace = "", "", ""
		if r.PatchedResources == "" {
			r.PatchedResources = r.PatchedResource
		}
		r.PatchedResource = ""
		switch r.Operation {
		case "", "CREATE", "UPDATE", "DELETE":
		default:
			return fmt.Errorf("results[%d]: operation %q is not CREATE, UPDATE or DELETE", i, r.Operation)
		}
	}
	return nil
}

func dedupe(in []string) []string {
	if len(in) == 0 {
		return in
	}
	seen := make(map[string]bool, len(in))
	out := in[:0:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// splitYAML splits a multi-document YAML stream, dropping empty documents
// (only comments, blanks or "---").
func splitYAML(data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		b, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if !emptyDocument(b) {
			docs = append(docs, b)
		}
	}
	return docs, nil
}

func emptyDocument(b []byte) bool {
	for _, line := range bytes.Split(b, []byte("\n")) {
		l := bytes.TrimSpace(line)
		if len(l) == 0 || l[0] == '#' || bytes.Equal(l, []byte("---")) {
			continue
		}
		return false
	}
	return true
}
