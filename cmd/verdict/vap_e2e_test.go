//go:build e2e

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/verdict-policy/verdict/deploy"
)

// checkReplicasVAP caps the replicas of Deployments at the maxReplicas of
// its ConfigMap params; it is labelled for background reports, as Kyverno
// requires.
const checkReplicasVAP = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: check-replicas
  labels:
    reports.kyverno.io/enabled: "true"
spec:
  failurePolicy: Fail
  paramKind:
    apiVersion: v1
    kind: ConfigMap
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
  validations:
  - expression: "object.spec.replicas <= int(params.data.maxReplicas)"
    messageExpression: "'at most ' + params.data.maxReplicas + ' replicas'"
`

// checkReplicasBinding binds it in the namespaces labelled env: prod, with
// the ConfigMap replica-limits of the Deployment's namespace.
const checkReplicasBinding = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: check-replicas-binding
spec:
  policyName: check-replicas
  validationActions: [Deny]
  paramRef:
    name: replica-limits
    parameterNotFoundAction: Deny
  matchResources:
    namespaceSelector:
      matchLabels:
        env: prod
`

// TestE2EValidatingAdmissionPolicy deploys overlays/dev and checks, on a
// real API server, that a ValidatingAdmissionPolicy and its binding
// created in the cluster (after the Deployments they judge) are read by
// the decision server and reported after one background scan, as
// Kyverno's reports controller does with --validatingAdmissionPolicyReports:
// the report vap-check-replicas holds a pass and a fail, with source
// ValidatingAdmissionPolicy, the binding and the params' message. The
// API server enforces the policy itself: Verdict's webhook does not.
func TestE2EValidatingAdmissionPolicy(t *testing.T) {
	d := deployDev(t, nsPurposePolicy)
	ctx := t.Context()
	if _, err := d.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: "vap-e2e", Labels: map[string]string{"env": "prod", "purpose": "production"},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Namespace vap-e2e: %v", err)
	}
	if _, err := d.cs.CoreV1().ConfigMaps("vap-e2e").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "replica-limits"}, Data: map[string]string{"maxReplicas": "3"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ConfigMap vap-e2e/replica-limits: %v", err)
	}
	deployment := func(name string, replicas int32) *appsv1.Deployment {
		labels := map[string]string{"app": name}
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "vap-e2e"},
			Spec: appsv1.DeploymentSpec{
				Replicas: &replicas,
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
				},
			},
		}
	}
	for name, replicas := range map[string]int32{"small": 2, "big": 5} {
		if _, err := d.cs.AppsV1().Deployments("vap-e2e").Create(ctx, deployment(name, replicas), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Deployment vap-e2e/%s: %v", name, err)
		}
	}
	d.applyPolicies(t, checkReplicasVAP, checkReplicasBinding)
	waitServed(t, d, "check-replicas")
	waitServed(t, d, "check-replicas-binding")

	// Every shard of the manifests' scan CronJob, once, as its pods do.
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
	pollReport(t, d, "vap-e2e", "vap-check-replicas", map[string]string{"Deployment/big": "fail", "Deployment/small": "pass"})

	var out, errOut bytes.Buffer
	args := []string{"reports", "get", "polr", "vap-check-replicas", "-n", "vap-e2e", "--server", d.writerAddr, "-o", "json"}
	if code := run(ctx, args, &out, &errOut); code != 0 {
		t.Fatalf("verdict %s = exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	var report struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Results []struct {
			Source     string            `json:"source"`
			Policy     string            `json:"policy"`
			Rule       string            `json:"rule"`
			Result     string            `json:"result"`
			Message    string            `json:"message"`
			Properties map[string]string `json:"properties"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		t.Fatal(err)
	}
	if _, ok := report.Metadata.Labels["validatingadmissionpolicy.apiserver.io/check-replicas"]; !ok {
		t.Errorf("report labels = %v, want validatingadmissionpolicy.apiserver.io/check-replicas", report.Metadata.Labels)
	}
	for _, r := range report.Results {
		wantMessage := ""
		if r.Result == "fail" {
			wantMessage = "at most 3 replicas"
		}
		if r.Source != "ValidatingAdmissionPolicy" || r.Policy != "check-replicas" || r.Rule != "check-replicas" || r.Message != wantMessage ||
			r.Properties["binding"] != "check-replicas-binding" || r.Properties["process"] != "background scan" {
			t.Errorf("report result %+v, want source ValidatingAdmissionPolicy, rule check-replicas, message %q, binding check-replicas-binding, process background scan", r, wantMessage)
		}
	}

	// The API server enforces the policy; the webhook lets through what
	// the API server's own admission of the binding does not deny.
	_, err := d.cs.AppsV1().Deployments("vap-e2e").Create(ctx, deployment("huge", 9), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err == nil || strings.Contains(err.Error(), "verdict.io") {
		t.Errorf("dry-run create Deployment huge = %v, want denied by the API server's ValidatingAdmissionPolicy, not by Verdict", err)
	}
}
