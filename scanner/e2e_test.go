//go:build e2e

package scanner_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/restmapper"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/scanner"
)

// teamConfigMapPolicy asks for a team label on ConfigMaps (the harness
// runs no controllers, so Pods cannot be created without their service
// account; ConfigMaps need nothing).
const teamConfigMapPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: configmap-team
spec:
  rules:
  - name: check-team
    match:
      any:
      - resources:
          kinds: [ConfigMap]
          namespaces: ["ns-*"]
    validate:
      message: "The label team is required."
      pattern:
        metadata:
          labels:
            team: "?*"
`

func TestE2EClusterScan(t *testing.T) {
	_, cs, dyn, cached := startCluster(t)
	ctx := context.Background()

	// Three namespaces, two labelled for the generateExisting policy, and
	// a ConfigMap with and one without the team label.
	for _, ns := range []struct {
		name   string
		labels map[string]string
	}{{"ns-a", map[string]string{"netpol": "default"}}, {"ns-b", map[string]string{"netpol": "default"}}, {"ns-c", nil}} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.name, Labels: ns.labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "good", Namespace: "ns-a", Labels: map[string]string{"team": "web"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "ns-b"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "ns-c"}},
	} {
		if _, err := cs.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	ts := startServer(t, teamConfigMapPolicy, netpolPolicy)
	// A page of one object: every list goes through continue tokens.
	cl, err := scanner.NewCluster(scanner.ClusterOptions{Client: dyn, Discovery: cached, PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	gen, err := scanner.NewGenerator(dyn, restmapper.NewDeferredDiscoveryRESTMapper(cached), scanner.GeneratorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scan := func(shard scanner.Shard) (scanner.Summary, *collectSink) {
		t.Helper()
		set, err := scanner.LoadPolicies(ctx, ts.client)
		if err != nil {
			t.Fatal(err)
		}
		sink := &collectSink{}
		s, err := scanner.New(ts.client, scanner.Options{Shard: shard, Sink: sink, Generator: gen})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := s.Scan(ctx, cl.Source(set.Kinds()), set, scanner.ScanOptions{})
		if err != nil {
			t.Fatalf("Scan(shard %s): %v", shard, err)
		}
		return sum, sink
	}

	sum, sink := scan(scanner.Shard{})
	got := map[string]verdictv1.Result{}
	for _, r := range sink.results {
		if r.Err != nil {
			t.Errorf("Scan: %s not evaluated: %v", r.Resource, r.Err)
		}
		if r.Resource.UID == "" || r.Resource.ResourceVersion == "" {
			t.Errorf("Scan: %s has no uid or resourceVersion", r.Resource)
		}
		for _, rr := range r.Response.GetResults() {
			got[r.Resource.String()+" "+rr.GetPolicy()] = rr.GetResult()
		}
	}
	want := map[string]verdictv1.Result{
		"ns-a/ConfigMap/good configmap-team": verdictv1.Result_RESULT_PASS,
		"ns-b/ConfigMap/bad configmap-team":  verdictv1.Result_RESULT_FAIL,
		"ns-c/ConfigMap/bad configmap-team":  verdictv1.Result_RESULT_FAIL,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Scan results mismatch (-want +got):\n%s", diff)
	}
	// 4 ConfigMaps (one of the API server's own) and 7 Namespaces (4 of
	// the API server's own).
	if sum.Resources != 11 || sum.Generated != 2 || sum.Triggers != 2 {
		t.Errorf("Scan = %d resources, %d generated for %d triggers; want 11, 2, 2", sum.Resources, sum.Generated, sum.Triggers)
	}

	// The NetworkPolicies exist in the labelled namespaces, applied by
	// the field manager verdict, with Kyverno's labels.
	sel := "kyverno.io/background-gen-rule=deny-all"
	nps, err := cs.NetworkingV1().NetworkPolicies("").List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	nsUIDs := map[string]string{}
	for _, name := range []string{"ns-a", "ns-b"} {
		ns, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		nsUIDs[name] = string(ns.UID)
	}
	versions := map[string]string{}
	for _, np := range nps.Items {
		versions[np.Namespace] = np.ResourceVersion
		for k, v := range map[string]string{
			"app.kubernetes.io/managed-by":     "kyverno",
			"generate.kyverno.io/policy-name":  "default-deny",
			"generate.kyverno.io/rule-name":    "deny-all",
			"generate.kyverno.io/trigger-kind": "Namespace",
			"generate.kyverno.io/trigger-uid":  nsUIDs[np.Namespace],
			"kyverno.io/background-gen-rule":   "deny-all",
		} {
			if np.Labels[k] != v {
				t.Errorf("NetworkPolicy %s/%s label %s = %q, want %q", np.Namespace, np.Name, k, np.Labels[k], v)
			}
		}
		if len(np.ManagedFields) != 1 || np.ManagedFields[0].Manager != "verdict" || np.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply {
			t.Errorf("NetworkPolicy %s/%s managed fields = %+v, want one Apply by verdict", np.Namespace, np.Name, np.ManagedFields)
		}
		if len(np.Spec.PolicyTypes) != 2 {
			t.Errorf("NetworkPolicy %s/%s policyTypes = %v, want Ingress and Egress", np.Namespace, np.Name, np.Spec.PolicyTypes)
		}
	}
	if len(versions) != 2 || versions["ns-a"] == "" || versions["ns-b"] == "" {
		t.Fatalf("NetworkPolicies with %s in %v, want ns-a and ns-b", sel, versions)
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, "ns-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := ns.Annotations["generate-existing.verdict.io/default-deny"]; len(h) != 64 {
		t.Errorf("Namespace ns-a record = %q, want the policy's content hash", h)
	}

	// A second scan does not apply again.
	sum, _ = scan(scanner.Shard{})
	if sum.Generated != 0 || sum.Resources != 11 {
		t.Errorf("second Scan = %d generated of %d resources, want 0 of 11", sum.Generated, sum.Resources)
	}
	nps, err = cs.NetworkingV1().NetworkPolicies("").List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	for _, np := range nps.Items {
		if np.ResourceVersion != versions[np.Namespace] {
			t.Errorf("second Scan changed NetworkPolicy %s/%s (resourceVersion %s, was %s)", np.Namespace, np.Name, np.ResourceVersion, versions[np.Namespace])
		}
	}

	// The label removes them, and a scan of the same policy version does
	// not bring them back.
	for _, ns := range []string{"ns-a", "ns-b"} {
		if err := cs.NetworkingV1().NetworkPolicies(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: sel}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _ = scan(scanner.Shard{}); t.Failed() {
		return
	}
	nps, err = cs.NetworkingV1().NetworkPolicies("").List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	if len(nps.Items) != 0 {
		t.Errorf("NetworkPolicies after delete by label and a rescan: %d, want 0", len(nps.Items))
	}

	// Two shards split the cluster: every resource in exactly one.
	seen := map[string]int{}
	for i := range 2 {
		sum, sink := scan(scanner.Shard{Index: i, Count: 2})
		for _, r := range sink.done[0].Seen {
			seen[r.UID]++
		}
		if sum.Resources == 0 {
			t.Errorf("shard %d/2 scanned nothing", i)
		}
	}
	if len(seen) != 11 {
		t.Errorf("two shards scanned %d resources, want 11", len(seen))
	}
	for uid, n := range seen {
		if n != 1 {
			t.Errorf("resource %s scanned by %d shards, want 1", uid, n)
		}
	}
}
