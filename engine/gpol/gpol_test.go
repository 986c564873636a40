package gpol_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/gpol"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// policyDoc is a GeneratingPolicy on Namespaces (CREATE) with the given
// kind, version and spec fields after matchConstraints.
func policyDoc(kind, version, rest string) string {
	return fmt.Sprintf(`apiVersion: policies.kyverno.io/%s
kind: %s
metadata: {name: gen, namespace: team}
spec:
  matchConstraints: {resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [namespaces, configmaps]}]}
%s`, version, kind, rest)
}

func compile(t *testing.T, src string) *gpol.Policy {
	t.Helper()
	docs, err := gpol.Policies.Decode("test", []byte(src))
	if err != nil || len(docs) != 1 {
		t.Fatalf("Decode() = %d documents, error %v; want 1", len(docs), err)
	}
	p, err := gpol.Compile(docs[0])
	if err != nil {
		t.Fatalf("Compile() error: %v", err)
	}
	return p
}

func TestDecodeVersions(t *testing.T) {
	tests := map[string][]string{
		"GeneratingPolicy":           {"v1", "v1beta1", "v1alpha1"},
		"NamespacedGeneratingPolicy": {"v1", "v1beta1"},
	}
	for kind, versions := range tests {
		for _, version := range versions {
			t.Run(kind+"/"+version, func(t *testing.T) {
				// A namespaced policy's generator.Apply takes no namespace.
				expr, ns := `generator.Apply("a", [])`, ""
				if kind == "NamespacedGeneratingPolicy" {
					expr, ns = `generator.Apply([])`, "team"
				}
				p := compile(t, policyDoc(kind, version, "  generate: [{expression: '"+expr+"'}]\n"))
				got := []string{p.Kind, p.Name, p.Namespace}
				if diff := cmp.Diff([]string{kind, "gen", ns}, got); diff != "" {
					t.Errorf("Compile(%s %s) identity (-want +got):\n%s", kind, version, diff)
				}
			})
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, give string
		code       engine.Code
		path       string
	}{
		{"unknown field", policyDoc("GeneratingPolicy", "v1", "  generate: [{expresion: x}]\n"), engine.CodeDecode, "spec.generate[0].expresion"},
		{"wrong type", policyDoc("GeneratingPolicy", "v1", "  generate: {expression: x}\n"), engine.CodeDecode, "spec.generate"},
		{"version not served", policyDoc("NamespacedGeneratingPolicy", "v1alpha1", "  generate: []\n"), engine.CodeUnsupported, "apiVersion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := gpol.Policies.Decode("test", []byte(tt.give))
			if !hasError(err, tt.code, tt.path) {
				t.Errorf("Decode(%s) = %v, want %s at %s", tt.name, err, tt.code, tt.path)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name, rest string
		code       engine.Code
		path       string
	}{
		{"no generation", "  generate: []\n", engine.CodeInvalidPolicy, "spec.generate"},
		{"template not a mapping", "  generate: [{template: {value: '- a'}}]\n", engine.CodeInvalidPolicy, "spec.generate[0].template.value"},
		{"template placeholder", "  generate: [{template: {interpolate: cel, value: 'a: ((object.))'}}]\n", engine.CodeInvalidPolicy, "spec.generate[0].template.value"},
		{"template placeholder in a key", "  generate: [{template: {interpolate: cel, value: '((a)): b'}}]\n", engine.CodeInvalidPolicy, "spec.generate[0].template.value"},
		{"template unterminated", "  generate: [{template: {interpolate: cel, value: 'a: ((b'}}]\n", engine.CodeInvalidPolicy, "spec.generate[0].template.value"},
		{"both", "  generate: [{expression: 'true', template: {value: 'a: b'}}]\n", engine.CodeInvalidPolicy, "spec.generate[0]"},
		{"bad expression", "  generate: [{expression: 'generator.Apply('}]\n", engine.CodeInvalidPolicy, "spec.generate[0].expression"},
		{"non-object items", "  generate: [{expression: 'generator.Apply(\"a\", [1])'}]\n", engine.CodeInvalidPolicy, "spec.generate[0].expression"},
		{"match condition not bool", "  matchConditions: [{name: a, expression: '1'}]\n  generate: [{expression: 'true'}]\n", engine.CodeInvalidPolicy, "spec.matchConditions[0].expression"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := gpol.Policies.Decode("test", []byte(policyDoc("GeneratingPolicy", "v1", tt.rest)))
			if err != nil {
				t.Fatalf("Decode() error: %v", err)
			}
			_, err = gpol.Compile(docs[0])
			if !hasError(err, tt.code, tt.path) {
				t.Errorf("Compile(%s) = %v, want %s at %s", tt.name, err, tt.code, tt.path)
			}
		})
	}
	t.Run("no matchConstraints", func(t *testing.T) {
		docs, err := gpol.Policies.Decode("test", []byte("apiVersion: policies.kyverno.io/v1\nkind: GeneratingPolicy\nmetadata: {name: a}\nspec: {generate: [{expression: 'true'}]}\n"))
		if err != nil {
			t.Fatalf("Decode() error: %v", err)
		}
		if _, err := gpol.Compile(docs[0]); !hasError(err, engine.CodeInvalidPolicy, "spec.matchConstraints") {
			t.Errorf("Compile() = %v, want %s at spec.matchConstraints", err, engine.CodeInvalidPolicy)
		}
	})
}

func hasError(err error, code engine.Code, path string) bool {
	var errs engine.Errors
	if errors.As(err, &errs) {
		for _, e := range errs {
			if e.Code == code && e.Path == path {
				return true
			}
		}
		return false
	}
	var e *engine.Error
	return errors.As(err, &e) && e.Code == code && e.Path == path
}

// resources serves resource.List as a test's context file does.
type resources map[string][]any

func (r resources) GetResource(context.Context, string, string, string, string) (map[string]any, error) {
	return nil, errors.New("not here")
}

func (r resources) ListResources(_ context.Context, apiVersion, resource, namespace string, _ map[string]string) (map[string]any, error) {
	return map[string]any{"apiVersion": apiVersion, "kind": "List", "items": r[resource]}, nil
}

func (r resources) PostResource(context.Context, string, string, string, map[string]any) (map[string]any, error) {
	return nil, errors.New("not here")
}

func namespace(name string, extra map[string]any) map[string]any {
	meta := map[string]any{"name": name}
	for k, v := range extra {
		meta[k] = v
	}
	return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": meta}
}

func TestEvaluate(t *testing.T) {
	// Expected values from Kyverno v1.19's CLI (kyverno test) on the same
	// policies: test/cli/test-generating-policy and the policy library's
	// add-network-policy.
	netpol := `  variables:
  - {name: targetNs, expression: object.metadata.name}
  generate:
  - expression: >-
      generator.Apply(variables.targetNs, [{"kind": dyn("NetworkPolicy"), "apiVersion": dyn("networking.k8s.io/v1"),
        "metadata": dyn({"name": "default-deny"}), "spec": dyn({"podSelector": dyn({}), "policyTypes": dyn(["Ingress", "Egress"])})}])
  auditAnnotations:
  - {key: made, valueExpression: "'netpol'"}
`
	secrets := resources{"secrets": {
		map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s1", "namespace": "default"}, "data": map[string]any{"foo": "YmFy"}},
		map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s2", "namespace": "default"}},
	}}
	tests := []struct {
		name, kind, rest string
		object           map[string]any
		want             *gpol.Result
	}{{
		name: "data", kind: "GeneratingPolicy", rest: netpol, object: namespace("hello", nil),
		want: &gpol.Result{
			Result: vpol.Result{Rule: "gen", Status: vpol.StatusPass, Message: gpol.MessagePass, Properties: map[string]string{"made": "netpol"}},
			Generated: []gpol.Generated{{Namespace: "hello", Object: map[string]any{
				"kind": "NetworkPolicy", "apiVersion": "networking.k8s.io/v1", "metadata": map[string]any{"name": "default-deny"},
				"spec": map[string]any{"podSelector": map[string]any{}, "policyTypes": []any{"Ingress", "Egress"}},
			}}},
		},
	}, {
		name: "clone a list", kind: "GeneratingPolicy", object: namespace("test-ns", nil),
		rest: "  generate: [{expression: 'generator.apply(object.metadata.name, [resource.List(\"v1\", \"secrets\", \"default\")])'}]\n",
		want: &gpol.Result{
			Result: vpol.Result{Rule: "gen", Status: vpol.StatusPass, Message: gpol.MessagePass},
			Generated: []gpol.Generated{
				{Namespace: "test-ns", Object: secrets["secrets"][0].(map[string]any)},
				{Namespace: "test-ns", Object: secrets["secrets"][1].(map[string]any)},
			},
		},
	}, {
		name: "match condition false", kind: "GeneratingPolicy", object: namespace("hello", nil),
		rest: "  matchConditions: [{name: a, expression: 'false'}]\n" + netpol,
	}, {
		name: "not matched", kind: "GeneratingPolicy", rest: netpol,
		object: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "a"}},
	}, {
		name: "missing uid", kind: "GeneratingPolicy", object: namespace("hello", nil),
		rest: "  generate: [{expression: 'generator.Apply(\"a\", [{\"metadata\": dyn({\"ownerReferences\": [{\"uid\": object.metadata.uid}]})}])'}]\n",
		want: &gpol.Result{
			Result: vpol.Result{Rule: "gen", Status: vpol.StatusError, Message: gpol.MessageEvaluation + "no such key: uid"},
			Path:   "spec.generate[0].expression",
		},
	}, {
		name: "namespaced: cluster-scoped kind", kind: "NamespacedGeneratingPolicy",
		object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "namespace": "team"}},
		rest:   "  generate: [{expression: 'generator.Apply([{\"apiVersion\": dyn(\"v1\"), \"kind\": dyn(\"Namespace\"), \"metadata\": dyn({\"name\": \"x\"})}])'}]\n",
		want: &gpol.Result{
			Result: vpol.Result{Rule: "gen", Status: vpol.StatusError, Message: gpol.MessageEvaluation + `failed to generate resources: cross-scope generation denied: a policy scoped to namespace "team" cannot generate cluster-scoped resource v1/Namespace`},
			Path:   "spec.generate[0].expression",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := compile(t, policyDoc(tt.kind, "v1", tt.rest))
			in := vpol.NewInput(vpol.Request{Object: tt.object, Operation: "CREATE", Now: time.Unix(0, 0), Sources: sourcesWith(secrets)})
			got := p.Evaluate(context.Background(), in, nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Evaluate(%s) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestMaxGenerated(t *testing.T) {
	tests := []struct {
		n       int
		wantErr bool
	}{{gpol.MaxGenerated, false}, {gpol.MaxGenerated + 1, true}}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			rest := fmt.Sprintf("  generate: [{expression: 'generator.Apply(\"a\", lists.range(%d).map(i, {\"apiVersion\": dyn(\"v1\"), \"kind\": dyn(\"ConfigMap\"), \"metadata\": dyn({\"name\": \"cm-\" + string(i)})}))'}]\n", tt.n)
			p := compile(t, policyDoc("GeneratingPolicy", "v1", rest))
			in := vpol.NewInput(vpol.Request{Object: namespace("a", nil), Operation: "CREATE"})
			got := p.Evaluate(context.Background(), in, nil)
			if tt.wantErr {
				if got.Status != vpol.StatusError || !strings.Contains(got.Message, gpol.ErrTooMany.Error()) || len(got.Generated) != 0 {
					t.Errorf("Evaluate(%d resources) = %s %q with %d resources, want an error naming the limit and none", tt.n, got.Status, got.Message, len(got.Generated))
				}
				return
			}
			if got.Status != vpol.StatusPass || len(got.Generated) != tt.n {
				t.Errorf("Evaluate(%d resources) = %s %q with %d resources, want pass with %d", tt.n, got.Status, got.Message, len(got.Generated), tt.n)
			}
		})
	}
}

