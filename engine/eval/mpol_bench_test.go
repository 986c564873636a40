package eval_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/internal/testing/testcorpus"
)

// corpusPolicyFile compiles the one policy of a corpus file, a
// MutatingPolicy or a ClusterPolicy, skipping the benchmark when the
// corpus is absent.
func corpusPolicyFile(tb testing.TB, path string) *policy.Policy {
	tb.Helper()
	dir, ok := testcorpus.Corpus(filepath.Dir(path))
	if !ok {
		tb.Skipf("corpus not present at %s", dir)
	}
	file := filepath.Join(dir, filepath.Base(path))
	data, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	if mdocs, err := mpol.Policies.Decode(file, data); err == nil && len(mdocs) == 1 {
		p, err := policy.CompileMutating(mdocs[0])
		if err != nil {
			tb.Fatal(err)
		}
		return p
	}
	docs, err := kyverno.DecodePolicies(file, data)
	if err != nil || len(docs) != 1 {
		tb.Fatalf("DecodePolicies(%s) = %d policies, %v", file, len(docs), err)
	}
	p, err := policy.Compile(docs[0])
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// BenchmarkMutatingPolicyForms evaluates the engine benchmark's Pod against
// three mutations of the corpus written both as a MutatingPolicy
// (other-mpol) and as a kyverno.io mutate rule (other), side by side,
// at admission: a securityContext added with defaults (ApplyConfiguration
// against patchStrategicMerge with add anchors), imagePullPolicy: Always
// on every container (ApplyConfiguration of a list merged by name against
// a patchStrategicMerge with a condition anchor), and a dnsConfig
// option. Compilation, and the first evaluation (which parses the schemas
// of the built-in kinds once per process), are outside the loop.
func BenchmarkMutatingPolicyForms(b *testing.B) {
	for _, name := range []string{"add-default-securitycontext", "always-pull-images", "add-ndots"} {
		for _, form := range []struct{ name, folder string }{{"MutatingPolicy", "other-mpol"}, {"ClusterPolicy", "other"}} {
			p := corpusPolicyFile(b, filepath.Join(form.folder, name, name+".yaml"))
			b.Run(name+"/"+form.name, func(b *testing.B) {
				eng := eval.New(eval.Options{})
				req := &eval.Request{Object: object(b, benchPod(b))}
				resp := eng.Evaluate(context.Background(), []*policy.Policy{p}, req)
				if resp.Patched == nil || len(resp.Results) == 0 || resp.Results[0].Status != eval.StatusPass {
					b.Fatalf("Evaluate(%s) = %+v, want a pass that patches", name, resp.Results)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					eng.Evaluate(context.Background(), []*policy.Policy{p}, req)
				}
			})
		}
	}
}
