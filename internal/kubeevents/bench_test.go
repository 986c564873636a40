package kubeevents

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes/fake"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// benchEvaluation is BenchmarkPublish's evaluation (reportwriter): a
// background evaluation of a Pod against 17 single-rule policies, every
// fifth one failing.
func benchEvaluation() *verdictv1.ResourceEvaluation {
	ev := &verdictv1.ResourceEvaluation{Resource: pod, Source: scan}
	for i := range 17 {
		name := fmt.Sprintf("pss-%02d", i)
		ev.Policies = append(ev.Policies, &verdictv1.PolicyVersion{Kind: "ClusterPolicy", Name: name, Background: true})
		r := verdictv1.Result_RESULT_PASS
		if i%5 == 0 {
			r = verdictv1.Result_RESULT_FAIL
		}
		ev.Results = append(ev.Results, &verdictv1.RuleResult{Policy: name, Rule: "check", Result: r, Message: "validation rule 'check' failed."})
	}
	return ev
}

// BenchmarkEvaluation is what the report writer's loop pays per
// evaluation: the events built and queued (the queue full, so each is
// dropped and counted: the worst case, as nothing is written), or all
// omitted.
func BenchmarkEvaluation(b *testing.B) {
	for _, bc := range []struct {
		name string
		omit []string
	}{
		{"queued", nil},
		{"omitted", Reasons},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e, err := New(Options{Client: fake.NewClientset(), Omit: bc.omit, MaxQueued: 1, Registry: prometheus.NewRegistry()})
			if err != nil {
				b.Fatal(err)
			}
			ev := benchEvaluation()
			b.ReportAllocs()
			for b.Loop() {
				e.Evaluation(ev)
			}
		})
	}
}