func sourcesWith(r resources) kyvernocel.Sources { return kyvernocel.Sources{Resources: r} }

func TestEvaluateTemplates(t *testing.T) {
	// Expected values from Kyverno v1.19's CLI (kyverno test,
	// test/cli/test-generating-policy/template) and its gpol template
	// rules (whole-value placeholders splice any value, embedded ones
	// interpolate scalars, \(( is a literal, a namespaced policy's
	// resources default to its namespace and stay in it).
	tpl := `  variables:
  - {name: labels, expression: '{"team": "platform"}'}
  generate:
  - template:
      interpolate: cel
      value: |
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: (( object.metadata.name ))-config
          labels: (( variables.labels ))
        data:
          count: (( 1 + 2 ))
          text: 'n=(( 1 + 2 )) ok=(( true )) \((x))'
`
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "team-config", "labels": map[string]any{"team": "platform"}},
		"data":     map[string]any{"count": int64(3), "text": "n=3 ok=true ((x))"}}
	tests := []struct {
		name, kind, rest string
		want             *gpol.Result
	}{{
		name: "interpolated", kind: "GeneratingPolicy", rest: tpl,
		want: &gpol.Result{
			Result:    vpol.Result{Rule: "gen", Status: vpol.StatusPass, Message: gpol.MessagePass},
			Generated: []gpol.Generated{{Namespace: "", Object: cm}},
		},
	}, {
		name: "namespaced: default namespace", kind: "NamespacedGeneratingPolicy", rest: tpl,
		want: &gpol.Result{
			Result:    vpol.Result{Rule: "gen", Status: vpol.StatusPass, Message: gpol.MessagePass},
			Generated: []gpol.Generated{{Namespace: "team", Object: cm}},
		},
	}, {
		name: "plain", kind: "GeneratingPolicy",
		rest: "  generate: [{template: {value: \"apiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: ((a)), namespace: x}\\n\"}}]\n",
		want: &gpol.Result{
			Result:    vpol.Result{Rule: "gen", Status: vpol.StatusPass, Message: gpol.MessagePass},
			Generated: []gpol.Generated{{Namespace: "x", Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "((a))", "namespace": "x"}}}},
		},
	}, {
		name: "namespaced: other namespace", kind: "NamespacedGeneratingPolicy",
		rest: "  generate: [{template: {value: \"apiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: a, namespace: other}\\n\"}}]\n",
		want: &gpol.Result{
			Result: vpol.Result{Rule: "gen", Status: vpol.StatusError, Message: gpol.MessageEvaluation + `cross-namespace generation denied: a policy in namespace "team" cannot generate resources into namespace "other"`},
			Path:   "spec.generate[0].template.value",
		},
	}, {
		name: "embedded map", kind: "GeneratingPolicy",
		rest: "  generate: [{template: {interpolate: cel, value: \"apiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: 'a-((object.metadata))'}\\n\"}}]\n",
		want: &gpol.Result{
			Result: vpol.Result{Rule: "gen", Status: vpol.StatusError, Message: gpol.MessageEvaluation + `failed to render generation template: document 1: field "metadata": field "name": placeholder "object.metadata" embedded in a string must evaluate to a scalar, got map[string]interface {}; use a whole-value placeholder for structured results`},
			Path:   "spec.generate[0].template.value",
		},
	}}
	obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "team", "namespace": "team"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := compile(t, policyDoc(tt.kind, "v1", tt.rest))
			in := vpol.NewInput(vpol.Request{Object: obj, Operation: "CREATE"})
			got := p.Evaluate(context.Background(), in, nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Evaluate(%s) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}
