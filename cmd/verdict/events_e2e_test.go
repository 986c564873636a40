//go:build e2e

package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/verdict-policy/verdict/deploy"
)

// requireTeamPolicy is the Enforce policy of Kyverno's chainsaw test
// events/policy/policy-violation, as a ClusterPolicy.
const requireTeamPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: require-labels
spec:
  background: false
  rules:
    - name: require-team
      match:
        any:
          - resources:
              kinds:
                - ConfigMap
      validate:
        failureAction: Enforce
        message: 'The label ` + "`team`" + ` is required.'
        pattern:
          metadata:
            labels:
              team: '?*'
`

// genConfigMapPolicy generates, for each Pod, a ConfigMap in a namespace
// that does not exist: the webhook proxy cannot write it.
const genConfigMapPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: gen-cm
spec:
  rules:
    - name: cm
      match:
        any:
          - resources:
              kinds:
                - Pod
      generate:
        apiVersion: v1
        kind: ConfigMap
        name: '{{request.object.metadata.name}}-cm'
        namespace: does-not-exist
        data:
          data:
            a: b
`

// TestE2EEvents: on a real API server, with the decision server, the
// webhook proxy and the report writers on the Kubernetes store, a Pod
// that violates an Audit policy gets an Event naming the policy and the
// rule (and the policy one about the Pod), and a request an Enforce
// policy blocks leaves an Event on the policy; as Kyverno's events
// (pkg/event) and its chainsaw tests (events/policy/policy-violation)
// have them.
func TestE2EEvents(t *testing.T) {
	cr := startClusterReports(t, time.Second, secretsPolicy, requireTeamPolicy, genConfigMapPolicy)
	ctx := t.Context()
	if _, err := cr.cs.CoreV1().Pods("default").Create(ctx, pod("secret-pod", true), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Pod secret-pod: %v, want allowed (Audit)", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "no-team", Labels: map[string]string{"app": "web"}}}
	_, err := cr.cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "require-labels") {
		t.Fatalf("create ConfigMap no-team: %v, want denied by require-labels", err)
	}
	const violation = "validation error: Secrets must be mounted as volumes, not as environment variables. rule secrets-not-from-env-vars failed at path /spec/containers/0/env/0/valueFrom/secretKeyRef/"
	const blocked = "validation error: The label `team` is required. rule require-team failed at path /metadata/labels/team/"
	want := []string{
		// On the Pod (NewResourceViolationEvent).
		"default Pod/secret-pod Warning PolicyViolation kyverno-admission [Resource Passed] policy secrets-not-from-env-vars/secrets-not-from-env-vars fail: " + violation,
		// On the Audit policy, about the Pod (NewPolicyFailEvent).
		"default ClusterPolicy/secrets-not-from-env-vars Warning PolicyViolation kyverno-admission [Resource Passed] Pod default/secret-pod: [secrets-not-from-env-vars] fail; " + violation + " related Pod/secret-pod",
		// On the Enforce policy that blocked the request.
		"default ClusterPolicy/require-labels Warning PolicyViolation kyverno-admission [Resource Blocked] ConfigMap default/no-team: [require-team] fail (blocked); " + blocked + " related ConfigMap/no-team",
		// On the generate policy whose ConfigMap could not be written
		// (NewBackgroundFailedEvent), after the proxy's attempts.
		`default ClusterPolicy/gen-cm Warning PolicyError kyverno-generate [None] policy gen-cm/cm error: apply ConfigMap does-not-exist/secret-pod-cm: namespaces "does-not-exist" not found related Pod/secret-pod`,
	}
	poll(t, 30*time.Second, "the Events of the violation, of the blocked request and of the generate failure", func() error {
		list, err := cr.cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		got := map[string]bool{}
		for _, e := range list.Items {
			s := fmt.Sprintf("%s %s/%s %s %s %s [%s] %s", e.Namespace, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Type, e.Reason, e.ReportingController, e.Action, e.Message)
			if e.Related != nil {
				s += " related " + e.Related.Kind + "/" + e.Related.Name
			}
			if !strings.HasPrefix(e.ReportingInstance, e.ReportingController+"-") {
				return fmt.Errorf("event %s: reportingInstance %q, want %s-<host>", e.Name, e.ReportingInstance, e.ReportingController)
			}
			got[s] = true
		}
		for _, w := range want {
			if !got[w] {
				return fmt.Errorf("no Event %q in %v", w, got)
			}
		}
		return nil
	})
	// A background scan: the same violation from kyverno-scan.
	for shard := range 2 {
		args, err := deploy.Args(cr.overlay, "scanner", map[string]string{"JOB_COMPLETION_INDEX": fmt.Sprint(shard)})
		if err != nil {
			t.Fatal(err)
		}
		args = deploy.LocalArgs(args, cr.kubeconfig, map[string]string{"server": cr.serverAddr, "report-writer": cr.writerAddr})
		var out, errOut bytes.Buffer
		if code := run(ctx, args, &out, &errOut); code != 0 {
			t.Fatalf("verdict %s = exit %d, want 0\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
		}
	}
	scanned := "default Pod/secret-pod Warning PolicyViolation kyverno-scan [Resource Passed] policy secrets-not-from-env-vars/secrets-not-from-env-vars fail: " + violation
	poll(t, 30*time.Second, "the Event of the background scan", func() error {
		list, err := cr.cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=secret-pod,reason=PolicyViolation"})
		if err != nil {
			return err
		}
		var got []string
		for _, e := range list.Items {
			s := fmt.Sprintf("%s %s/%s %s %s %s [%s] %s", e.Namespace, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Type, e.Reason, e.ReportingController, e.Action, e.Message)
			if s == scanned {
				return nil
			}
			got = append(got, s)
		}
		return fmt.Errorf("no Event %q in %q", scanned, got)
	})

	// Counted by the leader; the standby emits none.
	if n := scrape(t, cr.writers[0], `verdict_events_total{reason="PolicyViolation"}`); n < 3 {
		t.Errorf("leader's verdict_events_total{reason=PolicyViolation} = %v, want at least 3", n)
	}
	if n := scrape(t, cr.writers[1], `verdict_events_total{reason="PolicyViolation"}`); n != 0 {
		t.Errorf("standby's verdict_events_total{reason=PolicyViolation} = %v, want 0", n)
	}
	if n := scrape(t, cr.writers[0], `verdict_events_dropped_total{cause="queue_full"}`); n != 0 {
		t.Errorf("leader's verdict_events_dropped_total{cause=queue_full} = %v, want 0", n)
	}

	// The same Events through events.k8s.io/v1, as Kyverno writes them.
	evs, err := cr.cs.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs.Items {
		if e.Regarding.Kind == "ClusterPolicy" && e.Regarding.Name == "require-labels" && e.Regarding.APIVersion == "kyverno.io/v1" &&
			e.Related != nil && e.Related.Name == "no-team" && e.Note != "" && e.Action == "Resource Blocked" {
			found = true
		}
	}
	if !found {
		t.Errorf("events.k8s.io/v1 Events = %d, want one regarding ClusterPolicy require-labels (kyverno.io/v1), related ConfigMap no-team", len(evs.Items))
	}
}
