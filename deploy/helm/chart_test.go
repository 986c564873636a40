package helm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/verdict-policy/verdict/deploy"
)

// installs are the values files of the chart and what each must render:
// the kustomization it stands for, and what CheckWebhooks expects.
var installs = []struct {
	name      string
	files     []string
	kustomize string
	webhooks  deploy.WebhookOptions
}{
	{"default", nil, "base", deploy.WebhookOptions{Namespace: "verdict", CA: deploy.CABundle, FailurePolicy: admissionregistrationv1.Fail}},
	{"ha", []string{"values-ha.yaml"}, "overlays/ha", deploy.WebhookOptions{Namespace: "verdict", CA: deploy.CACertManager, FailurePolicy: admissionregistrationv1.Fail}},
	{"dev", []string{"values-dev.yaml"}, "overlays/dev", deploy.WebhookOptions{Namespace: "verdict", CA: deploy.CABundle, FailurePolicy: admissionregistrationv1.Ignore}},
	{"cleanup", []string{"values-cleanup.yaml"}, "overlays/cleanup", deploy.WebhookOptions{Namespace: "verdict", CA: deploy.CABundle, FailurePolicy: admissionregistrationv1.Fail}},
}

// rendered renders each install once per test binary.
var rendered = sync.OnceValues(func() (map[string][]*unstructured.Unstructured, error) {
	out := map[string][]*unstructured.Unstructured{}
	for _, in := range installs {
		objs, err := Render(Options{ValuesFiles: in.files})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.name, err)
		}
		out[in.name] = objs
	}
	return out, nil
})

func renderAll(t *testing.T) map[string][]*unstructured.Unstructured {
	t.Helper()
	all, err := rendered()
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return all
}

func reportErrs(t *testing.T, name, check string, errs []error) {
	t.Helper()
	for _, err := range errs {
		t.Errorf("%s: %s: %v", name, check, err)
	}
}

// TestLint runs helm lint on the chart with each values file: no warning
// and no error (helm lint --strict).
func TestLint(t *testing.T) {
	for _, in := range installs {
		vals, err := Values(Options{ValuesFiles: in.files})
		if err != nil {
			t.Fatal(err)
		}
		kv := KubeVersion
		l := lint.AllWithKubeVersion(ChartDir, vals, "verdict", &kv)
		for _, m := range l.Messages {
			if m.Severity > support.InfoSev {
				t.Errorf("%s: helm lint: %v", in.name, m)
			} else {
				t.Logf("%s: helm lint: %v", in.name, m)
			}
		}
	}
}

// TestLintRejects checks that the lint of TestLint does report: a value
// of the wrong type is an error.
func TestLintRejects(t *testing.T) {
	kv := KubeVersion
	l := lint.AllWithKubeVersion(ChartDir, map[string]any{"server": map[string]any{"replicas": "two"}}, "verdict", &kv)
	if l.HighestSeverity < support.ErrorSev {
		t.Errorf("lint(server.replicas: two) = %v, want an error", l.Messages)
	}
}

// TestChecks runs on every install of the chart the checks the kustomize
// manifests pass (deploy/manifests_test.go).
func TestChecks(t *testing.T) {
	for _, in := range installs {
		objs := renderAll(t)[in.name]
		t.Logf("%s: %d objects", in.name, len(objs))
		reportErrs(t, in.name, "CheckStrictDecode", deploy.CheckStrictDecode(objs))
		reportErrs(t, in.name, "CheckCRDs", deploy.CheckCRDs(objs))
		reportErrs(t, in.name, "CheckNamespaced", deploy.CheckNamespaced(objs, "verdict"))
		reportErrs(t, in.name, "CheckPodSecurity", deploy.CheckPodSecurity(objs, deploy.Image))
		reportErrs(t, in.name, "CheckWebhooks", deploy.CheckWebhooks(objs, in.webhooks))
		reportErrs(t, in.name, "CheckRBAC", deploy.CheckRBAC(objs, "verdict"))
		reportErrs(t, in.name, "CheckServerRBAC", deploy.CheckServerRBAC(objs))
	}
}

