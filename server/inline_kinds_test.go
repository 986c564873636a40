package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// generatingPolicy returns a GeneratingPolicy named name that generates
// one ConfigMap per generation (n of them) in the Pod's namespace.
func generatingPolicy(name string, n int) string {
	gen := `  - expression: >-
      generator.Apply(object.metadata.namespace, [{"apiVersion": dyn("v1"), "kind": dyn("ConfigMap"),
        "metadata": dyn({"name": "from-" + object.metadata.name}), "data": dyn({"k": "v"})}])
`
	return `apiVersion: policies.kyverno.io/v1
kind: GeneratingPolicy
metadata:
  name: ` + name + `
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [pods]
  generate:
` + strings.Repeat(gen, n)
}

// namespacedGeneratingPolicy is generatingPolicy as a
// NamespacedGeneratingPolicy of namespace default (whose generator.Apply
// takes the objects only).
func namespacedGeneratingPolicy(name string) string {
	p := strings.Replace(generatingPolicy(name, 1), "kind: GeneratingPolicy", "kind: NamespacedGeneratingPolicy", 1)
	p = strings.Replace(p, "  name: "+name+"\n", "  name: "+name+"\n  namespace: default\n", 1)
	return strings.Replace(p, "generator.Apply(object.metadata.namespace, ", "generator.Apply(", 1)
}

// deletingPolicy is a DeletingPolicy of Pods on schedule.
func deletingPolicy(name, schedule string) string {
	return `apiVersion: policies.kyverno.io/v1
kind: DeletingPolicy
metadata:
  name: ` + name + `
spec:
  schedule: "` + schedule + `"
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      resources: [pods]
  conditions:
  - name: old
    expression: "true"
`
}

