package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// TestInlineValidatingPolicies sends ValidatingPolicies,
// NamespacedValidatingPolicies and PolicyExceptions of both groups inline,
// mixed with a ClusterPolicy in one document or in several: each policy
// gives its results, and an inline PolicyException skips the policy it
// names, as it would from the server's folder.
func TestInlineValidatingPolicies(t *testing.T) {
	namespaced := strings.Replace(strings.Replace(validatingPolicy("ns-team", "[Deny]"),
		"kind: ValidatingPolicy", "kind: NamespacedValidatingPolicy", 1),
		"  name: ns-team\n", "  name: ns-team\n  namespace: default\n", 1)
	celException := `apiVersion: policies.kyverno.io/v1
kind: PolicyException
metadata:
  name: exempt-deny-team
  namespace: default
spec:
  policyRefs:
  - name: deny-team
    kind: ValidatingPolicy
`
	kyvernoException := `apiVersion: kyverno.io/v2
kind: PolicyException
metadata:
  name: exempt-team-label
  namespace: default
spec:
  exceptions:
  - policyName: require-team-label
    ruleNames: [check-team]
  match:
    any:
    - resources:
        kinds: [Pod]
`
	ts := startServer(t, Options{})
	c := ts.client(t)
	failing := pod(t, "p", "default", "nginx", map[string]string{"app": "x"})
	tests := []struct {
		name        string
		give        []string
		wantAllowed bool
		want        []result
	}{
		{
			name: "one document holding a ClusterPolicy, a ValidatingPolicy and a NamespacedValidatingPolicy",
			give: []string{teamLabelPolicy + "---\n" + validatingPolicy("deny-team", "[Deny]") + "---\n" + namespaced},
			want: []result{
				{"require-team-label", "check-team", verdictv1.Result_RESULT_FAIL, true},
				{"deny-team", "", verdictv1.Result_RESULT_FAIL, true},
				{"ns-team", "", verdictv1.Result_RESULT_FAIL, true},
			},
		},
		{
			name: "a ValidatingPolicy in its own document, Audit",
			give: []string{validatingPolicy("audit-team", "[Audit]")},
			// Audit only reports: the request is allowed.
			wantAllowed: true,
			want:        []result{{"audit-team", "", verdictv1.Result_RESULT_FAIL, false}},
		},
		{
			name: "a policies.kyverno.io PolicyException sent with the policy",
			give: []string{validatingPolicy("deny-team", "[Deny]"), celException},
			// Kyverno reports an exempted ValidatingPolicy as a skip of
			// the rule "exception".
			wantAllowed: true,
			want:        []result{{"deny-team", "exception", verdictv1.Result_RESULT_SKIP, true}},
		},
		{
			name:        "PolicyExceptions of both groups in the policies' document",
			give:        []string{teamLabelPolicy + "---\n" + kyvernoException + "---\n" + validatingPolicy("deny-team", "[Deny]") + "---\n" + celException},
			wantAllowed: true,
			want: []result{
				{"require-team-label", "check-team", verdictv1.Result_RESULT_SKIP, true},
				{"deny-team", "exception", verdictv1.Result_RESULT_SKIP, true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.Evaluate(t.Context(), inlineDocs(failing, tt.give...))
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if got.GetAllowed() != tt.wantAllowed {
				t.Errorf("Evaluate(%s) allowed = %v (%q), want %v", tt.name, got.GetAllowed(), got.GetMessage(), tt.wantAllowed)
			}
			if diff := cmp.Diff(tt.want, resultsOf(got)); diff != "" {
				t.Errorf("Evaluate(%s) results (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestInlineValidatingPolicyErrors: an inline ValidatingPolicy or
// policies.kyverno.io PolicyException that does not decode or compile
// fails the call with INVALID_ARGUMENT naming the document and the field,
// as a kyverno.io policy does.
func TestInlineValidatingPolicyErrors(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.client(t)
	tests := []struct {
		name string
		give []string
		want []violation
	}{
		{
			name: "unknown field",
			give: []string{teamLabelPolicy, strings.Replace(validatingPolicy("x", "[Deny]"), "    message:", "    mesage:", 1)},
			want: []violation{{"inline_policies.documents[1].spec.validations[0].mesage", "decode_error"}},
		},
		{
			name: "CEL that does not compile, after a ClusterPolicy in the same document",
			give: []string{teamLabelPolicy + "---\n" + strings.Replace(validatingPolicy("x", "[Deny]"), "'team' in object.metadata.labels", "object.metadata.labels.(", 1)},
			want: []violation{{"inline_policies.documents[0].spec.validations[0].expression", "invalid_policy"}},
		},
		{
			name: "validation that is not a bool",
			give: []string{strings.Replace(validatingPolicy("x", "[Deny]"), "'team' in object.metadata.labels", "'team'", 1)},
			want: []violation{{"inline_policies.documents[0].spec.validations[0].expression", "invalid_policy"}},
		},
		{
			name: "exception without policyRefs",
			give: []string{validatingPolicy("x", "[Deny]"), "apiVersion: policies.kyverno.io/v1\nkind: PolicyException\nmetadata: {name: e, namespace: default}\nspec: {policyRefs: []}\n"},
			want: []violation{{"inline_policies.documents[1].spec.policyRefs", "invalid_policy"}},
		},
		{
			name: "a kind that is not a policy",
			give: []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"},
			want: []violation{{"inline_policies.documents[0].kind", "unsupported"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Evaluate(t.Context(), inlineDocs(pod(t, "p", "default", "nginx", nil), tt.give...))
			code, vs := statusOf(err)
			if code != codes.InvalidArgument || !cmp.Equal(vs, tt.want) {
				t.Errorf("Evaluate(%s) = code %v, violations %v; want InvalidArgument, %v (%v)", tt.name, code, vs, tt.want, err)
			}
		})
	}
}

// withValidations returns a ValidatingPolicy named name with n
// validations.
func withValidations(name string, n int) string {
	return validatingPolicy(name, "[Deny]") + strings.Repeat("  - expression: \"true\"\n", n-1)
}

// TestInlineValidatingPolicyLimits: the validations of inline
// ValidatingPolicies count as rules for MaxRequestPolicyRules, with the
// rules of the kyverno.io policies sent with them; at the limit the call
// is answered, over it it fails with RESOURCE_EXHAUSTED and nothing is
// compiled.
func TestInlineValidatingPolicyLimits(t *testing.T) {
	const maxRules = 6
	ts := startServer(t, Options{MaxRequestPolicyRules: maxRules})
	c := ts.client(t)
	obj := pod(t, "p", "default", "nginx", map[string]string{"team": "a"})
	ok := []struct {
		name string
		give []string
	}{
		{"validations at the limit", []string{withValidations("at", maxRules)}},
		{"validations and rules at the limit", []string{withValidations("half", maxRules-1), teamLabelPolicy}},
		{"in one document at the limit", []string{withValidations("half", maxRules/2) + "---\n" + withValidations("other", maxRules/2)}},
	}
	for _, tt := range ok {
		if _, err := c.Evaluate(t.Context(), inlineDocs(obj, tt.give...)); err != nil {
			t.Errorf("Evaluate(inline %s): %v, want no error", tt.name, err)
		}
	}
	compiles := metricValue(t, ts.reg, "verdict_policy_compilations_total")
	over := []struct {
		name string
		give []string
	}{
		{"validations over the limit", []string{withValidations("over", maxRules+1)}},
		{"validations and rules over the limit", []string{withValidations("over", maxRules), teamLabelPolicy}},
		{"in one document over the limit", []string{withValidations("a", maxRules/2) + "---\n" + withValidations("b", maxRules/2+1)}},
	}
	for _, tt := range over {
		_, err := c.Evaluate(t.Context(), inlineDocs(obj, tt.give...))
		code, vs := statusOf(err)
		if want := []violation{{"inline_policies.documents", "limit_exceeded"}}; code != codes.ResourceExhausted || !cmp.Equal(vs, want) {
			t.Errorf("Evaluate(inline %s): code %v, violations %v; want ResourceExhausted, %v", tt.name, code, vs, want)
		}
	}
	if got := metricValue(t, ts.reg, "verdict_policy_compilations_total"); got != compiles {
		t.Errorf("verdict_policy_compilations_total went from %v to %v over refused requests, want no compilation", compiles, got)
	}
}

// TestInlineCacheValidatingPolicies sends 8 ValidatingPolicies (three
// variants each, with autogen) to a server that keeps 2 MiB of compiled
// inline policies: each is charged its own programs and types (about
// 200 KB), not the CEL environment every policy shares (about 700 KB
// more), so all 8 stay cached: none is evicted, none compiled twice.
func TestInlineCacheValidatingPolicies(t *testing.T) {
	const budget, n = 2 << 20, 8
	ts := startServer(t, Options{InlineCacheBytes: budget})
	c := ts.client(t)
	obj := pod(t, "p", "default", "nginx", map[string]string{"team": "a"})
	for round := range 2 {
		for i := range n {
			policy := strings.Replace(validatingPolicy(fmt.Sprintf("p%d", i), "[Deny]"), "  autogen:\n    podControllers:\n      controllers: []\n", "", 1)
			if _, err := c.Evaluate(t.Context(), inlineDocs(obj, policy)); err != nil {
				t.Fatalf("Evaluate(inline ValidatingPolicy %d, round %d): %v", i, round, err)
			}
		}
	}
	cached := metricValue(t, ts.reg, "verdict_inline_policy_cache_bytes")
	t.Logf("%d ValidatingPolicies: %v bytes cached", n, cached)
	if cached <= 0 || cached > budget {
		t.Errorf("verdict_inline_policy_cache_bytes = %v, want in (0, %d]", cached, budget)
	}
	if got := metricValue(t, ts.reg, "verdict_policy_cache_evictions_total"); got != 0 {
		t.Errorf("verdict_policy_cache_evictions_total = %v, want 0", got)
	}
	if got := metricValue(t, ts.reg, "verdict_policy_compilations_total"); got != n {
		t.Errorf("verdict_policy_compilations_total = %v after sending %d policies twice, want %d", got, n, n)
	}
}
