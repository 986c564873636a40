package kyvernotest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/generate"
)

func TestWriteMutated(t *testing.T) {
	res, err := Apply(context.Background(), ApplyOptions{
		PolicyPaths:   []string{"testdata/mutate/add-owner.yaml"},
		ResourcePaths: []string{"testdata/mutate/configmap.yaml"},
		Parallelism:   1,
	})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteMutated(&b, res); err != nil {
		t.Fatal(err)
	}
	want := "\npolicy add-owner applied to default/ConfigMap/settings:\n" +
		"apiVersion: v1\ndata:\n    key: value\nkind: ConfigMap\nmetadata:\n    labels:\n        owner: platform\n    name: settings\n    namespace: default\n" +
		"\n---\n\n\nMutation:\nMutation has been applied successfully."
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("WriteMutated() mismatch (-want +got):\n%s", diff)
	}

	dir := t.TempDir()
	if err := WriteMutatedTo(filepath.Join(dir, "out"), res); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "out", "settings-mutated.yaml"))
	if err != nil {
		t.Fatalf("WriteMutatedTo(folder) wrote no settings-mutated.yaml: %v", err)
	}
	if !strings.Contains(string(data), "owner: platform") || !strings.HasSuffix(string(data), "\n---\n\n") {
		t.Errorf("WriteMutatedTo(folder) = %q, want the patched ConfigMap as a YAML document", data)
	}
	file := filepath.Join(dir, "mutated.yaml")
	if err := WriteMutatedTo(file, res); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(file); !bytes.Equal(got, data) {
		t.Errorf("WriteMutatedTo(file) = %q, want %q", got, data)
	}
}

// TestApplyGenerateExisting is the dry run of a generateExisting policy:
// apply lists what it would create for the given (existing) resources,
// with the label that selects everything generateExisting created.
func TestApplyGenerateExisting(t *testing.T) {
	res, err := Apply(context.Background(), ApplyOptions{
		PolicyPaths:   []string{"testdata/generate/netpol.yaml"},
		ResourcePaths: []string{"testdata/generate/namespaces.yaml"},
		Parallelism:   1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Counts{Pass: 2}, res.Counts); diff != "" {
		t.Errorf("Apply() counts mismatch (-want +got):\n%s", diff)
	}
	type gen struct {
		Namespace, Name string
		Action          eval.GenerateAction
		Labels          map[string]any
	}
	var got []gen
	for _, o := range res.Outputs {
		for _, g := range o.Generated {
			meta := g.Object["metadata"].(map[string]any)
			got = append(got, gen{meta["namespace"].(string), meta["name"].(string), g.Action, meta["labels"].(map[string]any)})
		}
	}
	labels := func(ns string) map[string]any {
		return map[string]any{
			generate.LabelBackgroundRule:  "default-deny",
			generate.LabelManagedBy:       "kyverno",
			generate.LabelPolicyName:      "default-deny",
			generate.LabelPolicyNamespace: "",
			generate.LabelRuleName:        "default-deny",
			generate.LabelTriggerGroup:    "",
			generate.LabelTriggerVersion:  "v1",
			generate.LabelTriggerKind:     "Namespace",
			generate.LabelTriggerNS:       "",
			generate.LabelTriggerUID:      "3f1c-" + ns,
		}
	}
	want := []gen{
		{"team-a", "default-deny", eval.GenerateCreate, labels("a")},
		{"team-b", "default-deny", eval.GenerateCreate, labels("b")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Apply() generated mismatch (-want +got):\n%s", diff)
	}
	var b bytes.Buffer
	if err := WriteMutated(&b, res); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "kyverno.io/background-gen-rule: default-deny"); n != 2 {
		t.Errorf("WriteMutated() shows the background label %d times, want 2:\n%s", n, b.String())
	}
}

// TestRunTargetResources checks a kyverno test of a mutate existing rule:
// the result names the target, whose patched version is compared with the
// patchedResources manifest.
func TestRunTargetResources(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"policy.yaml": `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: refresh}
spec:
  rules:
  - name: refresh
    match: {any: [{resources: {kinds: [ConfigMap], names: [trigger]}}]}
    mutate:
      targets:
      - {apiVersion: v1, kind: Secret, namespace: apps, name: token}
      patchStrategicMerge:
        metadata:
          annotations: {refreshed-by: "{{ request.object.metadata.name }}"}
`,
		"trigger.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: trigger, namespace: apps}\n",
		"target.yaml":  "apiVersion: v1\nkind: Secret\nmetadata: {name: token, namespace: apps}\ntype: Opaque\n",
		"patched.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: token, namespace: apps, annotations: {refreshed-by: trigger}}\ntype: Opaque\n",
		"wrong.yaml":   "apiVersion: v1\nkind: Secret\nmetadata: {name: token, namespace: apps, annotations: {refreshed-by: other}}\ntype: Opaque\n",
		"kyverno-test.yaml": `apiVersion: cli.kyverno.io/v1alpha1
kind: Test
metadata: {name: targets}
policies: [policy.yaml]
resources: [trigger.yaml]
targetResources: [target.yaml]
results:
- {policy: refresh, rule: refresh, resources: [token], patchedResources: patched.yaml, result: pass}
- {policy: refresh, rule: refresh, resources: [apps/token], patchedResources: wrong.yaml, result: pass}
`,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := RunFiles(context.Background(), []string{filepath.Join(dir, "kyverno-test.yaml")}, Options{Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rep.Results() {
		got = append(got, r.Resource+" "+r.Reason)
	}
	want := []string{"v1/Secret/apps/token Ok", "v1/Secret/apps/token Resource diff"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RunFiles(targets) mismatch (-want +got):\n%s", diff)
	}
}
