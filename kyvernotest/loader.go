package kyvernotest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/verdict-policy/verdict/engine/dpol"
	"github.com/verdict-policy/verdict/engine/gpol"
	"github.com/verdict-policy/verdict/engine/ivpol"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vap"
	"github.com/verdict-policy/verdict/engine/vpol"
	"github.com/verdict-policy/verdict/internal/safefile"
)

// Policy is a policy document loaded from a file: a compiled ClusterPolicy
// or Policy, or a policy of a kind Verdict does not evaluate.
type Policy struct {
	Path       string
	Line       int
	APIVersion string
	Kind       string
	Name       string
	Namespace  string

	// Raw is the document as written.
	Raw map[string]any
	// Doc is the decoded ClusterPolicy or Policy (nil for other kinds, or
	// when decoding failed).
	Doc *kyverno.Document
	// Compiled is set for a ClusterPolicy or Policy that compiled.
	Compiled *policy.Policy
	// Err is the compile error of a ClusterPolicy or Policy.
	Err error
	// Unsupported says why a policy of another kind is not evaluated.
	Unsupported string

	// unsupportedRules maps a rule name (autogen rules included) to the
	// reason the engine cannot evaluate it.
	unsupportedRules map[string]string
	// entries maps the names of the context entries of the policy's rules
	// and foreach blocks to their source (configMap, apiCall,
	// imageRegistry, globalReference or variable).
	entries map[string]string
	// responds is true when Kyverno's CLI always returns a response for
	// the policy (it has mutate, validate or verifyImages rules): a
	// response without rule results means the resource was excluded.
	responds bool
	// ruleless is true for the kinds without rules (ValidatingPolicy,
	// ValidatingAdmissionPolicy): kyverno test ignores the expected
	// result's rule for them.
	ruleless bool
	// binding is set for a ValidatingAdmissionPolicyBinding (vaps.go).
	binding *vap.Binding
	// admission is a MutatingAdmissionPolicy, compiled with the bindings
	// of its test (admissionPolicies); mapBinding is a binding, which is
	// not a policy of the test.
	admission  *mpol.AdmissionPolicyDocument
	mapBinding *mpol.BindingDocument
}

// otherPolicyKinds are the policy kinds Kyverno's CLI loads that Verdict
// does not evaluate yet.
var otherPolicyKinds = map[string]bool{
	"CleanupPolicy":        true,
	"ClusterCleanupPolicy": true,
}

// loader reads, decodes and compiles each file once per run. It is safe
// for concurrent use by the tests of a run.
//
// A loader of test runs (pins not nil) keeps a file only while a test
// that has not finished names it or a folder above it (pin, release):
// the policies, compiled programs and resources of the tests already run
// are then garbage, and a run holds the files of the tests in progress,
// not of every test. A file named again after its last pin is loaded
// again.
type loader struct {
	mu    sync.Mutex
	cache map[cacheKey]*cacheEntry
	// pins counts, per path a test names (a file or a folder, cleaned),
	// the tests naming it that have not finished; nil keeps every file
	// for the whole run.
	pins   map[string]int
	files  fileOptions
	warnMu sync.Mutex
}

type cacheKey struct {
	what string
	path string
}

type cacheEntry struct {
	once sync.Once
	val  any
	err  error
}

func newLoader(files fileOptions) *loader {
	return &loader{cache: map[cacheKey]*cacheEntry{}, files: files.withDefaults()}
}

func (l *loader) get(what, path string, load func() (any, error)) (any, error) {
	l.mu.Lock()
	e, ok := l.cache[cacheKey{what, path}]
	if !ok {
		e = &cacheEntry{}
		l.cache[cacheKey{what, path}] = e
	}
	l.mu.Unlock()
	e.once.Do(func() { e.val, e.err = load() })
	return e.val, e.err
}

// pin counts a test that will load paths (pinned until release).
func (l *loader) pin(paths []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pins == nil {
		l.pins = map[string]int{}
	}
	for _, p := range paths {
		l.pins[filepath.Clean(p)]++
	}
}

// release ends a pin of paths. When a path is no longer pinned, the
// files that no pinned path covers are dropped (standard input, which
// can be read once only, is kept).
func (l *loader) release(paths []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	unpinned := false
	for _, p := range paths {
		p = filepath.Clean(p)
		if l.pins[p]--; l.pins[p] <= 0 {
			delete(l.pins, p)
			unpinned = true
		}
	}
	if !unpinned {
		return
	}
	for k := range l.cache {
		if k.path != StdinPath && !l.pinnedLocked(k.path) {
			delete(l.cache, k)
		}
	}
}

