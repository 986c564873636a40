package eval_test

import (
	"context"
	"testing"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/policy"
)

// BenchmarkPodSecurityForms evaluates one Pod against the pod-security
// policies of the corpus in their CEL form (pod-security-cel), their
// pattern form (pod-security) and as validate.podSecurity rules
// (pod-security/subrule), side by side. Compilation is outside the loop.
func BenchmarkPodSecurityForms(b *testing.B) {
	for _, form := range []struct{ name, folder string }{
		{"cel", "pod-security-cel"},
		{"pattern", "pod-security"},
		{"podSecurity", "pod-security/subrule"},
	} {
		b.Run(form.name, func(b *testing.B) {
			pols := corpusPolicies(b, form.folder)
			if form.name == "pattern" {
				pols = withoutPodSecurity(pols)
			}
			eng := eval.New(eval.Options{})
			req := &eval.Request{Object: object(b, benchPod(b))}
			results := len(eng.Evaluate(context.Background(), pols, req).Results)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				eng.Evaluate(context.Background(), pols, req)
			}
			b.ReportMetric(float64(len(pols)), "policies")
			b.ReportMetric(float64(results), "results")
		})
	}
}

// withoutPodSecurity drops the podSecurity rule policies of the subrule
// folder from the pattern form.
func withoutPodSecurity(pols []*policy.Policy) []*policy.Policy {
	var out []*policy.Policy
	for _, p := range pols {
		keep := true
		for _, r := range p.Rules {
			if r.PodSecurity != nil {
				keep = false
			}
		}
		if keep {
			out = append(out, p)
		}
	}
	return out
}

// BenchmarkCompilePodSecurityCEL compiles the CEL form of the pod-security
// policies (decoding included): the one-time cost per policy version.
func BenchmarkCompilePodSecurityCEL(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		corpusPolicies(b, "pod-security-cel")
	}
}
