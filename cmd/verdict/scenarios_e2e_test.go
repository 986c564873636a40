//go:build e2e

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/deploy"
)

// The policies of the scenarios, as the seed documentation writes them.
const (
	// auditTeamPolicy reports ConfigMaps without a team label (Audit).
	auditTeamPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: audit-team-label
  annotations:
    policies.kyverno.io/category: Best Practices
    policies.kyverno.io/severity: medium
spec:
  validationFailureAction: Audit
  background: true
  rules:
  - name: check-team
    match:
      any:
      - resources:
          kinds: [ConfigMap]
          namespaces: [scen-audit]
    validate:
      message: "The label team is required."
      pattern:
        metadata:
          labels:
            team: "?*"
`
	// latestTagPolicy is a Pod policy; autogen extends it to Deployments.
	latestTagPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: disallow-latest-tag
spec:
  validationFailureAction: Enforce
  background: true
  rules:
  - name: validate-image-tag
    match:
      any:
      - resources:
          kinds: [Pod]
    validate:
      message: "Using a mutable image tag e.g. 'latest' is not allowed."
      pattern:
        spec:
          containers:
          - image: "!*:latest"
`
	// envLabelPolicy is created after the ConfigMaps it reports on.
	envLabelPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: require-env-label
spec:
  validationFailureAction: Audit
  background: true
  rules:
  - name: check-env
    match:
      any:
      - resources:
          kinds: [ConfigMap]
          namespaces: [scen-bg]
    validate:
      message: "The label env is required."
      pattern:
        metadata:
          labels:
            env: "?*"
`
	// defaultDenyPolicy generates a NetworkPolicy in existing namespaces.
	defaultDenyPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: default-deny
spec:
  generateExisting: true
  rules:
  - name: deny-all
    match:
      any:
      - resources:
          kinds: [Namespace]
          selector:
            matchLabels:
              netpol: default
    generate:
      apiVersion: networking.k8s.io/v1
      kind: NetworkPolicy
      name: default-deny
      namespace: "{{request.object.metadata.name}}"
      synchronize: false
      data:
        spec:
          podSelector: {}
          policyTypes: [Ingress, Egress]
`
	// userInfoBackgroundPolicy reads request.userInfo in a background
	// policy: Kyverno refuses it.
	userInfoBackgroundPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: who-created
spec:
  background: true
  rules:
  - name: check-user
    match:
      any:
      - resources:
          kinds: [ConfigMap]
    validate:
      message: "created by {{ request.userInfo.username }}"
      deny:
        conditions:
          any:
          - key: "{{ request.userInfo.username }}"
            operator: Equals
            value: mallory
`
)

var clusterPolicyGVR = schema.GroupVersionResource{Group: "kyverno.io", Version: "v1", Resource: "clusterpolicies"}

// TestE2EScenarios runs the scenarios of the seed documentation against
// overlays/dev's processes (started with the manifests' flags) on a real
// API server: Audit results reported, a Pod policy blocking a Deployment
// through autogen, a background policy created after its resources
// reporting them after one scan, a background policy reading userInfo
// refused at kubectl apply, and generateExisting resources labelled
// kyverno.io/background-gen-rule and removable by that label.
func TestE2EScenarios(t *testing.T) {
	d := deployDev(t, nsPurposePolicy, auditTeamPolicy, latestTagPolicy)
	ctx := t.Context()
	newNamespace := func(name string, labels map[string]string) {
		t.Helper()
		l := map[string]string{"purpose": "production"} // nsPurposePolicy is Enforce
		for k, v := range labels {
			l[k] = v
		}
		if _, err := d.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Namespace %s: %v", name, err)
		}
	}
	newConfigMap := func(ns, name string, labels map[string]string) {
		t.Helper()
		if _, err := d.cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create ConfigMap %s/%s: %v", ns, name, err)
		}
	}
	createPolicy := func(doc string) error {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		_, err := d.dyn.Resource(clusterPolicyGVR).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		return err
	}
	// scan runs every shard of the manifests' CronJob once, as its pods do.
	scan := func() {
		t.Helper()
		for shard := 0; shard < 2; shard++ {
			args, err := deploy.Args(d.overlay, "scanner", map[string]string{"JOB_COMPLETION_INDEX": fmt.Sprint(shard)})
			if err != nil {
				t.Fatal(err)
			}
			args = deploy.LocalArgs(args, d.kubeconfig, map[string]string{"server": d.serverAddr, "report-writer": d.writerAddr})
			var out, errOut bytes.Buffer
			if code := run(ctx, args, &out, &errOut); code != 0 {
				t.Fatalf("verdict %s = exit %d, want 0\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
			}
		}
	}

	t.Run("audit policy reported", func(t *testing.T) {
		newNamespace("scen-audit", nil)
		newConfigMap("scen-audit", "with-team", map[string]string{"team": "web"})
		newConfigMap("scen-audit", "no-team", nil) // allowed: Audit
		want := map[string]string{"ConfigMap/with-team": "pass", "ConfigMap/no-team": "fail"}
		pollReport(t, d, "scen-audit", "cpol-audit-team-label", want)
	})

	t.Run("Pod policy blocks a Deployment through autogen", func(t *testing.T) {
		newNamespace("scen-autogen", nil)
		var dep map[string]any
		if err := yaml.Unmarshal([]byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: scen-autogen}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:latest"}]
`), &dep); err != nil {
			t.Fatal(err)
		}
		_, err := d.dyn.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace("scen-autogen").
			Create(ctx, &unstructured.Unstructured{Object: dep}, metav1.CreateOptions{})
		for _, want := range []string{
			"resource Deployment/scen-autogen/web was blocked due to the following policies",
			"disallow-latest-tag:",
			"autogen-validate-image-tag:",
			"rule autogen-validate-image-tag failed at path /spec/template/spec/containers/0/image/",
		} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("create Deployment with nginx:latest = %v, want an error with %q", err, want)
			}
		}
	})

	t.Run("background policy created after its resources", func(t *testing.T) {
		newNamespace("scen-bg", nil)
		newConfigMap("scen-bg", "labelled", map[string]string{"env": "prod"})
		newConfigMap("scen-bg", "unlabelled", nil)
		if err := createPolicy(envLabelPolicy); err != nil {
			t.Fatalf("create ClusterPolicy require-env-label: %v", err)
		}
		waitServed(t, d, "require-env-label")
		scan()
		want := map[string]string{"ConfigMap/labelled": "pass", "ConfigMap/unlabelled": "fail"}
		pollReport(t, d, "scen-bg", "cpol-require-env-label", want)
	})

	t.Run("userInfo in a background policy is refused", func(t *testing.T) {
		err := createPolicy(userInfoBackgroundPolicy)
		for _, want := range []string{`admission webhook "policy-validate.verdict.io" denied the request`, "ClusterPolicy who-created is invalid", "set spec.background to false"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("create ClusterPolicy who-created = %v, want an error with %q", err, want)
			}
		}
	})

	t.Run("generateExisting", func(t *testing.T) {
		newNamespace("scen-gen-a", map[string]string{"netpol": "default"})
		newNamespace("scen-gen-b", map[string]string{"netpol": "default"})
		newNamespace("scen-gen-c", nil)
		if err := createPolicy(defaultDenyPolicy); err != nil {
			t.Fatalf("create ClusterPolicy default-deny: %v", err)
		}
		waitServed(t, d, "default-deny")
		scan()
		netpols := d.dyn.Resource(schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"})
		list, err := netpols.Namespace("").List(ctx, metav1.ListOptions{LabelSelector: "kyverno.io/background-gen-rule=deny-all"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, np := range list.Items {
			got = append(got, np.GetNamespace()+"/"+np.GetName())
		}
		if want := "scen-gen-a/default-deny scen-gen-b/default-deny"; strings.Join(got, " ") != want {
			t.Errorf("NetworkPolicies labelled kyverno.io/background-gen-rule=deny-all = %v, want %s", got, want)
		}
		for _, ns := range []string{"scen-gen-a", "scen-gen-b"} {
			if err := netpols.Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "kyverno.io/background-gen-rule=deny-all"}); err != nil {
				t.Fatalf("delete NetworkPolicies by label in %s: %v", ns, err)
			}
		}
		list, err = netpols.Namespace("").List(ctx, metav1.ListOptions{LabelSelector: "kyverno.io/background-gen-rule"})
		if err != nil || len(list.Items) != 0 {
			t.Errorf("NetworkPolicies left after deleting by label = %v, %v, want none", list, err)
		}
	})
}

