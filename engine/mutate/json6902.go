package mutate

import (
	"encoding/json"
	"fmt"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"sigs.k8s.io/yaml"
)

// JSONPatch is a decoded patchesJson6902 value.
type JSONPatch struct {
	ops jsonpatch.Patch
}

// ParseJSON6902 decodes a patchesJson6902 text, written as a JSON array of
// operations or as YAML, as Kyverno does.
func ParseJSON6902(text string) (*JSONPatch, error) {
	raw := []byte(text)
	if len(text) > 0 && text[0] != '[' {
		j, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("failed to convert patchesJSON6902 to JSON: %v", err)
		}
		raw = j
	}
	ops, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, fmt.Errorf("failed to decode patches: %v", err)
	}
	return &JSONPatch{ops: ops}, nil
}

// Paths returns the path of each operation.
func (p *JSONPatch) Paths() []string {
	out := make([]string, 0, len(p.ops))
	for _, op := range p.ops {
		path, _ := op.Path()
		out = append(out, path)
	}
	return out
}

// Check reports what Kyverno's policy validation rejects in a patch: a
// path that does not start with "/", an unknown operation, or a missing
// value.
func (p *JSONPatch) Check() error {
	for _, op := range p.ops {
		path, err := op.Path()
		if err != nil {
			return err
		}
		if !strings.HasPrefix(path, "/") {
			return fmt.Errorf("path must begin with a forward slash: %s", path)
		}
		kind := op.Kind()
		switch kind {
		case "add", "replace", "test":
			if _, err := op.ValueInterface(); err != nil {
				return fmt.Errorf("invalid value: %v", err)
			}
		case "remove", "move", "copy":
		default:
			return fmt.Errorf("unexpected kind: %s", kind)
		}
	}
	return nil
}

// Apply applies the patch to a resource with Kyverno's options: negative
// list indexes, removing a missing path is not an error, and adding under
// a missing path creates it.
func (p *JSONPatch) Apply(resource map[string]any) (map[string]any, error) {
	doc, err := json.Marshal(resource)
	if err != nil {
		return nil, fmt.Errorf("resource: %w", err)
	}
	opts := &jsonpatch.ApplyOptions{SupportNegativeIndices: true, AllowMissingPathOnRemove: true, EnsurePathExistsOnAdd: true}
	out, err := p.ops.ApplyWithOptions(doc, opts)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("failed to unmarshal patched resource: %w", err)
	}
	return m, nil
}
