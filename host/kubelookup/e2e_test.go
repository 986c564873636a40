//go:build e2e

package kubelookup_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/host/kubelookup"
	"github.com/verdict-policy/verdict/internal/testing/e2e"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/server"
)

// clusterDataPolicy denies a Pod when its namespace already holds
// settings.data.maxPods Pods: a configMap context entry and an apiCall
// counting the namespace's Pods.
const clusterDataPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: pod-quota
spec:
  validationFailureAction: Enforce
  background: false
  rules:
  - name: max-pods
    match:
      any:
      - resources:
          kinds: [Pod]
    context:
    - name: settings
      configMap:
        name: settings
        namespace: "{{request.namespace}}"
    - name: podcount
      apiCall:
        urlPath: "/api/v1/namespaces/{{request.namespace}}/pods"
        jmesPath: "items | length(@)"
    validate:
      message: "{{request.namespace}} has {{podcount}} pods, limit {{settings.data.maxPods}}"
      deny:
        conditions:
          any:
          - key: "{{podcount}}"
            operator: GreaterThanOrEquals
            value: "{{to_number(settings.data.maxPods)}}"
`

// clonePolicy clones templates/defaults into every new Namespace.
const clonePolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: clone-defaults
spec:
  rules:
  - name: clone
    match:
      any:
      - resources:
          kinds: [Namespace]
    generate:
      apiVersion: v1
      kind: ConfigMap
      name: defaults
      namespace: "{{request.object.metadata.name}}"
      synchronize: false
      clone:
        namespace: templates
        name: defaults
`

// TestE2ELookup evaluates policies that read the cluster through a
// decision server whose Lookup reaches a real API server, as a service
// account bound to the ClusterRole docs/cluster-data.md lists.
func TestE2ELookup(t *testing.T) {
	cluster := e2e.Start(t, e2e.Options{})
	ctx := t.Context()
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}

	// team-a: 2 Pods, at most 2; team-b: no Pod, at most 5; team-c: no
	// settings ConfigMap; templates: the clone source.
	for _, ns := range []string{"team-a", "team-b", "team-c", "templates", "verdict"} {
		mustCreate(t, func() error {
			_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
			return err
		})
		mustCreate(t, func() error {
			_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
			return err
		})
	}
	for ns, max := range map[string]string{"team-a": "2", "team-b": "5"} {
		mustCreate(t, func() error {
			_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"maxPods": max}}, metav1.CreateOptions{})
			return err
		})
	}
	mustCreate(t, func() error {
		_, err := cs.CoreV1().ConfigMaps("templates").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "defaults", Labels: map[string]string{"origin": "templates"}}, Data: map[string]string{"tier": "standard"}}, metav1.CreateOptions{})
		return err
	})
	for i := range 2 {
		mustCreate(t, func() error {
			_, err := cs.CoreV1().Pods("team-a").Create(ctx, pod("team-a", fmt.Sprintf("p%d", i)), metav1.CreateOptions{})
			return err
		})
	}

	l, err := kubelookup.NewForConfig(serviceAccountConfig(t, cs, cluster.Config), kubelookup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	l.Start(lctx)
	c := startServer(t, server.Options{Lookup: l}, clusterDataPolicy, clonePolicy)

	type row struct {
		Rule    string
		Result  verdictv1.Result
		Message string
	}
	tests := []struct {
		ns   string
		want row
	}{
		{"team-a", row{"max-pods", verdictv1.Result_RESULT_FAIL, "team-a has 2 pods, limit 2"}},
		{"team-b", row{"max-pods", verdictv1.Result_RESULT_PASS, "validation rule 'max-pods' passed."}},
		{"team-c", row{"max-pods", verdictv1.Result_RESULT_ERROR, "failed to retrieve config map for context entry settings: configMap team-c/settings: not found (configmaps \"settings\" not found)"}},
	}
	for _, tt := range tests {
		resp, err := c.EvaluateResource(ctx, pod(tt.ns, "new"))
		if err != nil {
			t.Fatalf("Evaluate(Pod %s/new) = %v", tt.ns, err)
		}
		var got []row
		for _, r := range resp.GetResults() {
			got = append(got, row{r.GetRule(), r.GetResult(), r.GetMessage()})
		}
		if len(got) != 1 || got[0].Rule != tt.want.Rule || got[0].Result != tt.want.Result || !strings.HasSuffix(got[0].Message, tt.want.Message) {
			t.Errorf("Evaluate(Pod %s/new) results = %+v, want one like %+v", tt.ns, got, tt.want)
		}
	}

	resp, err := c.EvaluateResource(ctx, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "team-new"}})
	if err != nil {
		t.Fatalf("Evaluate(Namespace team-new) = %v", err)
	}
	// The clone and its source (clone_source: Kyverno labels the source
	// of a synchronized clone).
	var gens []*verdictv1.GenerateIntent
	for _, g := range resp.GetGenerates() {
		if !g.GetCloneSource() {
			gens = append(gens, g)
		}
	}
	if len(gens) != 1 {
		t.Fatalf("Evaluate(Namespace team-new) generates %v (failures %v), want 1 clone", resp.GetGenerates(), resp.GetGenerateFailures())
	}
	g := gens[0]
	var obj struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name, Namespace string
		} `json:"metadata"`
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(g.GetResource(), &obj); err != nil {
		t.Fatal(err)
	}
	got := []any{g.GetAction(), obj.Kind, obj.Metadata.Namespace, obj.Metadata.Name, obj.Data}
	want := []any{verdictv1.GenerateAction_GENERATE_ACTION_CREATE, "ConfigMap", "team-new", "defaults", map[string]string{"tier": "standard"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Evaluate(Namespace team-new) generated (-want +got):\n%s", diff)
	}
}

// serviceAccountConfig returns cfg as the service account verdict/server,
// bound to the ClusterRole of the cluster lookup (plus list pods, the
// apiCall of the test's policy).
func serviceAccountConfig(t *testing.T, cs kubernetes.Interface, cfg *rest.Config) *rest.Config {
	t.Helper()
	ctx := t.Context()
	mustCreate(t, func() error {
		_, err := cs.CoreV1().ServiceAccounts("verdict").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "server"}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "verdict-cluster-lookup"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}},
				{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}},
				{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
			},
		}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "verdict-cluster-lookup"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "verdict-cluster-lookup"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "verdict", Name: "server"}},
		}, metav1.CreateOptions{})
		return err
	})
	tok, err := cs.CoreV1().ServiceAccounts("verdict").CreateToken(ctx, "server", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of verdict/server: %v", err)
	}
	sa := rest.AnonymousClientConfig(cfg)
	sa.BearerToken = tok.Status.Token
	return sa
}

func pod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
}

func mustCreate(t *testing.T, create func() error) {
	t.Helper()
	if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// startServer runs a decision server with opts and the policies on
// loopback and returns a client once it is SERVING.
func startServer(t *testing.T, opts server.Options, policies ...string) *client.Client {
	t.Helper()
	dir := t.TempDir()
	for i, p := range policies {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%d.yaml", i)), []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts.Sources = append(opts.Sources, &server.FolderSource{Dir: dir})
	srv, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Run(ctx, lis)
	}()
	t.Cleanup(func() { cancel(); <-done })
	c, err := client.Dial(lis.Addr().String(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	deadline := time.Now().Add(10 * time.Second)
	for c.CheckHealth(context.Background()) != nil {
		if time.Now().After(deadline) {
			t.Fatal("decision server not SERVING after 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return c
}
