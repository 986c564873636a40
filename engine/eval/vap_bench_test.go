package eval_test

import (
	"context"
	"testing"

	"github.com/verdict-policy/verdict/engine/cases"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vap"
)

// benchVAP caps the replicas of Deployments and requires the label app of
// their pod template, as a ValidatingAdmissionPolicy and as a
// ClusterPolicy with validate.cel.
const (
	benchVAP = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: bench
  labels: {reports.kyverno.io/enabled: "true"}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  variables:
  - {name: labels, expression: "has(object.spec.template.metadata.labels) ? object.spec.template.metadata.labels : {}"}
  validations:
  - expression: object.spec.replicas <= 5
    message: at most 5 replicas
  - expression: "'app' in variables.labels"
    message: the label app is required
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: bench-binding}
spec:
  policyName: bench
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {env: prod}}
`
	benchCELPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: bench}
spec:
  background: true
  rules:
  - name: bench
    match:
      any:
      - resources:
          kinds: [Deployment]
          namespaceSelector: {matchLabels: {env: prod}}
    validate:
      cel:
        variables:
        - {name: labels, expression: "has(object.spec.template.metadata.labels) ? object.spec.template.metadata.labels : {}"}
        expressions:
        - expression: object.spec.replicas <= 5
          message: at most 5 replicas
        - expression: "'app' in variables.labels"
          message: the label app is required
`
)

// BenchmarkVAPForms evaluates a Deployment in background mode against the
// same two checks written as a ValidatingAdmissionPolicy with a binding
// and as a ClusterPolicy with validate.cel. Compilation is outside the
// loop; each iteration is one request (the VAP's input is built per
// request, as a server builds it).
func BenchmarkVAPForms(b *testing.B) {
	tc := cases.Case{Note: "bench", Policy: benchVAP}
	vaps, err := tc.Policies()
	if err != nil {
		b.Fatal(err)
	}
	bindings, err := tc.Bindings()
	if err != nil {
		b.Fatal(err)
	}
	docs, err := kyverno.DecodePolicies("bench", []byte(benchCELPolicy))
	if err != nil {
		b.Fatal(err)
	}
	cel, err := policy.Compile(docs[0])
	if err != nil {
		b.Fatal(err)
	}
	deployment := object(b, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","labels":{"app":"web"}},
"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}}}}`)
	for _, form := range []struct {
		name     string
		pols     []*policy.Policy
		bindings []*vap.Binding
	}{
		{"ValidatingAdmissionPolicy", vaps, bindings},
		{"ClusterPolicyCEL", []*policy.Policy{cel}, nil},
	} {
		b.Run(form.name, func(b *testing.B) {
			eng := eval.New(eval.Options{})
			req := &eval.Request{Object: deployment, Mode: eval.Background, NamespaceLabels: map[string]string{"env": "prod"}, VAPBindings: form.bindings}
			res := eng.Evaluate(context.Background(), form.pols, req).Results
			if len(res) != 1 || res[0].Status != eval.StatusPass {
				b.Fatalf("Evaluate(%s) = %+v, want one pass", form.name, res)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				eng.Evaluate(context.Background(), form.pols, req)
			}
		})
	}
}
