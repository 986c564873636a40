package kyvernotest

import (
	"strings"

	"github.com/verdict-policy/verdict/engine/kyverno"
)

// Resource is a resource loaded from a manifest, as Kyverno's CLI loads it:
// a namespaced resource without a namespace is put in "default".
type Resource struct {
	// Object is the resource. It is shared: never modify it.
	Object map[string]any
	// Path and Line locate the document.
	Path string
	Line int

	APIVersion, Group, Version, Kind string
	Namespace, Name                  string

	// Payload is set for a JSON payload (ApplyOptions.JSONPaths), which
	// only the JSON-mode ValidatingPolicies evaluate.
	Payload bool
}

func newResource(path string, line int, obj map[string]any) *Resource {
	r := &Resource{Object: obj, Path: path, Line: line}
	r.setType(obj)
	normalizeNilMaps(obj)
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil && r.Kind != "" {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	if r.setName(meta) {
		meta["namespace"] = "default"
	}
	return r
}

// setType sets the apiVersion, kind, group and version of r from obj.
func (r *Resource) setType(obj map[string]any) {
	r.APIVersion, _ = obj["apiVersion"].(string)
	r.Kind, _ = obj["kind"].(string)
	if i := strings.LastIndex(r.APIVersion, "/"); i >= 0 {
		r.Group, r.Version = r.APIVersion[:i], r.APIVersion[i+1:]
	} else {
		r.Version = r.APIVersion
	}
}

// setName sets the name and namespace of r from meta; a namespaced kind
// without a namespace is in "default", and setName reports whether it
// defaulted it so.
func (r *Resource) setName(meta map[string]any) (defaulted bool) {
	r.Name, _ = meta["name"].(string)
	r.Namespace, _ = meta["namespace"].(string)
	if r.Namespace == "" && r.Kind != "" && !clusterScoped(r.Group, r.Kind) {
		r.Namespace = "default"
		return true
	}
	return false
}

// Display is the resource as Kyverno's test tables show it:
// apiVersion/Kind/namespace/name (without the namespace when it has none).
func (r *Resource) Display() string {
	if r.Namespace == "" {
		return r.APIVersion + "/" + r.Kind + "/" + r.Name
	}
	return r.APIVersion + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name
}

// uniqueKey identifies duplicates: Kyverno keeps the first resource of a
// group, kind, namespace and name.
func (r *Resource) uniqueKey() string {
	return r.Group + "," + r.Kind + "," + r.Namespace + "," + r.Name
}

// clusterScoped reports whether a built-in kind is cluster scoped, from the
// API group resources Kyverno's CLI embeds. Unknown kinds (custom
// resources) are namespaced, as in Kyverno.
func clusterScoped(group, kind string) bool {
	return kyverno.ClusterScoped(group, kind)
}

// nilMapFields are the fields Kyverno's loader turns from null into empty
// maps (Helm charts write "annotations:" with no value).
var nilMapFields = map[string]bool{
	"annotations":  true,
	"labels":       true,
	"matchLabels":  true,
	"nodeSelector": true,
	"data":         true,
	"stringData":   true,
}

func normalizeNilMaps(obj map[string]any) {
	for k, v := range obj {
		switch v := v.(type) {
		case nil:
			if nilMapFields[k] {
				obj[k] = map[string]any{}
			}
		case map[string]any:
			normalizeNilMaps(v)
		case []any:
			for _, item := range v {
				if m, ok := item.(map[string]any); ok {
					normalizeNilMaps(m)
				}
			}
		}
	}
}