// pollReport waits until the report writer's report name in namespace
// holds exactly want (resource kind/name → result), read with
// verdict reports get -o json as a user would.
// waitServed waits until the deployment's decision server serves the
// policy name, ready.
func waitServed(t *testing.T, d *devDeployment, name string) {
	t.Helper()
	poll(t, 30*time.Second, "the server serves "+name, func() error {
		ps, err := d.c.ListPolicies(t.Context())
		if err != nil {
			return err
		}
		for _, p := range ps.GetPolicies() {
			if p.GetName() == name && p.GetReady() {
				return nil
			}
		}
		return errf("policies %v", ps.GetPolicies())
	})
}

func pollReport(t *testing.T, d *devDeployment, namespace, name string, want map[string]string) {
	t.Helper()
	poll(t, 30*time.Second, "report "+namespace+"/"+name, func() error {
		var out, errOut bytes.Buffer
		args := []string{"reports", "get", "polr", name, "-n", namespace, "--server", d.writerAddr, "-o", "json"}
		if code := run(t.Context(), args, &out, &errOut); code != 0 {
			return errf("verdict %s = exit %d: %s", strings.Join(args, " "), code, errOut.String())
		}
		var report struct {
			Results []struct {
				Result    string `json:"result"`
				Resources []struct {
					Kind string `json:"kind"`
					Name string `json:"name"`
				} `json:"resources"`
			} `json:"results"`
		}
		if err := json.Unmarshal(out.Bytes(), &report); err != nil {
			return err
		}
		got := map[string]string{}
		for _, r := range report.Results {
			for _, res := range r.Resources {
				key := res.Kind + "/" + res.Name
				if _, dup := got[key]; dup {
					// Each resource once: by its UID, from the validate
					// webhook or the scan, not again from the mutate one.
					return errf("report lists %s twice: %+v", key, report.Results)
				}
				got[key] = r.Result
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return errf("report results %v, want %v", got, want)
		}
		return nil
	})
}
