//go:build e2e

package main

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/verdict-policy/verdict/internal/testing/e2e"
)

// TestE2EApplyCluster runs verdict apply --cluster on a real API server:
// the Pods of the cluster (the kind the policy matches), narrowed by -n and
// --selector, listed page by page.
func TestE2EApplyCluster(t *testing.T) {
	cluster := e2e.Start(t, e2e.Options{})
	ctx := t.Context()
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := writeE2EKubeconfig(t, cluster, filepath.Join(t.TempDir(), "kubeconfig"))
	pods := map[string][]string{"shop": {"web", "debug", "cart"}, "other": {"x"}}
	for ns, names := range pods {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// No controller manager creates it: Pods need it.
		if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			labels := map[string]string{"app": name}
			if name == "web" {
				labels["team"] = "storefront"
			}
			if _, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
			}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	policy := "../../examples/policies/require-team-label.yaml"
	tests := []struct {
		name       string
		give       []string
		wantFailed []string // resources of "policy ... -> resource X failed"
		wantLast   string
	}{
		{name: "every namespace", give: nil, wantFailed: []string{"other/Pod/x", "shop/Pod/cart", "shop/Pod/debug"}, wantLast: "pass: 1, fail: 3, warn: 0, error: 0, skip: 0 "},
		{name: "one namespace, pages of one", give: []string{"-n", "shop", "--batch-size", "1"}, wantFailed: []string{"shop/Pod/cart", "shop/Pod/debug"}, wantLast: "pass: 1, fail: 2, warn: 0, error: 0, skip: 0 "},
		{name: "label selector", give: []string{"--selector", "app in (debug,web)"}, wantFailed: []string{"shop/Pod/debug"}, wantLast: "pass: 1, fail: 1, warn: 0, error: 0, skip: 0 "},
		{name: "namespace and selector", give: []string{"-n", "other", "-l", "app=web"}, wantLast: "pass: 0, fail: 0, warn: 0, error: 0, skip: 0 "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"apply", policy, "--cluster", "--kubeconfig", kubeconfig, "--context", "e2e"}, tt.give...)
			code, out, errOut := runCmd(t, args...)
			wantCode := 0
			if len(tt.wantFailed) > 0 {
				wantCode = 1
			}
			if code != wantCode {
				t.Errorf("run(%q) = %d, want %d; stderr: %s", args, code, wantCode, errOut)
			}
			var failed []string
			for _, l := range strings.Split(out, "\n") {
				if r, ok := strings.CutPrefix(l, "policy require-team-label -> resource "); ok {
					failed = append(failed, strings.TrimSuffix(r, " failed:"))
				}
			}
			sort.Strings(failed)
			if diff := cmp.Diff(tt.wantFailed, failed); diff != "" {
				t.Errorf("run(%q) failed resources mismatch (-want +got):\n%s\n%s", args, diff, out)
			}
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			if got := lines[len(lines)-1]; got != tt.wantLast {
				t.Errorf("run(%q) last line = %q, want %q", args, got, tt.wantLast)
			}
		})
	}
	// --cluster-wide-resources: with -n, the cluster-scoped kinds too (the
	// Namespaces, which the API server has four of besides those above).
	t.Run("cluster-wide resources", func(t *testing.T) {
		const nsPolicy = "testdata/flags/require-team-pod-namespace.yaml"
		tests := []struct {
			name       string
			give       []string
			wantFailed []string
		}{
			{name: "namespace only", give: []string{"-n", "shop"}, wantFailed: []string{"shop/Pod/cart", "shop/Pod/debug"}},
			{name: "namespace and cluster-wide", give: []string{"-n", "shop", "--cluster-wide-resources"}, wantFailed: []string{
				"/Namespace/default", "/Namespace/kube-node-lease", "/Namespace/kube-public", "/Namespace/kube-system", "/Namespace/other", "/Namespace/shop",
				"shop/Pod/cart", "shop/Pod/debug"}},
		}
		for _, tt := range tests {
			args := append([]string{"apply", nsPolicy, "--cluster", "--kubeconfig", kubeconfig, "--context", "e2e"}, tt.give...)
			_, out, errOut := runCmd(t, args...)
			var failed []string
			for _, l := range strings.Split(out, "\n") {
				if r, ok := strings.CutPrefix(l, "policy require-team-label -> resource "); ok {
					failed = append(failed, strings.TrimSuffix(r, " failed:"))
				}
			}
			sort.Strings(failed)
			if diff := cmp.Diff(tt.wantFailed, failed); diff != "" {
				t.Errorf("%s: run(%q) failed resources mismatch (-want +got):\n%s\n%s\n%s", tt.name, args, diff, out, errOut)
			}
		}
	})
	t.Run("exclusive with --resource", func(t *testing.T) {
		code, _, errOut := runCmd(t, "apply", policy, "--cluster", "--kubeconfig", kubeconfig, "--resource", policy)
		if code != 2 || !strings.Contains(errOut, "--cluster and --resource are exclusive") {
			t.Errorf("run(apply --cluster --resource) = %d, %q, want 2 and the exclusion", code, errOut)
		}
	})
}
