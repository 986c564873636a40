package cases

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/engine/eval"
)

// files are the case files: testdata/<area>/*.yaml.
//
//go:embed testdata
var files embed.FS

// Case is one case of the corpus: an inline policy, a resource, the rest
// of the request and the data the host serves, and the expected results
// with Kyverno's messages (or the expected compile error).
type Case struct {
	// File is the case's file, "<area>/<name>.yaml"; Note names the case
	// (unique in the corpus).
	File string `json:"-"`
	Note string `json:"note"`
	// Policy is one or more policy documents (YAML), of both generations.
	Policy string `json:"policy"`
	// Resource is the object under evaluation.
	Resource map[string]any `json:"resource"`
	// Request holds the rest of the admission request.
	Request *Request `json:"request,omitempty"`
	// ConfigMaps serves configMap context entries, keyed namespace/name.
	ConfigMaps map[string]map[string]any `json:"configMaps,omitempty"`
	// Exceptions are PolicyException documents (YAML) in force.
	Exceptions string `json:"exceptions,omitempty"`
	// Params are the params resources of validate.cel rules.
	Params []map[string]any `json:"params,omitempty"`
	// Cluster are the objects the Lookup serves to mutate targets and
	// generate rules (clone sources, existing resources).
	Cluster []map[string]any `json:"cluster,omitempty"`

	// What a case about the policies.kyverno.io kinds adds to the request
	// and to the data sources of the CEL libraries.

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
	// KyvernoCLI evaluates as Kyverno's CLI (eval.Options.KyvernoCLI):
	// ValidatingAdmissionPolicies at admission, the params of their
	// bindings found as the CLI finds them.
	KyvernoCLI bool `json:"kyvernoCLI,omitempty"`

	// Want are the expected results, in order. A result without Message
	// (or Properties) does not check it.
	Want []Result `json:"want"`
	// WantError is the expected compile error.
	WantError *Error `json:"want_error,omitempty"`
	// WantPatched is the object after the mutate rules; WantPatch the JSON
	// Patch from the object to it; WantNoPatch says nothing changed.
	// WantGenerated are the generate intents and WantTargets the patched
	// mutate targets, in order. All compare decoded, never as bytes.
	WantPatched   map[string]any   `json:"want_patched,omitempty"`
	WantPatch     []any            `json:"want_patch,omitempty"`
	WantNoPatch   bool             `json:"want_no_patch,omitempty"`
	WantGenerated []Generated      `json:"want_generated,omitempty"`
	WantTargets   []map[string]any `json:"want_targets,omitempty"`
}

// Request is the admission request of a case, beyond its object.
type Request struct {
	Operation       string            `json:"operation,omitempty"`
	OldObject       map[string]any    `json:"oldObject,omitempty"`
	NamespaceLabels map[string]string `json:"namespaceLabels,omitempty"`
	UserInfo        eval.UserInfo     `json:"userInfo,omitempty"`
	Roles           []string          `json:"roles,omitempty"`
	ClusterRoles    []string          `json:"clusterRoles,omitempty"`
	Background      bool              `json:"background,omitempty"`
	// GenerateExisting replays the resource as an existing trigger.
	GenerateExisting bool `json:"generateExisting,omitempty"`
	// MutateExisting replays the resource as an existing trigger of
	// mutateExistingOnPolicyUpdate rules.
	MutateExisting bool           `json:"mutateExisting,omitempty"`
	Variables      map[string]any `json:"variables,omitempty"`
	// RuleVariables are keyed "policy/rule".
	RuleVariables map[string]map[string]any `json:"ruleVariables,omitempty"`
}

// Result is one expected rule result.
type Result struct {
	Policy  string `json:"policy"`
	Rule    string `json:"rule"`
	Result  string `json:"result"`
	Message string `json:"message,omitempty"`
	Enforce bool   `json:"enforce,omitempty"`
	// Properties are checked only when the case gives them.
	Properties map[string]string `json:"properties,omitempty"`
	// Path is the failed field of a MutatingPolicy's error.
	Path string `json:"path,omitempty"`
}

// Error is an expected compile error: its code and path.
type Error struct {
	Code string `json:"code"`
	Path string `json:"path"`
}

// Generated is one expected generate intent.
type Generated struct {
	Rule   string         `json:"rule"`
	Action string         `json:"action"`
	Object map[string]any `json:"object"`
	Source bool           `json:"source,omitempty"`
}

// Load reads every case of the corpus, file by file in name order, each
// file decoded strictly (an unknown field is an error), and checks that
// notes are unique.
func Load() ([]Case, error) {
	var out []Case
	seen := map[string]string{}
	err := fs.WalkDir(files, "testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		data, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		var f struct {
			Cases []Case `json:"cases"`
		}
		name := strings.TrimPrefix(p, "testdata/")
		if err := yaml.UnmarshalStrict(data, &f); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for _, c := range f.Cases {
			if other, ok := seen[c.Note]; ok {
				return fmt.Errorf("%s: case %q: the note of a case of %s too", name, c.Note, other)
			}
			seen[c.Note] = name
			c.File = name
			out = append(out, c)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load cases: %w", err)
	}
	return out, nil
}

// Area is the folder of the case's file ("mutate").
func (c *Case) Area() string { return path.Dir(c.File) }

// LoadExceptions reads a runner's exceptions file: a YAML list of the
// notes of the cases it cannot express, each with its reason. It returns
// them by note; an exception without a reason is an error.
func LoadExceptions(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var list []struct{ Note, Reason string }
	if err := yaml.UnmarshalStrict(data, &list); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]string{}
	for _, e := range list {
		if e.Reason == "" {
			return nil, fmt.Errorf("%s: exception %q gives no reason", path, e.Note)
		}
		out[e.Note] = e.Reason
	}
	return out, nil
}

// HasData reports whether the case has data of its own for the host to
// serve: Lookup data, CEL data sources or PolicyExceptions. A runner can
// evaluate the others on a host with the data of an empty case.
func (c *Case) HasData() bool {
	return c.ConfigMaps != nil || c.Params != nil || c.Cluster != nil || c.Exceptions != "" || c.CELExceptions != "" ||
		c.NamespaceObject != nil || c.CELResources != nil || c.Images != nil || c.HTTP != nil || c.GlobalContext != nil || c.NoCELData
}
