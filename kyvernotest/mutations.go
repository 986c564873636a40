package kyvernotest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/mutate"
)

// This file holds what the test runner and apply need for mutate and
// generate rules: the cluster objects of a test (for mutate targets and
// clone sources), the objects each policy produced, and Kyverno's
// comparison of them with the test's patchedResources and
// generatedResource manifests.

// outputs is what one policy's mutate and generate rules produced for a
// resource.
type outputs struct {
	// patched is the resource after the policy's mutate rules (Kyverno's
	// PatchedResource of the policy's mutate response); final is the
	// resource after every mutation, which validation saw.
	patched, final map[string]any
	// generated are the resources each generate rule created or updated;
	// genFailed marks rules whose generation failed (Kyverno's CLI then
	// reports no generated resource).
	generated map[string][]map[string]any
	genFailed map[string]bool
	// targets are the patched targets of each mutate existing rule.
	targets map[string][]map[string]any
}

// outputsOf gathers the outputs of policy p from the engine's responses.
func outputsOf(p *Policy, res *Resource, evals []*eval.Response) *outputs {
	o := &outputs{final: res.Object, patched: res.Object}
	ns := p.Compiled.Namespace()
	for _, er := range evals {
		if er.Patched != nil {
			o.final = er.Patched
		}
		for _, m := range er.Mutations {
			if m.Policy == p.Name && m.PolicyNamespace == ns {
				o.patched = m.Object
			}
		}
		if p.Compiled.Mutating != nil && len(er.Mutations) > 0 {
			// Kyverno's CLI gives every MutatingPolicy's response the
			// resource after all of them (they run last).
			o.patched = er.Mutations[len(er.Mutations)-1].Object
		}
		for _, g := range er.Generated {
			if g.Policy != p.Name || g.PolicyNamespace != ns || g.Source || g.Action == eval.GenerateDelete {
				continue
			}
			if o.generated == nil {
				o.generated = map[string][]map[string]any{}
			}
			o.generated[g.Rule] = append(o.generated[g.Rule], g.Object)
		}
		for _, ge := range er.GenerateErrors {
			if ge.Policy == p.Name && ge.PolicyNamespace == ns {
				if o.genFailed == nil {
					o.genFailed = map[string]bool{}
				}
				o.genFailed[ge.Rule] = true
			}
		}
		for _, t := range er.Targets {
			if t.Policy == p.Name && t.PolicyNamespace == ns {
				if o.targets == nil {
					o.targets = map[string][]map[string]any{}
				}
				o.targets[t.Rule] = append(o.targets[t.Rule], t.Patched)
			}
		}
	}
	return o
}

// clusterObjects are the objects the engine's lookups find in a test: its
// resources, its targetResources and the cloneSourceResource files of its
// results. (Kyverno's CLI fetches mutate targets from the resources and
// targets, and clone sources from the clone source files and the trigger.)
func (r *runner) clusterObjects(t *Test, res []*Resource, full func(string) string) (objects, targets []*Resource, err error) {
	objects = append([]*Resource(nil), res...)
	for _, p := range dedupe(t.TargetResources) {
		rs, err := r.load.resources([]string{full(p)})
		if err != nil {
			return nil, nil, fmt.Errorf("load target resources: %w", err)
		}
		targets = append(targets, rs...)
	}
	objects = append(objects, targets...)
	var paths []string
	for _, e := range t.Results {
		if e.CloneSourceResource != "" {
			paths = append(paths, e.CloneSourceResource)
		}
	}
	for _, p := range dedupe(paths) {
		rs, err := r.load.resources([]string{full(p)})
		if err != nil {
			return nil, nil, err
		}
		objects = append(objects, rs...)
	}
	return objects, targets, nil
}

// namesTargets reports whether an expected result names one of the test's
// target resources.
func (s *suiteRun) namesTargets(e ExpectedResult) bool {
	for _, t := range s.targets {
		if namedBy(e, t) {
			return true
		}
	}
	return false
}

// namedBy reports whether an expected result names a resource, by name
// or namespace/name.
func namedBy(e ExpectedResult, r *Resource) bool {
	for _, name := range e.Resources {
		ns, n, ok := strings.Cut(name, "/")
		if !ok && name == r.Name || ok && ns == r.Namespace && n == r.Name {
			return true
		}
	}
	return false
}

