package kyvernotest

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/engine/jmespath"
)

// globalMocks resolves a test's globalContextEntries into the data of each
// entry by name, as Kyverno's CLI does before it runs a test
// (v1alpha1.ValidateGlobalContextEntries, store.ResolveGCEResourceFiles
// and store.ResolveGlobalContextMockData): the root is the entry's data, or
// the list of its resources (inline, or the documents of its resourceFiles,
// relative to the test's folder dir); fieldPath, a JMESPath, replaces the
// root; projections make it an object of one key per projection, the
// result of its JMESPath on the root. An entry that is not valid, a file
// that cannot be read and a JMESPath that fails are errors of the test.
func (r *runner) globalMocks(dir string, entries []GlobalContextEntry) (map[string]any, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	if err := validateGlobalMocks(entries); err != nil {
		return nil, err
	}
	interp := jmespath.New(jmespath.Options{Now: r.opts.Now})
	out := make(map[string]any, len(entries))
	for _, e := range entries {
		root := e.Data
		if e.Resources != nil {
			root = e.Resources
		}
		if e.ResourceFiles != nil {
			list := []any{}
			for _, f := range e.ResourceFiles {
				objs, err := r.globalMockFile(filepath.Join(dir, f))
				if err != nil {
					return nil, fmt.Errorf("globalContextEntries %q resourceFiles %q: %w", e.Name, f, err)
				}
				list = append(list, objs...)
			}
			root = list
		}
		v, err := resolveGlobalMock(interp, e, root)
		if err != nil {
			return nil, err
		}
		out[e.Name] = v
	}
	return out, nil
}

// validateGlobalMocks checks the entries as Kyverno's
// ValidateGlobalContextEntries does, with its messages.
func validateGlobalMocks(entries []GlobalContextEntry) error {
	seen := make(map[string]bool, len(entries))
	for _, e := range entries {
		name := strings.TrimSpace(e.Name)
		if name == "" {
			return errors.New("globalContextEntries: name is required")
		}
		if seen[name] {
			return fmt.Errorf("globalContextEntries: duplicate name %q", name)
		}
		seen[name] = true
		for _, p := range e.Projections {
			if strings.TrimSpace(p.Name) == "" {
				return fmt.Errorf("globalContextEntries entry %q: projection name is required", e.Name)
			}
			if strings.TrimSpace(p.Path) == "" {
				return fmt.Errorf("globalContextEntries entry %q projection %q: path is required", e.Name, p.Name)
			}
		}
		sources := 0
		for _, set := range []bool{e.Data != nil, e.Resources != nil, e.ResourceFiles != nil} {
			if set {
				sources++
			}
		}
		switch {
		case sources > 1:
			return fmt.Errorf("globalContextEntries entry %q: data, resources, and resourceFiles are mutually exclusive", e.Name)
		case sources == 0:
			return fmt.Errorf("globalContextEntries entry %q: one of data, resources, or resourceFiles is required", e.Name)
		}
		if e.Data != nil {
			if _, ok := e.Data.(map[string]any); !ok {
				return fmt.Errorf("globalContextEntries entry %q: data must be a JSON object", e.Name)
			}
		}
		for j, r := range e.Resources {
			if _, ok := r.(map[string]any); !ok {
				return fmt.Errorf("globalContextEntries entry %q resources[%d]: must be a JSON object (Kubernetes resource manifest)", e.Name, j)
			}
		}
		for j, f := range e.ResourceFiles {
			f = strings.TrimSpace(f)
			switch clean := filepath.ToSlash(filepath.Clean(f)); {
			case f == "":
				return fmt.Errorf("globalContextEntries entry %q resourceFiles[%d]: file path must not be empty", e.Name, j)
			case filepath.IsAbs(f) || strings.HasPrefix(filepath.ToSlash(f), "/"):
				return fmt.Errorf("globalContextEntries entry %q resourceFiles[%d]: file path must not be absolute", e.Name, j)
			case clean == ".." || strings.HasPrefix(clean, "../"):
				return fmt.Errorf("globalContextEntries entry %q resourceFiles[%d]: file path must not escape the test directory", e.Name, j)
			}
		}
	}
	return nil
}

// globalMockFile reads the objects of a resourceFiles file (at most the
// document limit, as every file read whole): each YAML document an object,
// empty documents skipped.
func (r *runner) globalMockFile(path string) ([]any, error) {
	data, err := r.load.readFile(path)
	if err != nil {
		return nil, err
	}
	docs, err := splitYAML(data)
	if err != nil {
		return nil, fmt.Errorf("split YAML documents: %w", err)
	}
	var out []any
	for j, doc := range docs {
		var obj map[string]any
		if err := yaml.UnmarshalStrict(doc, &obj); err != nil {
			return nil, fmt.Errorf("document[%d]: invalid YAML: %w", j, err)
		}
		if len(obj) > 0 {
			out = append(out, obj)
		}
	}
	return out, nil
}

// resolveGlobalMock applies an entry's fieldPath and projections to its
// root.
func resolveGlobalMock(interp *jmespath.Interpreter, e GlobalContextEntry, root any) (any, error) {
	search := func(expr string, data any) (any, error) {
		q, err := jmespath.Parse(expr)
		if err != nil {
			return nil, err
		}
		return interp.Search(q, data)
	}
	if e.FieldPath != "" {
		v, err := search(e.FieldPath, root)
		if err != nil {
			return nil, fmt.Errorf("globalContextEntries %q fieldPath: %w", e.Name, err)
		}
		root = v
	}
	if len(e.Projections) == 0 {
		return root, nil
	}
	out := make(map[string]any, len(e.Projections))
	for _, p := range e.Projections {
		v, err := search(p.Path, root)
		if err != nil {
			return nil, fmt.Errorf("globalContextEntries %q projection %q path %q: %w", e.Name, p.Name, p.Path, err)
		}
		out[p.Name] = v
	}
	return out, nil
}

// globalMock is the data of a globalReference name as Kyverno's CLI mock
// store gives it: "entry" is the entry's data, "entry.projection" the
// key projection of it (an error when the data is not an object or has no
// such key).
func globalMock(globals map[string]any, name string) (any, bool, error) {
	entry, projection, _ := strings.Cut(name, ".")
	projection, _, _ = strings.Cut(projection, ".")
	data, ok := globals[entry]
	if !ok {
		return nil, false, nil
	}
	if projection == "" {
		return data, true, nil
	}
	m, ok := data.(map[string]any)
	if !ok {
		return nil, true, fmt.Errorf("global context mock: projection %q requested but value is not an object", projection)
	}
	v, ok := m[projection]
	if !ok {
		return nil, true, fmt.Errorf("global context mock: projection %q not found", projection)
	}
	return v, true, nil
}
