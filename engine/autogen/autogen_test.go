package autogen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/verdict-policy/verdict/engine/kyverno"
)

// The goldens in testdata/*.golden.json hold, for each policy
// testdata/<name>.yaml, the rules Kyverno v1.19.0's
// autogen.Default.ComputeRules(policy, kind) returns, keyed by kind ("" for
// all controllers). They were written by a small program built against
// Kyverno's module (not part of this repository): for each file, decode the
// ClusterPolicy with sigs.k8s.io/yaml, call ComputeRules for "", Pod,
// Deployment, CronJob and Job, and json.MarshalIndent the map.

func loadPolicy(t *testing.T, path string) *kyverno.Document {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := kyverno.DecodePolicies(path, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 {
		t.Fatalf("%s: %d policies, want 1", path, len(docs))
	}
	return docs[0]
}

// loadGolden decodes the golden rules of each kind through DecodePolicies.
func loadGolden(t *testing.T, path string) map[string][]kyverno.Rule {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	out := make(map[string][]kyverno.Rule)
	for kind, rules := range raw {
		doc := `{"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "golden"}, "spec": {"rules": ` + string(rules) + `}}`
		docs, err := kyverno.DecodePolicies(path, []byte(doc))
		if err != nil {
			t.Fatalf("%s: rules for %q: %v", path, kind, err)
		}
		out[kind] = normalize(docs[0].Spec.Rules)
	}
	return out
}

// normalize removes differences of representation only: Kyverno holds a
// match's resources, a clone and a cloneList by value, writes them as {}
// when empty and drops empty maps and lists when it writes JSON.
func normalize(rules []kyverno.Rule) []kyverno.Rule {
	for i := range rules {
		for _, m := range []*kyverno.MatchResources{&rules[i].Match, rules[i].Exclude} {
			if m == nil {
				continue
			}
			dropEmpty(&m.Resources)
			for j := range m.Any {
				dropEmpty(&m.Any[j].Resources)
			}
			for j := range m.All {
				dropEmpty(&m.All[j].Resources)
			}
		}
		for _, vi := range rules[i].VerifyImages {
			for k, v := range vi {
				if m, ok := v.(map[string]any); v == false || (ok && len(m) == 0) {
					delete(vi, k) // Kyverno writes its bools and structs without omitempty
				}
			}
		}
		if g := rules[i].Generate; g != nil {
			dropEmpty(&g.Clone)
			dropEmpty(&g.CloneList)
		}
	}
	return rules
}

func dropEmpty[T any](p **T) {
	var zero T
	if *p != nil && cmp.Equal(**p, zero, cmpopts.EquateEmpty()) {
		*p = nil
	}
}

func TestRulesMatchKyverno(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no test policies")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			doc := loadPolicy(t, file)
			golden := loadGolden(t, strings.TrimSuffix(file, ".yaml")+".golden.json")
			kinds := make([]string, 0, len(golden))
			for k := range golden {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			for _, kind := range kinds {
				got, err := RulesForKind(doc, kind)
				if err != nil {
					t.Fatalf("RulesForKind(%s, %q) error = %v", name, kind, err)
				}
				if diff := cmp.Diff(golden[kind], normalize(cloneRules(got)), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("RulesForKind(%s, %q) mismatch (-want +got):\n%s", name, kind, diff)
				}
			}
		})
	}
}

func cloneRules(rules []kyverno.Rule) []kyverno.Rule {
	out := make([]kyverno.Rule, len(rules))
	for i := range rules {
		out[i] = *deepCopy(&rules[i])
	}
	return out
}