// TestOtherNamespace renders the chart into another namespace: every
// namespaced object, RBAC subject, Service address, webhook and
// certificate follows it, and no object names the namespace verdict.
func TestOtherNamespace(t *testing.T) {
	const ns = "policy-system"
	for _, in := range installs {
		objs, err := Render(Options{Namespace: ns, ValuesFiles: in.files})
		if err != nil {
			t.Fatal(err)
		}
		opts := in.webhooks
		opts.Namespace = ns
		reportErrs(t, in.name, "CheckNamespaced", deploy.CheckNamespaced(objs, ns))
		reportErrs(t, in.name, "CheckWebhooks", deploy.CheckWebhooks(objs, opts))
		reportErrs(t, in.name, "CheckRBAC", deploy.CheckRBAC(objs, ns))
		for _, o := range objs {
			b, err := json.Marshal(o.Object)
			if err != nil {
				t.Fatal(err)
			}
			for _, old := range []string{".verdict.svc", `"namespace":"verdict"`, `"verdict/`} {
				if strings.Contains(string(b), old) {
					t.Errorf("%s: %s %s names the namespace verdict (%s)", in.name, o.GetKind(), o.GetName(), old)
				}
			}
		}
	}
}

// helmOnlyLabels are the labels the chart adds that the kustomizations do
// not have (app.kubernetes.io/managed-by is Helm in one, kustomize in the
// other).
var helmOnlyLabels = []string{"helm.sh/chart", "app.kubernetes.io/instance", "app.kubernetes.io/version", "app.kubernetes.io/managed-by"}

// normalize returns o as JSON types, without helmOnlyLabels in any
// metadata (the object's, its templates'), and without the webhooks'
// caBundle when dropCABundle is set.
func normalize(t *testing.T, o *unstructured.Unstructured, dropCABundle bool) *unstructured.Unstructured {
	t.Helper()
	b, err := json.Marshal(o.Object)
	if err != nil {
		t.Fatal(err)
	}
	n := &unstructured.Unstructured{}
	if err := n.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if meta, ok := v["metadata"].(map[string]any); ok {
				if labels, ok := meta["labels"].(map[string]any); ok {
					for _, l := range helmOnlyLabels {
						delete(labels, l)
					}
				}
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(n.Object)
	if dropCABundle {
		hooks, _, _ := unstructured.NestedSlice(n.Object, "webhooks")
		for _, h := range hooks {
			if cc, ok := h.(map[string]any)["clientConfig"].(map[string]any); ok {
				delete(cc, "caBundle")
			}
		}
		if hooks != nil {
			if err := unstructured.SetNestedSlice(n.Object, hooks, "webhooks"); err != nil {
				t.Fatal(err)
			}
		}
	}
	return n
}

func objectKey(o *unstructured.Unstructured) string {
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}

// TestSameAsKustomize is the check that the chart and the kustomize
// manifests are one install: the chart with each values file renders the
// objects of its kustomization, field for field, once the labels only
// Helm adds are left out. The chart is rendered with the Namespace
// (createNamespace) and without the CRDs' keep annotation, which the
// kustomizations do not have; the Secret and caBundles of
// webhook.tls.mode helm (values.yaml, values-dev.yaml) are the chart's
// own, since the kustomizations leave the certificate to the operator.
func TestSameAsKustomize(t *testing.T) {
	for _, in := range installs {
		chart, err := Render(Options{ValuesFiles: in.files, Set: []string{"createNamespace=true", "crds.annotations=null"}})
		if err != nil {
			t.Fatal(err)
		}
		kust, err := deploy.Render(in.kustomize)
		if err != nil {
			t.Fatal(err)
		}
		helmTLS := in.webhooks.CA == deploy.CABundle
		got := map[string]*unstructured.Unstructured{}
		for _, o := range chart {
			if helmTLS && o.GetKind() == "Secret" && o.GetName() == "verdict-webhook-tls" {
				continue
			}
			got[objectKey(o)] = normalize(t, o, helmTLS)
		}
		want := map[string]*unstructured.Unstructured{}
		for _, o := range kust {
			want[objectKey(o)] = normalize(t, o, false)
		}
		var keys []string
		for k := range want {
			keys = append(keys, k)
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			switch g, w := got[k], want[k]; {
			case g == nil:
				t.Errorf("%s: %s of %s is not in the chart", in.name, k, in.kustomize)
			case w == nil:
				t.Errorf("%s: the chart's %s is not in %s", in.name, k, in.kustomize)
			default:
				if diff := cmp.Diff(w.Object, g.Object); diff != "" {
					t.Errorf("%s: %s: %s (-) and the chart (+) differ:\n%s", in.name, k, in.kustomize, diff)
				}
			}
		}
		t.Logf("%s: %d objects compared with %s", in.name, len(keys), in.kustomize)
	}
}

// TestValuesRejected checks that values.schema.json refuses values that
// would render a broken install, naming the value.
func TestValuesRejected(t *testing.T) {
	tests := []struct {
		set  string
		want string
	}{
		{"server.replicas=two", "/server/replicas"},
		{"server.replica=2", "replica"},
		{"webhook.tls.mode=vault", "/webhook/tls/mode"},
		{"webhook.timeoutSeconds=31", "/webhook/timeoutSeconds"},
		{"webhook.failurePolicy=Deny", "/webhook/failurePolicy"},
		{"scanner.shards=0", "/scanner/shards"},
		{"server.extraArgs[0]=verbose", "/server/extraArgs/0"},
		{"reports.goMemLimit=1G", "/reports/goMemLimit"},
		{"openreports.enabled=yes", "/openreports/enabled"},
	}
	for _, tt := range tests {
		_, err := Render(Options{Set: []string{tt.set}})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Render(--set %s) = %v, want a schema error naming %s", tt.set, err, tt.want)
		}
	}
}

