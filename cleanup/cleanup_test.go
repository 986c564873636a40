package cleanup_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/cleanup"
)

var pods = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

func object(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func newFake(objs ...runtime.Object) *fake.FakeDynamicClient {
	kinds := map[schema.GroupVersionResource]string{
		cleanup.DeletingPolicies:           "DeletingPolicyList",
		cleanup.NamespacedDeletingPolicies: "NamespacedDeletingPolicyList",
		cleanup.PolicyExceptions:           "PolicyExceptionList",
		cleanup.Namespaces:                 "NamespaceList",
		pods:                               "PodList",
	}
	return fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds, objs...)
}

// cleanupTest is Kyverno's test-deleting-policy/deleting-pod-by-namespaceObject
// policy with a propagation policy: Pods of Namespaces labelled
// environment: test go.
const cleanupTest = `apiVersion: policies.kyverno.io/v1
kind: DeletingPolicy
metadata: {name: cleanup-old-test-pods, uid: p-1, resourceVersion: "3"}
spec:
  schedule: "*/1 * * * *"
  deletionPropagationPolicy: Foreground
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], resources: [pods]}
    - {apiGroups: ["*"], apiVersions: [v1], resources: [deployments]}
  conditions:
  - {name: is-test-namespace, expression: "namespaceObject.?metadata.?labels.?environment.orValue('') == 'test'"}
status: {conditionStatus: {ready: true}}
`

func pod(name, namespace string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: " + namespace + ", uid: uid-" + name + "}\n"
}

func cluster(t *testing.T, extra ...string) []runtime.Object {
	objs := []runtime.Object{
		object(t, cleanupTest),
		object(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: test, labels: {environment: test}}\n"),
		object(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n"),
		object(t, pod("test-nginx-1", "test")), object(t, pod("test-nginx-2", "test")),
		object(t, pod("nginx-1", "default")),
	}
	for _, e := range extra {
		objs = append(objs, object(t, e))
	}
	return objs
}

func deletes(dc *fake.FakeDynamicClient) (out []string) {
	for _, a := range dc.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok {
			prop := ""
			if p := d.DeleteOptions.PropagationPolicy; p != nil {
				prop = string(*p)
			}
			uid := ""
			if pc := d.DeleteOptions.Preconditions; pc != nil && pc.UID != nil {
				uid = string(*pc.UID)
			}
			out = append(out, d.Namespace+"/"+d.Name+" "+prop+" "+uid)
		}
	}
	return out
}

func load(t *testing.T, r *cleanup.Runner) cleanup.Policy {
	t.Helper()
	ps, _, err := r.Load(context.Background())
	if err != nil || len(ps) != 1 {
		t.Fatalf("Load() = %d policies, error %v; want 1", len(ps), err)
	}
	return ps[0]
}

func TestExecute(t *testing.T) {
	dc := newFake(cluster(t)...)
	r, err := cleanup.New(cleanup.Options{Client: dc})
	if err != nil {
		t.Fatal(err)
	}
	p := load(t, r)
	s, err := r.Execute(context.Background(), p, nil)
	if err != nil {
		t.Fatalf("Execute() error: %v", err)
	}
	want := cleanup.Summary{Selected: 3, Deleted: 2, Deletions: []string{"/v1, Resource=pods test/test-nginx-1", "/v1, Resource=pods test/test-nginx-2"}}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("Execute() summary (-want +got):\n%s", diff)
	}
	wantDeletes := []string{"test/test-nginx-1 Foreground uid-test-nginx-1", "test/test-nginx-2 Foreground uid-test-nginx-2"}
	if diff := cmp.Diff(wantDeletes, deletes(dc)); diff != "" {
		t.Errorf("Execute() deletes (-want +got):\n%s", diff)
	}
}

func TestExecuteLimitsAndDryRun(t *testing.T) {
	tests := []struct {
		name        string
		opts        cleanup.Options
		wantDeleted int
		wantErr     error
		wantDeletes int
	}{
		{"at the limit", cleanup.Options{MaxDeletions: 2}, 2, nil, 2},
		{"over the limit", cleanup.Options{MaxDeletions: 1}, 1, cleanup.ErrMaxDeletions, 1},
		{"dry run", cleanup.Options{DryRun: true}, 2, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dc := newFake(cluster(t)...)
			tt.opts.Client = dc
			r, err := cleanup.New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			s, err := r.Execute(context.Background(), load(t, r), nil)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Errorf("Execute() error = %v, want %v", err, tt.wantErr)
			}
			if s.Deleted != tt.wantDeleted || len(deletes(dc)) != tt.wantDeletes {
				t.Errorf("Execute() deleted %d (%d calls), want %d (%d calls)", s.Deleted, len(deletes(dc)), tt.wantDeleted, tt.wantDeletes)
			}
		})
	}
}

func TestLoadSkipsInvalidAndAppliesExceptions(t *testing.T) {
	bad := `apiVersion: policies.kyverno.io/v1
kind: NamespacedDeletingPolicy
metadata: {name: bad, namespace: test}
spec:
  schedule: "every minute"
  matchConstraints: {resourceRules: [{apiGroups: [""], apiVersions: [v1], resources: [pods]}]}
`
	exception := `apiVersion: policies.kyverno.io/v1
kind: PolicyException
metadata: {name: keep-1, namespace: test}
spec:
  policyRefs: [{name: cleanup-old-test-pods, kind: DeletingPolicy}]
  matchConditions: [{name: one, expression: "object.metadata.name == 'test-nginx-1'"}]
`
	dc := newFake(cluster(t, bad, exception)...)
	r, err := cleanup.New(cleanup.Options{Client: dc})
	if err != nil {
		t.Fatal(err)
	}
	ps, excs, err := r.Load(context.Background())
	if err != nil || len(ps) != 1 || len(excs) != 1 {
		t.Fatalf("Load() = %d policies, %d exceptions, error %v; want 1, 1 (the invalid policy left out)", len(ps), len(excs), err)
	}
	if got := ps[0].Schedule.Next(time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)); !got.Equal(time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)) {
		t.Errorf("Schedule.Next = %v, want the next minute", got)
	}
	s, err := r.Execute(context.Background(), ps[0], excs)
	if err != nil {
		t.Fatalf("Execute() error: %v", err)
	}
	if diff := cmp.Diff([]string{"/v1, Resource=pods test/test-nginx-2"}, s.Deletions); diff != "" {
		t.Errorf("Execute() deletions with an exception (-want +got):\n%s", diff)
	}
}

func TestHealthy(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r, err := cleanup.New(cleanup.Options{Client: newFake(cluster(t)...), Resync: time.Minute, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Healthy() {
		t.Errorf("Healthy() before a read = true, want false")
	}
	if _, _, err := r.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		after time.Duration
		want  bool
	}{{0, true}, {3*time.Minute - time.Second, true}, {3 * time.Minute, false}}
	start := now
	for _, tt := range tests {
		now = start.Add(tt.after)
		if got := r.Healthy(); got != tt.want {
			t.Errorf("Healthy() %v after a read = %v, want %v", tt.after, got, tt.want)
		}
	}
}
