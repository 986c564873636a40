package eval_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/verdict-policy/verdict/engine/eval"
)

// caseOutputs are the fields of a case about mutate and generate rules.
type caseOutputs struct {
	// Cluster are the objects the Lookup serves to mutate targets and
	// generate rules (clone sources, existing resources).
	Cluster []map[string]any `json:"cluster,omitempty"`
	// WantPatched is the object after the mutate rules; WantPatch the JSON
	// Patch from the object to it; WantNoPatch says nothing changed.
	// WantGenerated are the generate intents and WantTargets the patched
	// mutate targets, in order. All compare decoded, never as bytes.
	WantPatched   map[string]any   `json:"want_patched,omitempty"`
	WantPatch     []any            `json:"want_patch,omitempty"`
	WantNoPatch   bool             `json:"want_no_patch,omitempty"`
	WantGenerated []caseGenerated  `json:"want_generated,omitempty"`
	WantTargets   []map[string]any `json:"want_targets,omitempty"`
}

// caseGenerated is one expected generate intent.
type caseGenerated struct {
	Rule   string         `json:"rule"`
	Action string         `json:"action"`
	Object map[string]any `json:"object"`
	Source bool           `json:"source,omitempty"`
}

func (m mapLookup) Resource(_ context.Context, apiVersion, kind, namespace, name string) (map[string]any, error) {
	for _, o := range m.cluster {
		meta, _ := o["metadata"].(map[string]any)
		ns, _ := meta["namespace"].(string)
		if o["apiVersion"] == apiVersion && o["kind"] == kind && meta["name"] == name && ns == namespace {
			return o, nil
		}
	}
	return nil, eval.ErrNotFound
}

func (m mapLookup) Resources(_ context.Context, apiVersion, kind, namespace string, selector labels.Selector) ([]map[string]any, error) {
	var out []map[string]any
	for _, o := range m.cluster {
		meta, _ := o["metadata"].(map[string]any)
		if apiVersion != "" && o["apiVersion"] != apiVersion || o["kind"] != kind || namespace != "" && meta["namespace"] != namespace {
			continue
		}
		ls := labels.Set{}
		if l, ok := meta["labels"].(map[string]any); ok {
			for k, v := range l {
				ls[k], _ = v.(string)
			}
		}
		if selector.Matches(ls) {
			out = append(out, o)
		}
	}
	return out, nil
}

// checkOutputs compares the patched object, the JSON Patch, the generate
// intents and the mutate targets of a case with its expectations, decoded.
func checkOutputs(t *testing.T, tc testCase, resp *eval.Response) {
	t.Helper()
	if tc.WantPatched != nil {
		if diff := cmp.Diff(normalize(t, tc.WantPatched), normalize(t, resp.Patched)); diff != "" {
			t.Errorf("Evaluate(%s).Patched mismatch (-want +got):\n%s", tc.Note, diff)
		}
	}
	if tc.WantNoPatch && (resp.Patched != nil || resp.Patch != nil) {
		t.Errorf("Evaluate(%s).Patch = %s, want none", tc.Note, resp.Patch)
	}
	if tc.WantPatch != nil {
		var got any
		if err := json.Unmarshal(resp.Patch, &got); err != nil {
			t.Fatalf("Evaluate(%s).Patch = %q: %v", tc.Note, resp.Patch, err)
		}
		if diff := cmp.Diff(normalize(t, tc.WantPatch), got); diff != "" {
			t.Errorf("Evaluate(%s).Patch mismatch (-want +got):\n%s", tc.Note, diff)
		}
	}
	if tc.WantGenerated != nil {
		var got []caseGenerated
		for _, g := range resp.Generated {
			got = append(got, caseGenerated{Rule: g.Rule, Action: string(g.Action), Object: g.Object, Source: g.Source})
		}
		if len(tc.WantGenerated) == 0 && len(got) == 0 {
			got = tc.WantGenerated
		}
		if diff := cmp.Diff(normalize(t, tc.WantGenerated), normalize(t, got)); diff != "" {
			t.Errorf("Evaluate(%s).Generated mismatch (-want +got):\n%s", tc.Note, diff)
		}
	}
	if tc.WantTargets != nil {
		var got []map[string]any
		for _, tp := range resp.Targets {
			got = append(got, tp.Patched)
		}
		if len(tc.WantTargets) == 0 && len(got) == 0 {
			got = tc.WantTargets
		}
		if diff := cmp.Diff(normalize(t, tc.WantTargets), normalize(t, got)); diff != "" {
			t.Errorf("Evaluate(%s).Targets mismatch (-want +got):\n%s", tc.Note, diff)
		}
	}
}

// normalize decodes the JSON encoding of v, so that values built by the
// engine and values read from YAML compare equal.
func normalize(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("normalize: %v", err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("normalize: %v", err)
	}
	return out
}
