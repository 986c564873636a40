package kyvernotest

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/verdict-policy/verdict/internal/policyreport"
	"sigs.k8s.io/yaml"
)

func TestApply(t *testing.T) {
	tests := []struct {
		name          string
		give          ApplyOptions
		wantRuleCount int
		wantCounts    Counts
		wantFailLine  string
	}{
		{
			name: "validate policy, autogen rules counted",
			give: ApplyOptions{
				PolicyPaths:   []string{"testdata/validate/require-team-label.yaml"},
				ResourcePaths: []string{"testdata/validate/.kyverno-test/resources.yaml"},
			},
			wantRuleCount: 3,
			wantCounts:    Counts{Pass: 2, Fail: 1},
			wantFailLine:  "policy require-team-label -> resource shop/Pod/bad-pod failed:",
		},
		{
			name: "imageRegistry context entry without registry access: undefined, as in kyverno apply",
			give: ApplyOptions{
				PolicyPaths:   []string{"testdata/imageregistry/image-user.yaml"},
				ResourcePaths: []string{"testdata/imageregistry/pod.yaml"},
			},
			wantRuleCount: 3,
			wantCounts:    Counts{Pass: 1},
		},
		{
			name: "values, user info and audit-warn",
			give: ApplyOptions{
				PolicyPaths:   []string{"testdata/values/allowed-image.yaml"},
				ResourcePaths: []string{"testdata/values/.kyverno-test/pods.yaml"},
				ValuesFile:    "testdata/values/.kyverno-test/values.yaml",
				UserInfoFile:  "testdata/values/.kyverno-test/userinfo.yaml",
				AuditWarn:     true,
			},
			wantRuleCount: 6,
			wantCounts:    Counts{Pass: 4, Warn: 1, Skip: 1},
			wantFailLine:  "policy allowed-image -> resource prod/Pod/pod-bad failed as audit warning:",
		},
		{
			name: "set overrides the operation: every check-image rule is skipped",
			give: ApplyOptions{
				PolicyPaths:   []string{"testdata/values/allowed-image.yaml"},
				ResourcePaths: []string{"testdata/values/.kyverno-test/pods.yaml"},
				ValuesFile:    "testdata/values/.kyverno-test/values.yaml",
				UserInfoFile:  "testdata/values/.kyverno-test/userinfo.yaml",
				Set:           []string{"request.operation=UPDATE"},
			},
			wantRuleCount: 6,
			wantCounts:    Counts{Pass: 3, Skip: 3},
		},
		{
			name: "a mutate rule that applies passes",
			give: ApplyOptions{
				PolicyPaths:   []string{"testdata/mutate"},
				ResourcePaths: []string{"testdata/mutate/configmap.yaml"},
				Parallelism:   1,
			},
			wantRuleCount: 1,
			wantCounts:    Counts{Pass: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Apply(context.Background(), tt.give)
			if err != nil {
				t.Fatalf("Apply(%+v) error = %v", tt.give, err)
			}
			if got.RuleCount != tt.wantRuleCount {
				t.Errorf("Apply(%+v) RuleCount = %d, want %d", tt.give, got.RuleCount, tt.wantRuleCount)
			}
			if diff := cmp.Diff(tt.wantCounts, got.Counts); diff != "" {
				t.Errorf("Apply(%+v) counts mismatch (-want +got):\n%s", tt.give, diff)
			}
			var buf bytes.Buffer
			if err := WriteApplyText(&buf, got); err != nil {
				t.Fatalf("WriteApplyText() error = %v", err)
			}
			text := buf.String()
			if tt.wantFailLine != "" && !strings.Contains(text, tt.wantFailLine+"\n1 - ") {
				t.Errorf("WriteApplyText() = %q, want it to contain %q and a numbered rule", text, tt.wantFailLine)
			}
			c := tt.wantCounts
			last := strings.TrimRight(text, "\n")
			last = last[strings.LastIndex(last, "\n")+1:]
			if want := "pass: " + itoa(c.Pass) + ", fail: " + itoa(c.Fail) + ", warn: " + itoa(c.Warn) + ", error: " + itoa(c.Error) + ", skip: " + itoa(c.Skip) + " "; last != want {
				t.Errorf("WriteApplyText() last line = %q, want %q", last, want)
			}
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestApplyErrors(t *testing.T) {
	tests := []struct {
		name string
		give ApplyOptions
	}{
		{name: "missing policy", give: ApplyOptions{PolicyPaths: []string{"testdata/nope.yaml"}, ResourcePaths: []string{"testdata/mutate/configmap.yaml"}}},
		{name: "missing resource", give: ApplyOptions{PolicyPaths: []string{"testdata/mutate"}, ResourcePaths: []string{"testdata/nope.yaml"}}},
		{name: "missing values", give: ApplyOptions{PolicyPaths: []string{"testdata/mutate"}, ResourcePaths: []string{"testdata/mutate"}, ValuesFile: "nope.yaml"}},
		{name: "missing user info", give: ApplyOptions{PolicyPaths: []string{"testdata/mutate"}, ResourcePaths: []string{"testdata/mutate"}, UserInfoFile: "nope.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Apply(context.Background(), tt.give); err == nil {
				t.Errorf("Apply(%+v) error = nil, want an error", tt.give)
			}
		})
	}
}

func TestApplyReports(t *testing.T) {
	now := time.Unix(1700000000, 0)
	res, err := Apply(context.Background(), ApplyOptions{
		PolicyPaths:   []string{"testdata/validate/require-team-label.yaml", "testdata/namespaced/no-latest.yaml"},
		ResourcePaths: []string{"testdata/validate/.kyverno-test/resources.yaml", "testdata/namespaced/pods.yaml"},
		Now:           func() time.Time { return now },
	})
	if err != nil {
		t.Fatalf("Apply() error = %v", err)
	}
	ref := func(apiVersion, kind, ns, name string) []policyreport.ObjectReference {
		return []policyreport.ObjectReference{{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name}}
	}
	result := func(policy, rule, status, ns, name string) policyreport.Result {
		r := policyreport.Result{Source: "kyverno", Policy: policy, Rule: rule, Result: status, Scored: true,
			Properties: map[string]string{"process": "background scan"}, Resources: ref("v1", "Pod", ns, name),
			Timestamp: policyreport.Timestamp{Seconds: now.Unix()}}
		if policy == "require-team-label" {
			r.Category, r.Severity = "Best Practices", "medium"
		}
		return r
	}
	deploy := result("require-team-label", "autogen-check-team", "pass", "default", "good-deploy")
	deploy.Resources = ref("apps/v1", "Deployment", "default", "good-deploy")
	want := []policyreport.PolicyReport{
		{
			APIVersion: "openreports.io/v1alpha1", Kind: "ClusterReport", Metadata: policyreport.Metadata{Name: "merged"},
			Results: []policyreport.Result{
				result("require-team-label", "check-team", "pass", "default", "good-pod"),
				result("require-team-label", "check-team", "fail", "shop", "bad-pod"),
				deploy,
				result("require-team-label", "check-team", "fail", "team-a", "latest"),
				result("require-team-label", "check-team", "fail", "team-b", "latest"),
				result("require-team-label", "check-team", "fail", "team-a", "pinned"),
			},
			Summary: policyreport.Summary{Pass: 2, Fail: 4},
		},
		{
			// Kyverno 1.19's CLI: the openreports.io apiVersion with the
			// kind PolicyReport for a namespaced Policy, one report per
			// resource (per engine response).
			APIVersion: "openreports.io/v1alpha1", Kind: "PolicyReport", Metadata: policyreport.Metadata{Name: "no-latest", Namespace: "team-a"},
			Results: []policyreport.Result{
				result("team-a/no-latest", "no-latest-tag", "fail", "team-a", "latest"),
			},
			Summary: policyreport.Summary{Fail: 1},
		},
		{
			APIVersion: "openreports.io/v1alpha1", Kind: "PolicyReport", Metadata: policyreport.Metadata{Name: "no-latest", Namespace: "team-a"},
			Results: []policyreport.Result{
				result("team-a/no-latest", "no-latest-tag", "pass", "team-a", "pinned"),
			},
			Summary: policyreport.Summary{Pass: 1},
		},
	}
	got := res.Reports()
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(policyreport.Result{}, "Message")); diff != "" {
		t.Errorf("Reports() mismatch (-want +got):\n%s", diff)
	}

	for _, format := range []string{"yaml", "json"} {
		var buf bytes.Buffer
		if err := WriteReports(&buf, got, format); err != nil {
			t.Fatalf("WriteReports(%s) error = %v", format, err)
		}
		var want, decoded []policyreport.OpenReport
		for i := range got {
			want = append(want, got[i].Open())
		}
		for _, doc := range splitReports(buf.String(), format) {
			var r policyreport.OpenReport
			if err := yaml.UnmarshalStrict([]byte(doc), &r); err != nil {
				t.Fatalf("WriteReports(%s) wrote %q: %v", format, doc, err)
			}
			decoded = append(decoded, r)
		}
		if diff := cmp.Diff(want, decoded); diff != "" {
			t.Errorf("WriteReports(%s) round trip mismatch (-want +got):\n%s", format, diff)
		}
	}
}

func splitReports(s, format string) []string {
	var out []string
	for _, d := range strings.Split(strings.TrimSpace(s), "\n---\n") {
		if format == "json" {
			for _, line := range strings.Split(d, "\n") {
				if strings.TrimSpace(line) != "" {
					out = append(out, line)
				}
			}
			continue
		}
		if strings.TrimSpace(d) != "" {
			out = append(out, d)
		}
	}
	return out
}

func TestWriteReportsYAMLEdgeValues(t *testing.T) {
	give := []policyreport.PolicyReport{{
		APIVersion: "wgpolicyk8s.io/v1alpha2", Kind: "ClusterPolicyReport", Metadata: policyreport.Metadata{Name: "merged"},
		Results: []policyreport.Result{{
			Source: "kyverno", Policy: "p", Result: "fail", Scored: false,
			Properties: map[string]string{"process": "", "enabled": "true", "count": "3", "odd key": "a: b"},
			Resources:  []policyreport.ObjectReference{{Kind: "Namespace", Name: "yes", UID: "0a-1"}},
		}},
		Summary: policyreport.Summary{Fail: 1},
	}}
	var buf bytes.Buffer
	if err := WriteReports(&buf, give, "yaml"); err != nil {
		t.Fatalf("WriteReports() error = %v", err)
	}
	var got policyreport.OpenReport
	if err := yaml.UnmarshalStrict(buf.Bytes(), &got); err != nil {
		t.Fatalf("WriteReports() wrote %q: %v", buf.String(), err)
	}
	if diff := cmp.Diff(give[0].Open(), got); diff != "" {
		t.Errorf("WriteReports() round trip mismatch (-want +got):\n%s", diff)
	}
}
