package dpol_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/dpol"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// policyDoc is a DeletingPolicy of Pods with the given kind, version,
// schedule and spec fields.
func policyDoc(kind, version, schedule, rest string) string {
	return fmt.Sprintf(`apiVersion: policies.kyverno.io/%s
kind: %s
metadata: {name: cleanup, namespace: team}
spec:
  schedule: %q
  matchConstraints: {resourceRules: [{apiGroups: [""], apiVersions: [v1], resources: [pods]}]}
%s`, version, kind, schedule, rest)
}

func decode(t *testing.T, src string) *dpol.Document {
	t.Helper()
	docs, err := dpol.Policies.Decode("test", []byte(src))
	if err != nil || len(docs) != 1 {
		t.Fatalf("Decode() = %d documents, error %v; want 1", len(docs), err)
	}
	return docs[0]
}

func hasError(err error, code engine.Code, path string) bool {
	var errs engine.Errors
	if errors.As(err, &errs) {
		for _, e := range errs {
			if e.Code == code && e.Path == path {
				return true
			}
		}
		return false
	}
	var e *engine.Error
	return errors.As(err, &e) && e.Code == code && e.Path == path
}

func TestDecodeVersions(t *testing.T) {
	tests := map[string][]string{
		"DeletingPolicy":           {"v1", "v1beta1", "v1alpha1"},
		"NamespacedDeletingPolicy": {"v1", "v1beta1"},
	}
	for kind, versions := range tests {
		for _, version := range versions {
			t.Run(kind+"/"+version, func(t *testing.T) {
				p, err := dpol.Compile(decode(t, policyDoc(kind, version, "*/1 * * * *", "")))
				if err != nil {
					t.Fatalf("Compile(%s %s) error: %v", kind, version, err)
				}
				ns := ""
				if kind == "NamespacedDeletingPolicy" {
					ns = "team"
				}
				if diff := cmp.Diff([]string{kind, "cleanup", ns}, []string{p.Kind, p.Name, p.Namespace}); diff != "" {
					t.Errorf("Compile(%s %s) identity (-want +got):\n%s", kind, version, diff)
				}
			})
		}
	}
	if _, err := dpol.Policies.Decode("test", []byte(policyDoc("NamespacedDeletingPolicy", "v1alpha1", "* * * * *", ""))); !hasError(err, engine.CodeUnsupported, "apiVersion") {
		t.Errorf("Decode(NamespacedDeletingPolicy v1alpha1) = %v, want %s at apiVersion", err, engine.CodeUnsupported)
	}
	if _, err := dpol.Policies.Decode("test", []byte(policyDoc("DeletingPolicy", "v1", "* * * * *", "  condition: []\n"))); !hasError(err, engine.CodeDecode, "spec.condition") {
		t.Errorf("Decode(unknown field) = %v, want %s at spec.condition", err, engine.CodeDecode)
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name, schedule, rest string
		path                 string
	}{
		{"schedule does not parse", "every minute", "", "spec.schedule"},
		{"schedule out of range", "61 * * * *", "", "spec.schedule"},
		{"empty schedule", "", "", "spec.schedule"},
		{"propagation", "* * * * *", "  deletionPropagationPolicy: Sometimes\n", "spec.deletionPropagationPolicy"},
		{"condition not bool", "* * * * *", "  conditions: [{name: a, expression: '1'}]\n", "spec.conditions[0].expression"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dpol.Compile(decode(t, policyDoc("DeletingPolicy", "v1", tt.schedule, tt.rest)))
			if !hasError(err, engine.CodeInvalidPolicy, tt.path) {
				t.Errorf("Compile(%s) = %v, want %s at %s", tt.name, err, engine.CodeInvalidPolicy, tt.path)
			}
		})
	}
}

func TestSchedule(t *testing.T) {
	p, err := dpol.Compile(decode(t, policyDoc("DeletingPolicy", "v1", "*/5 * * * *", "  deletionPropagationPolicy: Orphan\n")))
	if err != nil {
		t.Fatalf("Compile() error: %v", err)
	}
	from := time.Date(2026, 1, 1, 10, 1, 0, 0, time.UTC)
	if got, want := p.Schedule.Next(from), time.Date(2026, 1, 1, 10, 5, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("Schedule.Next(%v) = %v, want %v", from, got, want)
	}
	if p.Propagation != "Orphan" {
		t.Errorf("Propagation = %q, want Orphan", p.Propagation)
	}
}

func pod(name, namespace string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": name, "namespace": namespace}}
}

func TestEvaluate(t *testing.T) {
	// Expected values from Kyverno v1.19's CLI (kyverno test,
	// test/cli/test-deleting-policy/deleting-pod-by-namespaceObject and
	// deleting-pod-by-name).
	cond := `  variables: [{name: env, expression: "namespaceObject.?metadata.?labels.?environment.orValue('')"}]
  conditions: [{name: test-ns, expression: "variables.env == 'test'"}]
`
	tests := []struct {
		name   string
		object map[string]any
		nsObj  map[string]any
		rest   string
		want   dpol.Result
	}{
		{"deleted", pod("a", "test"), map[string]any{"metadata": map[string]any{"name": "test", "labels": map[string]any{"environment": "test"}}}, cond, dpol.Result{Matched: true, Delete: true}},
		{"kept", pod("a", "default"), map[string]any{"metadata": map[string]any{"name": "default"}}, cond, dpol.Result{Matched: true}},
		{"not selected", map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "a"}}, nil, cond, dpol.Result{}},
		{"no conditions", pod("a", "x"), nil, "", dpol.Result{Matched: true, Delete: true}},
		{"condition error", pod("a", "x"), nil, "  conditions: [{name: a, expression: 'object.spec.missing == 1'}]\n", dpol.Result{Matched: true, Path: "spec.conditions"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := dpol.Compile(decode(t, policyDoc("DeletingPolicy", "v1", "* * * * *", tt.rest)))
			if err != nil {
				t.Fatalf("Compile() error: %v", err)
			}
			in := vpol.NewInput(vpol.Request{Object: tt.object, NamespaceObject: tt.nsObj, Operation: "CREATE"})
			got := p.Evaluate(context.Background(), in, nil)
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(dpol.Result{}, "Err")); diff != "" {
				t.Errorf("Evaluate(%s) (-want +got):\n%s", tt.name, diff)
			}
			if (got.Err != nil) != (tt.want.Path != "") {
				t.Errorf("Evaluate(%s) error = %v, want one: %v", tt.name, got.Err, tt.want.Path != "")
			}
		})
	}
}