func TestRuleNames(t *testing.T) {
	tests := []struct {
		name string
		give string // a policy in testdata
		want []string
	}{
		{name: "pod rule gets both controller rules", give: "docs-restrict-image-registries", want: []string{"validate-registries", "autogen-validate-registries", "autogen-cronjob-validate-registries"}},
		{name: "selector in any rule turns autogen off", give: "selector-disables-autogen", want: []string{"plain", "with-selector"}},
		{name: "names turn autogen off", give: "names-disable-autogen", want: []string{"r"}},
		{name: "empty annotations in exclude turn autogen off", give: "exclude-annotations-disables-autogen", want: []string{"validate-resources"}},
		{name: "annotation none", give: "annotation-none", want: []string{"r"}},
		{name: "annotation CronJob only", give: "annotation-cronjob-only", want: []string{"r", "autogen-cronjob-r"}},
		{name: "annotation without CronJob", give: "annotation-deployment-job", want: []string{"r", "autogen-r"}},
		{name: "Pod with another kind turns autogen off", give: "mixed-kinds", want: []string{"r"}},
		{name: "rules of other kinds stay as they are", give: "pod-and-deployment-rules", want: []string{"pods", "deployments", "autogen-pods", "autogen-cronjob-pods"}},
		{name: "v1/Pod alone does not need autogen", give: "gvk-only", want: []string{"versioned"}},
		{name: "generate turns autogen off", give: "generate-disables", want: []string{"validate", "gen"}},
		{name: "JSON patch in a foreach turns autogen off", give: "mutate-json6902", want: []string{"psm", "json"}},
		{name: "exclude of another kind skips the rule", give: "exclude-other-kind", want: []string{"r", "r2", "autogen-r2", "autogen-cronjob-r2"}},
		{name: "rules named autogen- are replaced", give: "existing-autogen-rule", want: []string{"check", "autogen-check", "autogen-cronjob-check"}},
		{name: "validate without an action gets no rule", give: "unsupported-actions", want: []string{"empty-validate", "pattern", "autogen-pattern", "autogen-cronjob-pattern"}},
		{
			name: "names are cut to 63 bytes", give: "deny-and-context",
			want: []string{
				"deny-host-path-changes-of-a-very-long-rule-name-that-goes-past-63",
				"autogen-deny-host-path-changes-of-a-very-long-rule-name-that-go",
				"autogen-cronjob-deny-host-path-changes-of-a-very-long-rule-name",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules, err := Rules(loadPolicy(t, "testdata/"+tt.give+".yaml"))
			if err != nil {
				t.Fatalf("Rules(%s) error = %v", tt.give, err)
			}
			var got []string
			for _, r := range rules {
				got = append(got, r.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Rules(%s) names mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

func TestControllers(t *testing.T) {
	tests := []struct {
		name string
		give string // a policy in testdata
		want []string
	}{
		{name: "default", give: "docs-restrict-image-registries", want: []string{"DaemonSet", "Deployment", "Job", "ReplicaSet", "ReplicationController", "StatefulSet", "CronJob"}},
		{name: "all", give: "annotation-all", want: []string{"DaemonSet", "Deployment", "Job", "ReplicaSet", "ReplicationController", "StatefulSet", "CronJob"}},
		{name: "none", give: "annotation-none"},
		{name: "autogen off", give: "selector-disables-autogen"},
		{name: "no rule qualifies", give: "gvk-only"},
		{name: "CronJob only", give: "annotation-cronjob-only", want: []string{"CronJob"}},
		{name: "list", give: "annotation-deployment-job", want: []string{"Deployment", "Job"}},
		{name: "custom kind", give: "annotation-custom-kind", want: []string{"CloneSet"}},
		{name: "known kinds win", give: "annotation-known-and-custom", want: []string{"StatefulSet", "CronJob"}},
		{name: "spaces", give: "annotation-spaces", want: []string{"Deployment", "CronJob"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Controllers(loadPolicy(t, "testdata/"+tt.give+".yaml"))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Controllers(%s) mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

func TestRulesDoNotChangeThePolicy(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		doc := loadPolicy(t, file)
		before := loadPolicy(t, file)
		rules, err := Rules(doc)
		if err != nil {
			t.Fatalf("Rules(%s) error = %v", file, err)
		}
		// Changing the generated rules must not reach the policy either.
		for i := range rules {
			if strings.HasPrefix(rules[i].Name, "autogen-") {
				scribble(reflect.ValueOf(&rules[i]).Elem())
			}
		}
		if diff := cmp.Diff(before, doc); diff != "" {
			t.Errorf("Rules(%s) changed the policy (-before +after):\n%s", file, diff)
		}
	}
}

// scribble overwrites every string reachable from v.
func scribble(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			if v.Kind() == reflect.Interface {
				switch x := v.Elem().Interface().(type) {
				case map[string]any:
					for k := range x {
						x[k] = "x"
					}
				case []any:
					for i := range x {
						x[i] = "x"
					}
				}
				return
			}
			scribble(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			scribble(v.Field(i))
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			scribble(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			if v.Type().Elem().Kind() == reflect.String {
				v.SetMapIndex(k, reflect.ValueOf("x"))
			}
		}
	}
}

func TestRulesNil(t *testing.T) {
	if got, err := Rules(nil); got != nil || err != nil {
		t.Errorf("Rules(nil) = %v, %v, want nil, nil", got, err)
	}
	if got := Controllers(nil); got != nil {
		t.Errorf("Controllers(nil) = %v, want nil", got)
	}
}
