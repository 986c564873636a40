package kubesource_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/verdict-policy/verdict/server/kubesource"
)

// A ValidatingAdmissionPolicy and its binding as the API server returns
// them (with its fields and a status).
const (
	admissionPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: check-replicas
  uid: 6a1d2c3b-0000-1111-2222-333344445555
  resourceVersion: "42"
  generation: 1
  labels: {reports.kyverno.io/enabled: "true"}
spec:
  failurePolicy: Fail
  matchConstraints:
    matchPolicy: Equivalent
    namespaceSelector: {}
    objectSelector: {}
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments], scope: "*"}
  validations:
  - expression: object.spec.replicas <= 5
status:
  observedGeneration: 1
  typeChecking: {}
`
	admissionBinding = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: check-replicas-binding
  resourceVersion: "43"
spec:
  policyName: check-replicas
  validationActions: [Deny]
`
)

// TestValidatingAdmissionPolicies reads the ValidatingAdmissionPolicies and
// bindings of a cluster (without their status and server fields), unless
// disabled or not served.
func TestValidatingAdmissionPolicies(t *testing.T) {
	const (
		pol     = "kubernetes:ValidatingAdmissionPolicy/check-replicas"
		binding = "kubernetes:ValidatingAdmissionPolicyBinding/check-replicas-binding"
	)
	tests := []struct {
		name        string
		opts        kubesource.Options
		notServed   string
		wantOrigins []string
	}{
		{name: "read", wantOrigins: []string{pol, binding}},
		{name: "disabled", opts: kubesource.Options{DisableVAPs: true}},
		{name: "not served", notServed: "validatingadmissionpolicies", wantOrigins: []string{binding}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dc := newFake(object(t, admissionPolicy), object(t, admissionBinding))
			if tt.notServed != "" {
				dc.PrependReactor("list", tt.notServed, func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: tt.notServed}, "")
				})
			}
			tt.opts.Client, tt.opts.Debounce = dc, 10*time.Millisecond
			src, err := kubesource.New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			rec := newRecorder()
			runSource(t, src, rec.update)
			snap := rec.next(t)
			if diff := cmp.Diff(tt.wantOrigins, origins(snap)); diff != "" {
				t.Errorf("origins mismatch (-want +got):\n%s", diff)
			}
			if tt.name != "read" {
				return
			}
			want := map[string]any{
				"apiVersion": "admissionregistration.k8s.io/v1",
				"kind":       "ValidatingAdmissionPolicy",
				"metadata":   map[string]any{"name": "check-replicas", "labels": map[string]any{"reports.kyverno.io/enabled": "true"}},
				"spec":       object(t, admissionPolicy).Object["spec"],
			}
			if diff := cmp.Diff(want, docs(t, snap)[pol]); diff != "" {
				t.Errorf("ValidatingAdmissionPolicy document mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
