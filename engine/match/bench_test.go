package match

import (
	"encoding/json"
	"testing"

	"github.com/verdict-policy/verdict/engine/kyverno"
)

// benchRules are rules as policies write them, from the simplest to the
// busiest.
var benchRules = []struct {
	name string
	rule string
}{
	{name: "kind", rule: `{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"]}}]}}`},
	{name: "typical", rule: `{"name":"r",
		"match":{"any":[{"resources":{"kinds":["Deployment","StatefulSet","Pod"],"operations":["CREATE","UPDATE"],
			"namespaces":["prod-*","default"],"selector":{"matchLabels":{"app":"nginx"},"matchExpressions":[{"key":"tier","operator":"In","values":["db","web"]}]}}}]},
		"exclude":{"any":[{"resources":{"namespaces":["kube-*"]}},{"clusterRoles":["cluster-admin"]},{"subjects":[{"kind":"ServiceAccount","name":"*","namespace":"ci"}]}]}}`},
	{name: "wildcards", rule: `{"name":"r",
		"match":{"all":[{"resources":{"kinds":["apps/*/Deployment","v1/Pod","*/Service"],"names":["*-web-?","ngi*x"],
			"annotations":{"example.com/*":"t?ue"},"selector":{"matchLabels":{"ti*":"w*"}},"namespaceSelector":{"matchLabels":{"env":"*"}}},
			"subjects":[{"kind":"Group","name":"system:*"}]}]}}`},
}

func compileBenchRule(tb testing.TB, s string) *Rule {
	tb.Helper()
	var raw kyverno.Rule
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		tb.Fatalf("decode %s: %v", s, err)
	}
	r, err := CompileRule(&raw, "spec.rules[0]", RuleOptions{})
	if err != nil {
		tb.Fatalf("CompileRule(%s): %v", s, err)
	}
	return r
}

// benchResources cover the outcomes: applies, not matched, excluded.
func benchResources() []Resource {
	return []Resource{
		podReq(),
		deployReq(),
		with(podReq(), func(r *Resource) { r.Namespace = "kube-system" }),
		with(podReq(), func(r *Resource) { r.ClusterRoles = []string{"cluster-admin"} }),
		podSub("exec"),
		nodeReq(),
		nsReq(),
	}
}

func BenchmarkMatches(b *testing.B) {
	resources := benchResources()
	for _, br := range benchRules {
		r := compileBenchRule(b, br.rule)
		b.Run(br.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for i := 0; b.Loop(); i++ {
				if r.Applies(&resources[i%len(resources)]) {
					n++
				}
			}
			_ = n
		})
	}
}

func TestMatchesDoesNotAllocate(t *testing.T) {
	resources := benchResources()
	for _, br := range benchRules {
		r := compileBenchRule(t, br.rule)
		for i := range resources {
			res := &resources[i]
			allocs := testing.AllocsPerRun(100, func() {
				r.Applies(res)
				r.Match().Matches(res)
				if ex := r.Exclude(); ex != nil {
					ex.Excludes(res)
				}
			})
			if allocs != 0 {
				t.Errorf("rule %s: Applies(%s %s/%s) allocates %v times, want 0", br.name, res.Kind, res.Namespace, res.Name, allocs)
			}
		}
	}
}
