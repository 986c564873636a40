//go:build e2e

package scanner_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/restmapper"

	"github.com/verdict-policy/verdict/host/kubelookup"
	"github.com/verdict-policy/verdict/scanner"
	"github.com/verdict-policy/verdict/server"
)

// refreshPolicy labels the Secrets of a trigger ConfigMap's namespace
// when the policy appears (mutateExistingOnPolicyUpdate).
const refreshPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: refresh-secrets
spec:
  mutateExistingOnPolicyUpdate: true
  rules:
  - name: label-secrets
    match:
      any:
      - resources:
          kinds: [ConfigMap]
          names: [trigger]
    mutate:
      targets:
      - apiVersion: v1
        kind: Secret
        namespace: "{{ request.object.metadata.namespace }}"
        selector:
          matchLabels: {refresh: "true"}
      patchStrategicMerge:
        metadata:
          labels:
            refreshed-by: "{{ request.object.metadata.name }}"
`

// TestE2EMutateExisting: a scan replays the trigger for the policy, the
// decision server reads the targets from the cluster (kubelookup), the
// scanner patches them and records the policy version on the trigger; a
// second scan patches nothing.
func TestE2EMutateExisting(t *testing.T) {
	cluster, cs, dyn, cached := startCluster(t)
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mx"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "tagged", Namespace: "mx", Labels: map[string]string{"refresh": "true"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "untagged", Namespace: "mx"}},
	} {
		if _, err := cs.CoreV1().Secrets("mx").Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.CoreV1().ConfigMaps("mx").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "trigger", Namespace: "mx"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	lookup, err := kubelookup.NewForConfig(cluster.Config, kubelookup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	lookup.Start(lctx)
	ts := startServerWith(t, server.Options{Lookup: lookup}, refreshPolicy)
	cl, err := scanner.NewCluster(scanner.ClusterOptions{Client: dyn, Discovery: cached})
	if err != nil {
		t.Fatal(err)
	}
	gen, err := scanner.NewGenerator(dyn, restmapper.NewDeferredDiscoveryRESTMapper(cached), scanner.GeneratorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scan := func() scanner.Summary {
		t.Helper()
		set, err := scanner.LoadPolicies(ctx, ts.client)
		if err != nil {
			t.Fatal(err)
		}
		if len(set.MutateExisting) != 1 {
			t.Fatalf("LoadPolicies: MutateExisting = %v, want refresh-secrets", set.MutateExisting)
		}
		s, err := scanner.New(ts.client, scanner.Options{Generator: gen})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := s.Scan(ctx, cl.Source(set.Kinds()), set, scanner.ScanOptions{})
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		return sum
	}

	if sum := scan(); sum.Mutated != 1 {
		t.Errorf("first scan: Mutated = %d, want 1 (the tagged Secret)", sum.Mutated)
	}
	for name, want := range map[string]string{"tagged": "trigger", "untagged": ""} {
		s, err := cs.CoreV1().Secrets("mx").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Labels["refreshed-by"]; got != want {
			t.Errorf("Secret mx/%s label refreshed-by = %q, want %q", name, got, want)
		}
	}
	trigger, err := cs.CoreV1().ConfigMaps("mx").Get(ctx, "trigger", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if trigger.Annotations[scanner.MutateRecordPrefix+"refresh-secrets"] == "" {
		t.Errorf("trigger annotations = %v, want the policy version under %srefresh-secrets", trigger.Annotations, scanner.MutateRecordPrefix)
	}
	if sum := scan(); sum.Mutated != 0 {
		t.Errorf("second scan: Mutated = %d, want 0 (recorded on the trigger)", sum.Mutated)
	}
}
