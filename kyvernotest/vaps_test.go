package kyvernotest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/match"
	"github.com/verdict-policy/verdict/internal/policyreport"
)

// TestRunValidatingAdmissionPolicies runs testdata/vap/vap-test.yaml:
// bindings in the policy file (one with matchResources, one without,
// which Kyverno's CLI applies beyond the policy's own matchConstraints),
// params from paramResources by selector (a list), namespaceObject from
// the values file, the requester from the userinfo file, and an expected
// rule that is ignored. Kyverno v1.19.0's CLI passes the same file.
func TestRunValidatingAdmissionPolicies(t *testing.T) {
	rep, err := Run(context.Background(), []string{"testdata/vap"}, Options{FileName: "vap-test.yaml"})
	if err != nil {
		t.Fatalf("Run(testdata/vap) error = %v", err)
	}
	var got []string
	for _, s := range rep.Suites {
		if s.Err != nil {
			t.Fatalf("Run(testdata/vap) suite error = %v", s.Err)
		}
		for _, r := range s.Results {
			got = append(got, r.Policy+" "+summarize(r)+" | "+r.Message)
		}
	}
	want := []string{
		"replicas-limit apps/v1/Deployment/prod/web-small replicas-limit: pass -> pass ok Ok | ",
		"replicas-limit apps/v1/Deployment/prod/web-big replicas-limit: fail -> fail ok Ok | at most 5,3 replicas",
		"replicas-limit apps/v1/Deployment/dev/batch : skip ->  ok Excluded | Excluded",
		"namespace-team apps/v1/Deployment/prod/web-small namespace-team: pass -> pass ok Ok | ",
		"namespace-team apps/v1/Deployment/dev/batch namespace-team: fail -> fail ok Ok | the namespace must belong to team a",
		"deploy-replicas apps/v1/Deployment/prod/web-big deploy-replicas: fail -> fail ok Ok | failed expression: object.spec.replicas <= 3",
		"deploy-replicas v1/Pod/prod/pod-1 deploy-replicas: error -> error ok Ok | expression 'object.spec.replicas <= 3' resulted in error: no such key: replicas",
		"known-user v1/Pod/prod/pod-1 known-user: pass -> pass ok Ok | ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Run(testdata/vap) mismatch (-want +got):\n%s", diff)
	}
}

// TestApplyValidatingAdmissionPolicies applies testdata/vap as kyverno
// apply v1.19.0 does (the same output and counts): the Deployment outside
// every binding of replicas-limit gives no result, and --policy-report
// writes the results with source ValidatingAdmissionPolicy and their
// binding.
func TestApplyValidatingAdmissionPolicies(t *testing.T) {
	res, err := Apply(context.Background(), ApplyOptions{
		PolicyPaths:   []string{"testdata/vap/policies.yaml"},
		ResourcePaths: []string{"testdata/vap/resources.yaml"},
		ParamPaths:    []string{"testdata/vap/params.yaml"},
		ValuesFile:    "testdata/vap/values.yaml",
		UserInfoFile:  "testdata/vap/userinfo.yaml",
	})
	if err != nil {
		t.Fatalf("Apply(testdata/vap) error = %v", err)
	}
	var out bytes.Buffer
	if err := WriteApplyText(&out, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Applying 4 policy rule(s) to 4 resource(s)...",
		"policy replicas-limit -> resource prod/Deployment/web-big failed:\n1 - replicas-limit at most 5,3 replicas\n",
		"pass: 6, fail: 3, warn: 0, error: 1, skip: 0",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("Apply(testdata/vap) output lacks %q:\n%s", want, out.String())
		}
	}
	var found bool
	for _, rep := range res.Reports() {
		for _, r := range rep.Results {
			if r.Policy != "replicas-limit" || r.Resources[0].Name != "web-big" {
				continue
			}
			found = true
			want := policyreport.Result{Source: "ValidatingAdmissionPolicy", Policy: "replicas-limit", Rule: "replicas-limit", Result: "fail", Scored: true,
				Message: "at most 5,3 replicas", Properties: map[string]string{"binding": "limit-web", "process": "background scan"}}
			r.Resources, r.Timestamp = nil, policyreport.Timestamp{}
			if diff := cmp.Diff(want, r); diff != "" {
				t.Errorf("Apply(testdata/vap) report result (-want +got):\n%s", diff)
			}
		}
	}
	if !found {
		t.Errorf("Apply(testdata/vap) report has no result of replicas-limit for web-big")
	}
}

