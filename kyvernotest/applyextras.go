package kyvernotest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// This file holds what kyverno apply's --exceptions-within-policies,
// --exceptions-within-resources, --crd-paths, --json and --registry add to
// Apply (and --registry to Run).

// isExceptionDoc reports whether a document is a PolicyException Kyverno's
// CLI selects among policies or resources (exception.SelectFrom): of
// kyverno.io or of policies.kyverno.io.
func isExceptionDoc(m map[string]any) bool {
	kind, _ := m["kind"].(string)
	apiVersion, _ := m["apiVersion"].(string)
	group, _, _ := strings.Cut(apiVersion, "/")
	return kind == kyverno.KindPolicyException && (group == "kyverno.io" || group == "policies.kyverno.io")
}

// addExceptionDocs compiles the PolicyException documents docs (found at
// where: the path and line of each) into s's exceptions.
func (s *suiteRun) addExceptionDocs(docs []*Resource) error {
	for _, d := range docs {
		source := fmt.Sprintf("%s:%d", d.Path, d.Line)
		if vpol.IsException(d.APIVersion, d.Kind) {
			doc, err := vpol.DecodeException(d.Object)
			if err != nil {
				return fmt.Errorf("load exceptions: %s: %w", source, err)
			}
			doc.Spec.ExpiresAt = nil // as celExceptions: whatever expiresAt says
			ex, err := vpol.CompileException(doc)
			if err != nil {
				return fmt.Errorf("load exceptions: %s: %w", source, err)
			}
			s.celExceptions = append(s.celExceptions, ex)
			continue
		}
		data, err := json.Marshal(d.Object)
		if err != nil {
			return fmt.Errorf("load exceptions: %s: %w", source, err)
		}
		docs, err := kyverno.DecodeExceptions(source, data)
		if err != nil {
			return fmt.Errorf("load exceptions: %w", err)
		}
		for _, doc := range docs {
			ex, err := policy.CompileException(doc)
			if err != nil {
				return fmt.Errorf("load exceptions: %s: %w", source, err)
			}
			s.exceptions = append(s.exceptions, ex)
		}
	}
	return nil
}

// resourceExceptions returns the PolicyExceptions among the resources of
// opts (--exceptions-within-resources), and the function that yields every
// resource to evaluate: the files are read twice, the first time decoding
// only the documents that may be PolicyExceptions; standard input, read
// once, is loaded whole.
func resourceExceptions(ctx context.Context, l *loader, opts ApplyOptions, each func(func(*Resource) error) error) ([]*Resource, func(func(*Resource) error) error, error) {
	var found []*Resource
	keep := func(r *Resource) error {
		if isExceptionDoc(r.Object) {
			found = append(found, r)
		}
		return nil
	}
	switch {
	case opts.ResourceSource != nil:
		// The cluster's PolicyExceptions are not among the kinds listed.
		return nil, each, nil
	case slices.Contains(opts.ResourcePaths, StdinPath):
		whole, err := l.resources(opts.ResourcePaths)
		if err != nil {
			return nil, nil, err
		}
		for _, r := range whole {
			_ = keep(r)
		}
		return found, func(fn func(*Resource) error) error {
			for _, r := range whole {
				if err := fn(r); err != nil {
					return err
				}
			}
			return nil
		}, nil
	}
	files, err := l.resourceFiles(opts.ResourcePaths)
	if err != nil {
		return nil, nil, fmt.Errorf("load resources: %w", err)
	}
	if err := l.eachResourceOf(ctx, files, kindFilter([]string{kyverno.KindPolicyException}), keep); err != nil {
		return nil, nil, err
	}
	return found, each, nil
}

// crdSchemasOf makes the types of the CustomResourceDefinitions of paths,
// as Kyverno's CLI finds them (PolicyProcessor.openAPI, for apply's
// --crd-paths and a test's clusterResources): each path names its folder
// (a file, the folder it is in), whose YAML and JSON files (not
// recursively) are read whole, and every CustomResourceDefinition document
// of them is used; the other documents are skipped. nil when there is no
// CRD.
func (l *loader) crdSchemasOf(paths []string) (*mpol.Schemas, error) {
	var dirs []string
	seen := map[string]bool{}
	for _, dir := range paths {
		if strings.TrimSpace(dir) == "" {
			continue
		}
		if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
			dir = filepath.Dir(dir)
		}
		if !seen[dir] {
			seen[dir] = true
			dirs = append(dirs, dir)
		}
	}
	var crds []map[string]any
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			// Kyverno's CLI reads no CRD from a folder it cannot list.
			continue
		}
		for _, e := range entries {
			ext := filepath.Ext(e.Name())
			if e.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			if ok, err := l.regularEntry(path); err != nil {
				return nil, fmt.Errorf("load CRDs: %w", err)
			} else if !ok {
				continue
			}
			objs, err := l.readObjects(path)
			if err != nil {
				return nil, fmt.Errorf("load CRDs: %w", err)
			}
			for _, o := range objs {
				m := o.Value
				apiVersion, _ := m["apiVersion"].(string)
				if kind, _ := m["kind"].(string); kind != "CustomResourceDefinition" || !strings.HasPrefix(apiVersion, "apiextensions.k8s.io/") {
					continue
				}
				crds = append(crds, m)
			}
		}
	}
	if len(crds) == 0 {
		return nil, nil
	}
	s, err := mpol.NewSchemas(crds)
	if err != nil {
		return nil, fmt.Errorf("load CRDs: %w", err)
	}
	return s, nil
}