// TestWebhookTLSModes renders each webhook.tls.mode: the CA reaches the
// webhook configurations as CheckWebhooks expects, and the Secret is the
// chart's only with mode helm.
func TestWebhookTLSModes(t *testing.T) {
	const caBundle = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="
	tests := []struct {
		set        []string
		ca         deploy.WebhookCA
		wantSecret bool
	}{
		{nil, deploy.CABundle, true},
		{[]string{"webhook.tls.mode=cert-manager"}, deploy.CACertManager, false},
		{[]string{"webhook.tls.mode=secret"}, deploy.CAByHand, false},
	}
	for _, tt := range tests {
		objs, err := Render(Options{Set: tt.set})
		if err != nil {
			t.Fatal(err)
		}
		reportErrs(t, fmt.Sprint(tt.set), "CheckWebhooks", deploy.CheckWebhooks(objs, deploy.WebhookOptions{Namespace: "verdict", CA: tt.ca, FailurePolicy: admissionregistrationv1.Fail}))
		secret := slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool { return o.GetKind() == "Secret" })
		if secret != tt.wantSecret {
			t.Errorf("Render(%v): a Secret = %v, want %v", tt.set, secret, tt.wantSecret)
		}
	}
	// mode secret with the operator's CA: every webhook carries it.
	objs, err := Render(Options{Set: []string{"webhook.tls.mode=secret", "webhook.tls.caBundle=" + caBundle}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range objs {
		hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
		for _, h := range hooks {
			got, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "caBundle")
			if got != caBundle {
				t.Errorf("%s %s: caBundle = %q, want %q", o.GetKind(), o.GetName(), got, caBundle)
			}
			n++
		}
	}
	if n != 5 {
		t.Errorf("Render(mode secret): %d webhooks, want 5", n)
	}
}

// TestReportsStoreOnly renders reports.inCluster=false: the writer keeps
// the final reports in its store, without --in-cluster, and its liveness
// probe asks the default health service (the "liveness" one exists only
// in cluster mode).
func TestReportsStoreOnly(t *testing.T) {
	tests := []struct {
		set         string
		wantCluster bool
	}{
		{"reports.inCluster=true", true},
		{"reports.inCluster=false", false},
	}
	for _, tt := range tests {
		objs, err := Render(Options{Set: []string{tt.set}})
		if err != nil {
			t.Fatal(err)
		}
		ws, err := deploy.Workloads(objs)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if w.Component != "reports" {
				continue
			}
			c := w.Container
			if got := slices.Contains(c.Args, "--in-cluster"); got != tt.wantCluster {
				t.Errorf("Render(%s): args %q: --in-cluster = %v, want %v", tt.set, c.Args, got, tt.wantCluster)
			}
			service := ""
			if c.LivenessProbe != nil && c.LivenessProbe.GRPC != nil && c.LivenessProbe.GRPC.Service != nil {
				service = *c.LivenessProbe.GRPC.Service
			}
			if want := map[bool]string{true: "liveness", false: ""}[tt.wantCluster]; service != want {
				t.Errorf("Render(%s): liveness probe service = %q, want %q", tt.set, service, want)
			}
		}
	}
}