// targetResults checks the target resources an expected result names (or
// every target when it names no resource), as kyverno test does: each
// patched version of a target, from any policy, is compared with the
// patchedResources manifest, then its status.
func (s *suiteRun) targetResults(testPath string, e ExpectedResult) []Result {
	if len(s.targets) == 0 {
		return nil
	}
	named := len(e.Resources) > 0 && s.namesTargets(e)
	if len(e.Resources) > 0 && !named {
		return nil
	}
	var out []Result
	for _, t := range s.targets {
		if named && !namedBy(e, t) {
			continue
		}
		for _, rr := range s.resources {
			for _, resp := range rr.responses[e.Operation] {
				if resp.out == nil {
					continue
				}
				for rule, objs := range resp.out.targets {
					for _, obj := range objs {
						p := identityOf(obj)
						if p.APIVersion != t.APIVersion || p.Kind != t.Kind || p.Namespace != t.Namespace || p.Name != t.Name {
							continue
						}
						res := Result{Test: testPath, Policy: e.Policy, Rule: rule, Resource: t.Display(), Expected: e.Result, Actual: "pass", ActualRule: rule}
						if bad, ok := s.compareManifests(e, obj); !ok {
							res.Reason, res.Message = bad.reason, bad.message
						} else if e.Result == "pass" {
							res.OK, res.Reason = true, ReasonOK
						} else {
							res.Reason = fmt.Sprintf("Want %s, got pass", e.Result)
						}
						out = append(out, res)
					}
				}
			}
		}
	}
	return out
}

// Resource implements eval.Lookup from the test's objects.
func (l *lookup) Resource(_ context.Context, apiVersion, kind, namespace, name string) (map[string]any, error) {
	for _, o := range l.objects {
		if (apiVersion == "" || o.APIVersion == apiVersion) && o.Kind == kind && o.Namespace == namespace && o.Name == name {
			return o.Object, nil
		}
	}
	return nil, fmt.Errorf("%s %s %s/%s: %w", apiVersion, kind, namespace, name, engine.ErrNotFound)
}

// Resources implements eval.Lookup from the test's objects.
func (l *lookup) Resources(_ context.Context, apiVersion, kind, namespace string, selector labels.Selector) ([]map[string]any, error) {
	var out []map[string]any
	for _, o := range l.objects {
		if apiVersion != "" && o.APIVersion != apiVersion || o.Kind != kind || namespace != "" && o.Namespace != namespace {
			continue
		}
		if selector != nil && !selector.Matches(labels.Set(kyverno.MetadataStrings(o.Object, "labels"))) {
			continue
		}
		out = append(out, o.Object)
	}
	return out, nil
}

// resultRows checks one rule result as kyverno test does: the resource the
// result is about (the policy's patched resource for a mutate rule, each
// generated resource for a generate rule, the validated resource
// otherwise) is compared with the test's patchedResources and
// generatedResource manifests, then the status. skipped reports a result
// dropped because a manifest lacks the resource (unless
// failOnMissingResources).
func (s *suiteRun) resultRows(e ExpectedResult, resp response, res *Resource, rr eval.RuleResult) ([]row, bool) {
	if resp.out == nil {
		resp.out = &outputs{patched: res.Object, final: res.Object}
	}
	if rr.Type == eval.RuleGeneration {
		gens := resp.out.generated[rr.Rule]
		if len(gens) == 0 || resp.out.genFailed[rr.Rule] {
			r, _ := s.row(e, resp.pol, res, rr)
			return []row{r}, false
		}
		var rows []row
		for _, g := range gens {
			if bad, ok := s.compareManifests(e, g); !ok {
				bad.rule, bad.actual = rr.Rule, string(rr.Status)
				rows = append(rows, bad)
				continue
			}
			r, _ := s.row(e, resp.pol, res, rr)
			rows = append(rows, r)
		}
		return rows, false
	}
	obj := resp.out.final
	if rr.Type == eval.RuleMutation {
		obj = resp.out.patched
	}
	if bad, ok := s.compareManifests(e, obj); !ok {
		if !e.FailOnMissingResources && strings.Contains(bad.message, "not found in manifest") {
			return nil, true
		}
		bad.rule, bad.actual = rr.Rule, string(rr.Status)
		return []row{bad}, false
	}
	r, skipped := s.row(e, resp.pol, res, rr)
	if skipped {
		return nil, true
	}
	return []row{r}, false
}