// pinnedLocked reports whether path or a folder above it is pinned.
func (l *loader) pinnedLocked(path string) bool {
	for p := filepath.Clean(path); ; {
		if l.pins[p] > 0 {
			return true
		}
		parent := filepath.Dir(p)
		if parent == p {
			return false
		}
		p = parent
	}
}

func isYAML(name string) bool {
	ext := filepath.Ext(name)
	return ext == ".yaml" || ext == ".yml"
}

// policies loads policy files and folders (recursively, skipping hidden
// entries and files that are not YAML, as Kyverno does).
func (l *loader) policies(paths []string) ([]*Policy, error) {
	var out []*Policy
	for _, p := range paths {
		ps, err := l.policyPath(p, true)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

// policyPath loads a policy file, or the files of a folder, or standard
// input for the path "-" (StdinPath) when named (top). A path that is not
// a regular file is an error when named (top), skipped with a warning in
// a folder.
func (l *loader) policyPath(p string, top bool) ([]*Policy, error) {
	if p == StdinPath && top {
		if l.files.stdin == nil {
			return nil, fmt.Errorf("load policies: %w", errNoStdin)
		}
		return cached(l, "policy", p, func() ([]*Policy, error) { return l.loadPolicyFile(p) })
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("load policies: %w", err)
	}
	if strings.HasPrefix(fi.Name(), ".") {
		return nil, nil
	}
	if fi.IsDir() {
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("load policies: %w", err)
		}
		var out []*Policy
		for _, e := range entries {
			ps, err := l.policyPath(filepath.Join(p, e.Name()), false)
			if err != nil {
				return nil, err
			}
			out = append(out, ps...)
		}
		return out, nil
	}
	if !isYAML(p) {
		return nil, nil
	}
	if !fi.Mode().IsRegular() {
		err := &safefile.NotRegularError{Path: p, Mode: fi.Mode()}
		if top {
			return nil, fmt.Errorf("load policies: %w", err)
		}
		l.skipped(err)
		return nil, nil
	}
	return cached(l, "policy", p, func() ([]*Policy, error) { return l.loadPolicyFile(p) })
}

func (l *loader) loadPolicyFile(path string) ([]*Policy, error) {
	objs, err := l.readObjects(path)
	if err != nil {
		return nil, fmt.Errorf("load policies: %w", err)
	}
	var out []*Policy
	for _, o := range objs {
		if k, _ := o.Value["kind"].(string); k == "" {
			// Kyverno's CLI drops such a document without a word.
			l.skipped(fmt.Errorf("%s:%d: a document without kind, which is not a policy", path, o.Line))
			continue
		}
		p := policyOf(path, o)
		if p != nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// policyOf decodes and compiles one document of a policy file (a
// ValidatingAdmissionPolicyBinding too, which callers separate with
// splitBindings). Documents that are not policies (exceptions, anything
// else) give nil.
// compileOptions are those of the kyverno.io policies a run loads: a run
// evaluates a small part of the rules it loads (a test sends a few
// resources to each), so validate.cel expressions compile when their rule
// is first evaluated (policy.CompileOptions.DeferCEL).
var compileOptions = policy.CompileOptions{DeferCEL: true}

func policyOf(path string, o kyverno.Object) *Policy {
	p := &Policy{Path: path, Line: o.Line, Raw: o.Value}
	p.APIVersion, _ = o.Value["apiVersion"].(string)
	p.Kind, _ = o.Value["kind"].(string)
	meta, _ := o.Value["metadata"].(map[string]any)
	p.Name, _ = meta["name"].(string)
	p.Namespace, _ = meta["namespace"].(string)
	group, _, _ := strings.Cut(p.APIVersion, "/")
	switch {
	case group == "kyverno.io" && (p.Kind == "ClusterPolicy" || p.Kind == "Policy"):
	case vpol.IsPolicy(p.APIVersion, p.Kind):
		return validatingPolicyOf(p, o) // vpolicies.go
	case vap.IsPolicy(p.APIVersion, p.Kind):
		// Kyverno's CLI returns a response for every
		// ValidatingAdmissionPolicy and resource: one without result means
		// the resource was excluded.
		return celPolicyOf(p, o, vap.DecodePolicy, policy.CompileVAP, keepsEmpty) // vpolicies.go
	case vap.IsBinding(p.APIVersion, p.Kind):
		return bindingOf(p, o) // vaps.go
	case mpol.Policies.IsPolicy(p.APIVersion, p.Kind):
		return mutatingPolicyOf(p, o)
	// Kyverno's CLI gives no response for a resource an
	// ImageValidatingPolicy or GeneratingPolicy does not apply to; for a
	// DeletingPolicy it reports, for each resource the matchConstraints
	// select, whether the policy would delete it, and nothing for the
	// others.
	case ivpol.Policies.IsPolicy(p.APIVersion, p.Kind):
		return celPolicyOf(p, o, ivpol.Policies.DecodePolicy, policy.CompileImageValidating, dropsEmpty)
	case gpol.Policies.IsPolicy(p.APIVersion, p.Kind):
		return celPolicyOf(p, o, gpol.Policies.DecodePolicy, policy.CompileGenerating, dropsEmpty)
	case dpol.Policies.IsPolicy(p.APIVersion, p.Kind):
		return celPolicyOf(p, o, dpol.Policies.DecodePolicy, policy.CompileDeleting, dropsEmpty)
	case mpol.IsAdmissionPolicy(p.APIVersion, p.Kind), mpol.IsBinding(p.APIVersion, p.Kind):
		return admissionDocumentOf(p, o)
	case otherPolicyKinds[p.Kind]:
		p.Unsupported = p.Kind + " policies are not supported yet"
		return p
	default:
		return nil
	}
	docs, err := kyverno.DecodePolicyValue(fmt.Sprintf("%s:%d", path, o.Line), o.Value)
	if err != nil {
		p.Err = locate(path, o.Line, "decode "+p.Kind+" "+strconv.Quote(p.Name), err, MaxLocateBytes)
		return p
	}
	if len(docs) != 1 {
		p.Err = fmt.Errorf("%s:%d: decoded %d policies from one document", path, o.Line, len(docs))
		return p
	}
	doc := docs[0]
	p.Doc = doc
	p.entries = contextEntries(doc)
	for _, r := range doc.Spec.Rules {
		if r.Mutate != nil || r.Validate != nil || len(r.VerifyImages) > 0 {
			p.responds = true
		}
	}
	compiled, err := policy.CompileWith(doc, compileOptions)
	if err != nil {
		p.Err = locate(path, o.Line, "compile "+p.Kind+" "+strconv.Quote(p.Name), err, MaxLocateBytes)
		return p
	}
	p.Compiled = compiled
	for _, r := range compiled.Rules {
		if r.Unsupported != "" {
			if p.unsupportedRules == nil {
				p.unsupportedRules = map[string]string{}
			}
			p.unsupportedRules[r.Name] = r.Unsupported
		}
	}
	return p
}

// resources loads resource files, and the YAML files of folders (not
// recursively, as Kyverno does).
func (l *loader) resources(paths []string) ([]*Resource, error) {
	files, err := l.resourceFiles(paths)
	if err != nil {
		return nil, fmt.Errorf("load resources: %w", err)
	}
	var out []*Resource
	for _, f := range files {
		rs, err := l.resourceFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

func (l *loader) resourceFile(path string) ([]*Resource, error) {
	return cached(l, "resource", path, func() ([]*Resource, error) {
		objs, err := l.readObjects(path)
		if err != nil {
			return nil, fmt.Errorf("load resources: %w", err)
		}
		out := make([]*Resource, 0, len(objs))
		for _, o := range objs {
			if o.Value == nil {
				continue
			}
			out = append(out, newResource(path, o.Line, o.Value))
		}
		return out, nil
	})
}

// uniqueResources drops later resources of the same group, kind, namespace
// and name.
func uniqueResources(in []*Resource) []*Resource {
	seen := make(map[string]bool, len(in))
	out := make([]*Resource, 0, len(in))
	for _, r := range in {
		k := r.uniqueKey()
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, r)
	}
	return out
}

func (l *loader) values(path string) (*ValuesSpec, error) {
	return cachedFile(l, "values", "load values", path, ParseValues)
}

func (l *loader) userInfo(path string) (*UserInfo, error) {
	return cachedFile(l, "userinfo", "load user info", path, ParseUserInfo)
}

// cachedFile reads the file at path once per what (l.get) and parses it
// with parse; a read error is wrapped as "<action>: <error>".
func cachedFile[T any](l *loader, what, action, path string, parse func(path string, data []byte) (T, error)) (T, error) {
	return cached(l, what, path, func() (T, error) {
		data, err := l.readFile(path)
		if err != nil {
			var zero T
			return zero, fmt.Errorf("%s: %w", action, err)
		}
		return parse(path, data)
	})
}

// loadNamed is load(path) when path is set, the zero T otherwise.
func loadNamed[T any](path string, load func(string) (T, error)) (T, error) {
	if path == "" {
		var zero T
		return zero, nil
	}
	return load(path)
}

// cached is l.get for a load that returns a T.
func cached[T any](l *loader, what, path string, load func() (T, error)) (T, error) {
	v, err := l.get(what, path, func() (any, error) { return load() })
	if err != nil {
		var zero T
		return zero, err
	}
	return v.(T), nil
}

// errNotInManifest is Kyverno's "not found in manifest": an expected
// patched or generated resource file lacks the resource.
var errNotInManifest = errors.New("not found in manifest")

// findInManifest checks that a manifest file holds the resource with r's
// apiVersion, kind, namespace and name.
func (l *loader) findInManifest(path string, r *Resource) (*Resource, error) {
	rs, err := l.resourceFile(path)
	if err != nil {
		return nil, err
	}
	for _, c := range rs {
		if c.APIVersion == r.APIVersion && c.Kind == r.Kind && c.Namespace == r.Namespace && c.Name == r.Name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("resource with name %s %w", r.Name, errNotInManifest)
}

// Discover returns the test files named fileName under each path,
// recursively, hidden folders included, in lexical order. A path that is a
// file is returned as is. A file of that name that is not a regular file
// (a named pipe, a device, a socket) is skipped with a line on warnings
// (when not nil).
func Discover(paths []string, fileName string, warnings io.Writer) ([]string, error) {
	if fileName == "" {
		fileName = DefaultFileName
	}
	var out []string
	for _, root := range paths {
		fi, err := os.Stat(root)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, root)
			continue
		}
		var found []string
		err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || d.Name() != fileName {
				return nil
			}
			if !d.Type().IsRegular() {
				if _, err := safefile.Stat(p); err != nil {
					if warnings != nil {
						fmt.Fprintf(warnings, "warning: skipped %v\n", err)
					}
					return nil
				}
			}
			found = append(found, p)
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

// Sources of context entries.
const (
	srcConfigMap       = "configMap"
	srcAPICall         = "apiCall"
	srcImageRegistry   = "imageRegistry"
	srcGlobalReference = "globalReference"
	srcVariable        = "variable"
)

// contextEntries maps the names of the context entries of a policy, at
// any depth, to their source. A name used by a variable entry anywhere is
// recorded as a variable.
func contextEntries(doc *kyverno.Document) map[string]string {
	out := map[string]string{}
	add := func(entries []kyverno.ContextEntry) {
		for _, ce := range entries {
			src := srcVariable
			switch {
			case ce.ConfigMap != nil:
				src = srcConfigMap
			case ce.APICall != nil:
				src = srcAPICall
			case ce.ImageRegistry != nil:
				src = srcImageRegistry
			case ce.GlobalReference != nil:
				src = srcGlobalReference
			}
			if out[ce.Name] != srcVariable {
				out[ce.Name] = src
			}
		}
	}
	var validate func([]kyverno.ForEachValidation)
	validate = func(fs []kyverno.ForEachValidation) {
		for _, f := range fs {
			add(f.Context)
			validate(f.Foreach)
		}
	}
	var mutate func([]kyverno.ForEachMutation)
	mutate = func(fs []kyverno.ForEachMutation) {
		for _, f := range fs {
			add(f.Context)
			mutate(f.Foreach)
		}
	}
	for _, r := range doc.Spec.Rules {
		add(r.Context)
		if r.Validate != nil {
			validate(r.Validate.Foreach)
		}
		if r.Mutate != nil {
			mutate(r.Mutate.Foreach)
			for _, t := range r.Mutate.Targets {
				add(t.Context)
			}
		}
		if r.Generate != nil {
			for _, f := range r.Generate.Foreach {
				add(f.Context)
			}
		}
	}
	return out
}