// TestReportsOptions renders the report writer's values that are flags:
// each adds its flag, and the defaults add none (Kyverno's layout, one
// result per resource, and wgpolicyk8s.io reports).
func TestReportsOptions(t *testing.T) {
	tests := []struct {
		set  []string
		flag string
		want bool
	}{
		{nil, "--group-results", false},
		{[]string{"reports.groupResults=true"}, "--group-results", true},
		{nil, "--openreports-enabled", false},
		{[]string{"openreports.enabled=true"}, "--openreports-enabled", true},
	}
	for _, tt := range tests {
		objs, err := Render(Options{Set: tt.set})
		if err != nil {
			t.Fatal(err)
		}
		ws, err := deploy.Workloads(objs)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, w := range ws {
			if w.Component == "reports" {
				found = true
				if got := slices.Contains(w.Container.Args, tt.flag); got != tt.want {
					t.Errorf("Render(%v): args %q: %s = %v, want %v", tt.set, w.Container.Args, tt.flag, got, tt.want)
				}
			}
		}
		if !found {
			t.Errorf("Render(%v): no report writer", tt.set)
		}
	}
	// openreports.io objects are written to the cluster only.
	set := []string{"openreports.enabled=true", "reports.inCluster=false"}
	if _, err := Render(Options{Set: set}); err == nil || !strings.Contains(err.Error(), "needs reports.inCluster") {
		t.Errorf("Render(%v) = %v, want an error naming reports.inCluster", set, err)
	}
}

// TestSchedulingValues renders the scheduling values of every component:
// they land in each pod spec, which still decodes strictly, and
// commonLabels on every object.
func TestSchedulingValues(t *testing.T) {
	set := []string{"imagePullSecrets[0].name=registry", "image.pullPolicy=Always", "commonLabels.owner=platform"}
	for _, c := range []string{"server", "webhook", "reports", "scanner"} {
		set = append(set,
			c+".nodeSelector.pool=policy",
			c+".tolerations[0].key=dedicated",
			c+".tolerations[0].operator=Exists",
			c+".priorityClassName=system-cluster-critical",
			c+".podAnnotations.note=x",
			c+".podLabels.tier=policy",
			c+".affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=pool",
			c+".affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists",
			c+".extraArgs[0]=--log-level=debug",
		)
	}
	objs, err := Render(Options{Set: set})
	if err != nil {
		t.Fatal(err)
	}
	reportErrs(t, "scheduling", "CheckStrictDecode", deploy.CheckStrictDecode(objs))
	ws, err := deploy.Workloads(objs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 4 {
		t.Fatalf("Workloads = %d, want 4", len(ws))
	}
	for _, w := range ws {
		p, c := w.Pod, w.Container
		id := w.Kind + " " + w.Name
		if p.NodeSelector["pool"] != "policy" || len(p.Tolerations) != 1 || p.PriorityClassName != "system-cluster-critical" ||
			len(p.ImagePullSecrets) != 1 || p.Affinity == nil || p.Affinity.NodeAffinity == nil || p.Affinity.PodAntiAffinity != nil {
			t.Errorf("%s: pod spec %+v, want the scheduling values", id, p)
		}
		if c.ImagePullPolicy != "Always" || c.Args[len(c.Args)-1] != "--log-level=debug" {
			t.Errorf("%s: imagePullPolicy %q, args %q, want Always and --log-level=debug last", id, c.ImagePullPolicy, c.Args)
		}
	}
	for _, o := range objs {
		if o.GetLabels()["owner"] != "platform" {
			t.Errorf("%s %s: labels %v, want owner: platform", o.GetKind(), o.GetName(), o.GetLabels())
		}
	}
}