// TestInlineOtherKinds sends GeneratingPolicies, DeletingPolicies and
// ImageValidatingPolicies inline, as ValidatingPolicies and
// MutatingPolicies are: each gives what it gives from the server's
// folder (a GeneratingPolicy its result and generate intents, an
// ImageValidatingPolicy its decision; a DeletingPolicy nothing at
// admission, where its schedule runs it elsewhere).
func TestInlineOtherKinds(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.client(t)
	obj := pod(t, "p", "default", "registry.example/app:v1", map[string]string{"team": "a"})
	tests := []struct {
		name        string
		give        []string
		wantAllowed bool
		want        []result
		wantIntents []string
	}{
		{
			name:        "GeneratingPolicy",
			give:        []string{generatingPolicy("gen-cm", 1)},
			wantAllowed: true,
			want:        []result{{"gen-cm", "gen-cm", verdictv1.Result_RESULT_PASS, false}},
			wantIntents: []string{"gen-cm default/from-p"},
		},
		{
			name:        "NamespacedGeneratingPolicy with a ClusterPolicy in one document",
			give:        []string{teamLabelPolicy + "---\n" + namespacedGeneratingPolicy("ns-gen")},
			wantAllowed: true,
			want: []result{
				{"require-team-label", "check-team", verdictv1.Result_RESULT_PASS, true},
				{"ns-gen", "ns-gen", verdictv1.Result_RESULT_PASS, false},
			},
			wantIntents: []string{"ns-gen default/from-p"},
		},
		{
			name:        "DeletingPolicy",
			give:        []string{deletingPolicy("cleanup", "*/5 * * * *")},
			wantAllowed: true,
		},
		{
			name: "ImageValidatingPolicy",
			give: []string{imageValidatingPolicy("signed", "[Deny]", "{mutateDigest: false}")},
			want: []result{{"signed", "signed", verdictv1.Result_RESULT_FAIL, true}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.Evaluate(t.Context(), inlineDocs(obj, tt.give...))
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if got.GetAllowed() != tt.wantAllowed {
				t.Errorf("Evaluate(%s) allowed = %v (%q), want %v", tt.name, got.GetAllowed(), got.GetMessage(), tt.wantAllowed)
			}
			if diff := cmp.Diff(tt.want, resultsOf(got)); diff != "" {
				t.Errorf("Evaluate(%s) results (-want +got):\n%s", tt.name, diff)
			}
			var intents []string
			for _, g := range got.GetGenerates() {
				intents = append(intents, g.GetPolicy()+" "+intentName(t, g.GetResource()))
			}
			if diff := cmp.Diff(tt.wantIntents, intents); diff != "" {
				t.Errorf("Evaluate(%s) generate intents (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestInlineOtherKindsErrors: an inline GeneratingPolicy, DeletingPolicy
// or ImageValidatingPolicy that does not decode or compile fails the call
// with INVALID_ARGUMENT naming the document and the field.
func TestInlineOtherKindsErrors(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.client(t)
	tests := []struct {
		name string
		give []string
		want []violation
	}{
		{
			name: "GeneratingPolicy whose generator does not compile",
			give: []string{teamLabelPolicy, strings.Replace(generatingPolicy("g", 1), "generator.Apply(", "generator.Apply((", 1)},
			want: []violation{{"inline_policies.documents[1].spec.generate[0].expression", "invalid_policy"}},
		},
		{
			name: "DeletingPolicy whose schedule does not parse",
			give: []string{deletingPolicy("d", "every minute")},
			want: []violation{{"inline_policies.documents[0].spec.schedule", "invalid_policy"}},
		},
		{
			name: "ImageValidatingPolicy with an unknown field",
			give: []string{strings.Replace(imageValidatingPolicy("i", "[Deny]", "{}"), "  attestors:", "  atestors:", 1)},
			want: []violation{{"inline_policies.documents[0].spec.atestors", "decode_error"}},
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

// TestInlineOtherKindsLimits: the generations of a GeneratingPolicy, the
// conditions of a DeletingPolicy and the validations of an
// ImageValidatingPolicy count as rules for MaxRequestPolicyRules; at the
// limit the call is answered, over it it fails with RESOURCE_EXHAUSTED.
func TestInlineOtherKindsLimits(t *testing.T) {
	const maxRules = 3
	ts := startServer(t, Options{MaxRequestPolicyRules: maxRules})
	c := ts.client(t)
	obj := pod(t, "p", "default", "nginx", map[string]string{"team": "a"})
	tests := []struct {
		name string
		give []string
		over bool
	}{
		{"generations at the limit", []string{generatingPolicy("at", maxRules)}, false},
		{"generations over the limit", []string{generatingPolicy("over", maxRules+1)}, true},
		{"mixed kinds at the limit", []string{generatingPolicy("g", 1) + "---\n" + deletingPolicy("d", "* * * * *") + "---\n" + imageValidatingPolicy("i", "[Audit]", "{mutateDigest: false}")}, false},
		{"mixed kinds over the limit", []string{generatingPolicy("g", 2) + "---\n" + deletingPolicy("d", "* * * * *") + "---\n" + imageValidatingPolicy("i", "[Audit]", "{mutateDigest: false}")}, true},
	}
	for _, tt := range tests {
		_, err := c.Evaluate(t.Context(), inlineDocs(obj, tt.give...))
		code, vs := statusOf(err)
		switch {
		case !tt.over && err != nil:
			t.Errorf("Evaluate(inline %s): %v, want no error", tt.name, err)
		case tt.over:
			if want := []violation{{"inline_policies.documents", "limit_exceeded"}}; code != codes.ResourceExhausted || !cmp.Equal(vs, want) {
				t.Errorf("Evaluate(inline %s): code %v, violations %v; want ResourceExhausted, %v", tt.name, code, vs, want)
			}
		}
	}
}

// intentName is "namespace/name" of a generate intent's resource.
func intentName(t *testing.T, resource []byte) string {
	t.Helper()
	var obj struct {
		Metadata struct{ Name, Namespace string }
	}
	if err := json.Unmarshal(resource, &obj); err != nil {
		t.Fatalf("generate intent resource: %v", err)
	}
	return obj.Metadata.Namespace + "/" + obj.Metadata.Name
}

// TestInlineImageValidatingPolicyRegistryCalls: an inline
// ImageValidatingPolicy reaches the ImageVerifier only with
// Options.ImageVerifyInlinePolicies; otherwise its image functions fail
// ("refused", an error result) and nothing is verified.
func TestInlineImageValidatingPolicyRegistryCalls(t *testing.T) {
	image := "registry.example/app@" + testDigest
	tests := []struct {
		name    string
		allow   bool
		want    verdictv1.Result
		wantMsg string
	}{
		{"refused by default", false, verdictv1.Result_RESULT_ERROR, "refused: registry calls are not allowed in inline ImageValidatingPolicies"},
		{"allowed", true, verdictv1.Result_RESULT_PASS, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t, Options{ImageVerifier: keyVerifier{trusted: "registry.example"}, ImageVerifyInlinePolicies: tt.allow})
			got, err := ts.client(t).Evaluate(t.Context(), inlineDocs(pod(t, "p", "default", image, nil), imageValidatingPolicy("signed", "[Deny]", "{mutateDigest: false}")))
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			rs := got.GetResults()
			if len(rs) != 1 || rs[0].GetResult() != tt.want || !strings.Contains(rs[0].GetMessage(), tt.wantMsg) {
				t.Errorf("Evaluate(inline ImageValidatingPolicy) results = %v, want one %v with %q", rs, tt.want, tt.wantMsg)
			}
		})
	}
}
