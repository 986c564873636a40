package eval_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vpol"
	"github.com/verdict-policy/verdict/internal/testing/testcorpus"
)

// corpusValidatingPolicies compiles the ValidatingPolicies of a folder of
// the corpus (dot folders skipped), skipping the benchmark when the corpus
// is absent.
func corpusValidatingPolicies(tb testing.TB, folder string) []*policy.Policy {
	tb.Helper()
	dir, ok := testcorpus.Corpus(folder)
	if !ok {
		tb.Skipf("corpus not present at %s", dir)
	}
	var out []*policy.Policy
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || filepath.Ext(path) != ".yaml" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		docs, err := vpol.Decode(path, data)
		if err != nil {
			return err
		}
		for _, d := range docs {
			p, err := policy.CompileValidating(d)
			if err != nil {
				return err
			}
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// BenchmarkValidatingPolicyForms evaluates one Pod against the
// pod-security checks written as ValidatingPolicies (pod-security-vpol)
// and as ClusterPolicies, with validate.cel (pod-security-cel) and with
// patterns (pod-security), the same seven policies in each form, side by
// side. Compilation is outside the loop.
func BenchmarkValidatingPolicyForms(b *testing.B) {
	vpols := corpusValidatingPolicies(b, "pod-security-vpol")
	names := map[string]bool{}
	for _, p := range vpols {
		names[p.Name()] = true
	}
	var cels, patterns []*policy.Policy
	for _, p := range corpusPolicies(b, "pod-security-cel") {
		if names[p.Name()] {
			cels = append(cels, p)
		}
	}
	for _, p := range corpusPolicies(b, "pod-security") {
		if names[p.Name()] {
			patterns = append(patterns, p)
		}
	}
	if len(cels) != len(vpols) || len(patterns) != len(vpols) {
		b.Fatalf("forms: %d ValidatingPolicies, %d validate.cel and %d pattern ClusterPolicies, want the same policies in each", len(vpols), len(cels), len(patterns))
	}
	for _, form := range []struct {
		name string
		pols []*policy.Policy
	}{
		{"ValidatingPolicy", vpols},
		{"ClusterPolicyCEL", cels},
		{"ClusterPolicyPattern", patterns},
	} {
		for _, obj := range []struct{ name, y string }{{"Pod", benchPod(b)}, {"Deployment", benchDeployment}} {
			b.Run(form.name+"/"+obj.name, func(b *testing.B) {
				eng := eval.New(eval.Options{})
				req := &eval.Request{Object: object(b, obj.y)}
				results := len(eng.Evaluate(context.Background(), form.pols, req).Results)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					eng.Evaluate(context.Background(), form.pols, req)
				}
				b.ReportMetric(float64(len(form.pols)), "policies")
				b.ReportMetric(float64(results), "results")
			})
		}
	}
}