// compareManifests compares obj with the expected result's
// patchedResources and generatedResource(s) manifests, as Kyverno's
// checkResult does. It returns false with the failing row.
func (s *suiteRun) compareManifests(e ExpectedResult, obj map[string]any) (row, bool) {
	if e.PatchedResources != "" {
		if r, ok := s.compareWith(e.PatchedResources, obj, "PatchedResources", "Patched resource didn't match the patched resource in the test result"); !ok {
			return r, false
		}
	}
	switch {
	case e.GeneratedResource != "" && len(e.GeneratedResources) == 0:
		if r, ok := s.compareWith(e.GeneratedResource, obj, "GeneratedResource", "Patched resource didn't match the generated resource in the test result"); !ok {
			return r, false
		}
	case len(e.GeneratedResources) > 0:
		var last row
		for _, f := range e.GeneratedResources {
			r, ok := s.compareWith(f, obj, "GeneratedResources", "Generated resource didn't match any of the expected generated resources in the test result")
			if ok {
				return row{}, true
			}
			last = r
		}
		return last, false
	}
	return row{}, true
}

func (s *suiteRun) compareWith(file string, obj map[string]any, what, mismatch string) (row, bool) {
	expected, err := s.r.load.findInManifest(s.full(file), identityOf(obj))
	if err != nil {
		return row{reason: "Resource error: " + err.Error(), message: fmt.Sprintf("error: failed to load %s resource (%s)", what, err)}, false
	}
	if diff := CompareResources(obj, expected.Object); diff != "" {
		return row{reason: "Resource diff", message: mismatch + "\n" + diff}, false
	}
	return row{}, true
}

// CompareResources compares an actual resource with an expected one as
// kyverno test does (resource.Compare with tidying, after
// FixupGenerateLabels): null values, empty maps and empty lists are
// ignored, the generate.kyverno.io/* labels are dropped and
// app.kubernetes.io/managed-by: kyverno is assumed on both, and numbers
// compare by value. It returns "" when they are equal, otherwise the JSON
// Patch that turns expected into actual, one operation per line.
func CompareResources(actual, expected map[string]any) string {
	a := tidy(fixupGenerateLabels(actual))
	b := tidy(fixupGenerateLabels(expected))
	if mutate.Equal(a, b) {
		return ""
	}
	ops := mutate.Diff(b, a)
	lines := make([]string, 0, len(ops))
	for _, op := range ops {
		data, err := json.Marshal(op)
		if err != nil {
			continue
		}
		lines = append(lines, string(data))
	}
	sort.Strings(lines)
	return "(-expected +actual as a JSON Patch)\n" + strings.Join(lines, "\n")
}

// fixupGenerateLabels is Kyverno's FixupGenerateLabels, on a copy.
func fixupGenerateLabels(obj map[string]any) any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	meta, _ := obj["metadata"].(map[string]any)
	m := make(map[string]any, len(meta)+1)
	for k, v := range meta {
		m[k] = v
	}
	ls := map[string]any{"app.kubernetes.io/managed-by": "kyverno"}
	if old, ok := meta["labels"].(map[string]any); ok {
		for k, v := range old {
			if !strings.HasPrefix(k, "generate.kyverno.io/") {
				ls[k] = v
			}
		}
	}
	m["labels"] = ls
	out["metadata"] = m
	return out
}

// tidy is Kyverno's resource.Tidy: it drops nulls, empty maps and empty
// lists, recursively.
func tidy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, v := range t {
			if v = tidy(v); v != nil {
				out[k] = v
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		var out []any
		for _, v := range t {
			if v = tidy(v); v != nil {
				out = append(out, v)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	return v
}

// identityOf describes obj as the loader would (a namespaced kind without
// a namespace is in "default"), without changing it.
func identityOf(obj map[string]any) *Resource {
	r := &Resource{Object: obj}
	r.setType(obj)
	meta, _ := obj["metadata"].(map[string]any)
	r.setName(meta)
	return r
}

// chainObject makes the object a policy sees the one the policies before
// it mutated, when the policies are evaluated one by one (per-policy
// values). Validation then sees the mutations of the policies before it
// only, where Kyverno's sees those of every policy.
func chainObject(req *eval.Request, obj map[string]any) *eval.Request {
	if req.Object != nil {
		req.Object = obj
	}
	return req
}