// TestRunValidatingAdmissionPolicyErrors checks what stops a test, as in
// Kyverno's CLI: kyverno.io PolicyExceptions with a
// ValidatingAdmissionPolicy, a binding that does not compile; and that a
// policy that does not compile is an invalid policy naming the field.
func TestRunValidatingAdmissionPolicyErrors(t *testing.T) {
	pol, err := os.ReadFile("testdata/vap/policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		giveFiles map[string]string
		wantErr   string
		wantRow   string
	}{
		{
			name: "kyverno.io exceptions",
			giveFiles: map[string]string{
				"policies.yaml":   string(pol),
				"exceptions.yaml": "apiVersion: kyverno.io/v2\nkind: PolicyException\nmetadata: {name: e, namespace: prod}\nspec:\n  exceptions: [{policyName: p, ruleNames: [r]}]\n  match: {any: [{resources: {kinds: [Pod]}}]}\n",
				"kyverno-test.yaml": "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\npolicies: [policies.yaml]\nresources: [resources.yaml]\nexceptions: [exceptions.yaml]\n" +
					"results:\n- {isValidatingAdmissionPolicy: true, policy: known-user, resources: [pod-1], kind: Pod, result: pass}\n",
			},
			wantErr: errVAPExceptions.Error(),
		},
		{
			name: "binding does not compile",
			giveFiles: map[string]string{
				"policies.yaml": string(pol) + "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: bad}\nspec: {validationActions: [Deny]}\n",
				"kyverno-test.yaml": "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\npolicies: [policies.yaml]\nresources: [resources.yaml]\n" +
					"results:\n- {isValidatingAdmissionPolicy: true, policy: known-user, resources: [pod-1], kind: Pod, result: pass}\n",
			},
			wantErr: "spec.policyName",
		},
		{
			name: "policy does not compile",
			giveFiles: map[string]string{
				"policies.yaml": "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: broken}\nspec:\n  matchConstraints:\n    resourceRules:\n    - {apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE], resources: [pods]}\n  validations:\n  - expression: \"'not a bool'\"\n",
				"kyverno-test.yaml": "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\npolicies: [policies.yaml]\nresources: [resources.yaml]\n" +
					"results:\n- {isValidatingAdmissionPolicy: true, policy: broken, resources: [pod-1], kind: Pod, result: pass}\n",
			},
			wantRow: "Invalid Policy: compile ValidatingAdmissionPolicy \"broken\": spec.validations[0].expression: must evaluate to bool but got string",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			res, err := os.ReadFile("testdata/vap/resources.yaml")
			if err != nil {
				t.Fatal(err)
			}
			tt.giveFiles["resources.yaml"] = string(res)
			for name, data := range tt.giveFiles {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := Run(context.Background(), []string{dir}, Options{})
			if err != nil {
				t.Fatalf("Run(%s) error = %v", tt.name, err)
			}
			s := rep.Suites[0]
			if tt.wantErr != "" {
				if s.Err == nil || !strings.Contains(s.Err.Error(), tt.wantErr) {
					t.Errorf("Run(%s) suite error = %v, want one with %q", tt.name, s.Err, tt.wantErr)
				}
				return
			}
			if s.Err != nil {
				t.Fatalf("Run(%s) suite error = %v", tt.name, errors.Unwrap(s.Err))
			}
			if len(s.Results) != 1 || s.Results[0].OK || s.Results[0].Reason != tt.wantRow {
				t.Errorf("Run(%s) = %+v, want one failed row %q", tt.name, s.Results, tt.wantRow)
			}
		})
	}
}

// TestBindingParams finds the params of bindings as Kyverno's CLI does
// (matchesSelector): whatever their kind; by selector, every match; by
// name, the first match, its namespace not compared; by namespace only,
// the first in it.
func TestBindingParams(t *testing.T) {
	obj := func(kind, ns, name string, labels map[string]any) *Resource {
		md := map[string]any{"name": name, "labels": labels}
		if ns != "" {
			md["namespace"] = ns
		}
		return newResource("params.yaml", 1, map[string]any{"apiVersion": "v1", "kind": kind, "metadata": md})
	}
	l := &lookup{params: []*Resource{
		obj("ConfigMap", "team", "limits", map[string]any{"tier": "gold"}),
		obj("Secret", "", "limits", map[string]any{"tier": "gold"}),
		obj("ConfigMap", "team", "other", map[string]any{"tier": "silver"}),
	}}
	gold, err := match.CompileSelector(&kyverno.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}, "selector")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		give eval.ParamQuery
		want []string
	}{
		{name: "selector", give: eval.ParamQuery{Selector: gold, Name: "other"}, want: []string{"ConfigMap team/limits", "Secret default/limits"}},
		{name: "name", give: eval.ParamQuery{Name: "limits", Namespace: "elsewhere"}, want: []string{"ConfigMap team/limits"}},
		{name: "namespace", give: eval.ParamQuery{Namespace: "team"}, want: []string{"ConfigMap team/limits"}},
		{name: "neither", give: eval.ParamQuery{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.give.Binding, tt.give.APIVersion, tt.give.Kind = "b", "v1", "ConfigMap"
			objs, err := l.Params(context.Background(), tt.give)
			if err != nil {
				t.Fatalf("Params(%s) error = %v", tt.name, err)
			}
			var got []string
			for _, o := range objs {
				md := o["metadata"].(map[string]any)
				got = append(got, fmt.Sprintf("%s %s/%s", o["kind"], md["namespace"], md["name"]))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Params(%s) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}