// policyExceptions returns the PolicyExceptions among the documents of the
// policy paths (--exceptions-within-policies): the files policies reads,
// read again (standard input, read once, cannot be).
func (l *loader) policyExceptions(paths []string) ([]*Resource, error) {
	var found []*Resource
	var walk func(p string, top bool) error
	walk = func(p string, top bool) error {
		if p == StdinPath && top {
			return fmt.Errorf("load exceptions: policies from standard input: %w", ErrStdinExceptions)
		}
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("load exceptions: %w", err)
		}
		if strings.HasPrefix(fi.Name(), ".") {
			return nil
		}
		if fi.IsDir() {
			entries, err := os.ReadDir(p)
			if err != nil {
				return fmt.Errorf("load exceptions: %w", err)
			}
			for _, e := range entries {
				if err := walk(filepath.Join(p, e.Name()), false); err != nil {
					return err
				}
			}
			return nil
		}
		if !isYAML(p) || !fi.Mode().IsRegular() {
			return nil // policies reported it
		}
		objs, err := l.readObjects(p)
		if err != nil {
			return fmt.Errorf("load exceptions: %w", err)
		}
		for _, o := range objs {
			if isExceptionDoc(o.Value) {
				found = append(found, newResource(p, o.Line, o.Value))
			}
		}
		return nil
	}
	for _, p := range paths {
		if err := walk(p, true); err != nil {
			return nil, err
		}
	}
	return found, nil
}

// ErrStdinExceptions is the error of ApplyOptions.ExceptionsWithinPolicies
// with the policies on standard input, which is read once.
var ErrStdinExceptions = errors.New("the PolicyExceptions within policies cannot be read from standard input: give the policy file")

// applyExceptionDocs adds to s the PolicyExceptions within the policies
// and the resources, as opts asks, and replaces each when the resources
// had to be read whole for them.
func applyExceptionDocs(ctx context.Context, l *loader, s *suiteRun, opts ApplyOptions, each *func(func(*Resource) error) error) error {
	if opts.ExceptionsWithinResources {
		docs, e, err := resourceExceptions(ctx, l, opts, *each)
		if err != nil {
			return err
		}
		*each = e
		if err := s.addExceptionDocs(docs); err != nil {
			return err
		}
	}
	if opts.ExceptionsWithinPolicies {
		docs, err := l.policyExceptions(opts.PolicyPaths)
		if err != nil {
			return err
		}
		if err := s.addExceptionDocs(docs); err != nil {
			return err
		}
	}
	return nil
}

// checkCRDFiles refuses a --crd-paths path that is not a .yaml or .yml
// file name, as kyverno apply does (common.LoadCrdsFromPath; it then reads
// every CRD of the file's folder).
func checkCRDFiles(paths []string) error {
	for _, p := range paths {
		if strings.TrimSpace(p) == "" {
			continue
		}
		abs, err := filepath.Abs(strings.TrimSuffix(p, "/"))
		if err != nil {
			return fmt.Errorf("load CRDs: %w", err)
		}
		if ext := filepath.Ext(abs); ext != ".yaml" && ext != ".yml" {
			return fmt.Errorf("load CRDs: CRD file must have .yaml or .yml extension: %s", abs)
		}
	}
	return nil
}

// eachPayload calls fn with the JSON payload of each file (kyverno apply
// --json), read as Kyverno's payload.Load reads it: a .json file with
// encoding/json (numbers are float64), another file as YAML, which must
// hold one document. Each file is at most the largest document in size.
func (l *loader) eachPayload(paths []string, fn func(*Resource) error) error {
	for _, p := range paths {
		var v any
		if filepath.Ext(p) == ".json" {
			data, err := l.readFile(p)
			if err != nil {
				return fmt.Errorf("load JSON payload: %w", err)
			}
			if err := json.Unmarshal(data, &v); err != nil {
				return fmt.Errorf("load JSON payload: %s: %w", p, err)
			}
		} else {
			objs, err := l.readObjects(p)
			if err != nil {
				return fmt.Errorf("load JSON payload: %w", err)
			}
			if len(objs) == 1 {
				v = objs[0].Value
			}
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("load JSON payload: %s: %w", p, ErrPayloadNotObject)
		}
		// Kyverno names a payload by its kind, namespace and name, if it
		// has them (no namespace is defaulted).
		r := &Resource{Object: obj, Path: p, Line: 1, Payload: true}
		r.setType(obj)
		meta, _ := obj["metadata"].(map[string]any)
		r.Namespace, _ = meta["namespace"].(string)
		r.Name, _ = meta["name"].(string)
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// ErrPayloadNotObject is the error of a JSON payload file that does not
// hold an object.
var ErrPayloadNotObject = errors.New("a JSON payload must be one object")

// jsonModePolicies are the ValidatingPolicies of evaluation mode JSON
// among pols: those Kyverno's CLI evaluates a JSON payload with.
func jsonModePolicies(pols []*policy.Policy) []*policy.Policy {
	var out []*policy.Policy
	for _, p := range pols {
		if p != nil && p.Validating != nil && p.Validating.Mode == vpol.ModeJSON {
			out = append(out, p)
		}
	}
	return out
}

// ErrRegistryEntries is the error of RegistryAccess (--registry) with a
// policy that has an imageRegistry context entry.
var ErrRegistryEntries = errors.New("verdict's CLI does not load imageRegistry context entries from registries (kyverno's --registry): give their values with --set or --values-file, or run without --registry")

// registryEntries returns ErrRegistryEntries, naming the first policy and
// entry, when a policy of pols has an imageRegistry context entry.
func registryEntries(pols []*Policy) error {
	for _, p := range pols {
		var names []string
		for name, src := range p.entries {
			if src == srcImageRegistry {
				names = append(names, name)
			}
		}
		if len(names) > 0 {
			slices.Sort(names)
			return fmt.Errorf("policy %s, context entry %s: %w", p.Name, names[0], ErrRegistryEntries)
		}
	}
	return nil
}
