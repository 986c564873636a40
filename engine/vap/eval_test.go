package vap_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine/vap"
)

func compile(t *testing.T, data string) (*vap.Policy, []*vap.Binding) {
	t.Helper()
	docs, err := vap.Decode("test", []byte(data))
	if err != nil || len(docs) != 1 {
		t.Fatalf("Decode() = %d documents, error %v, want 1", len(docs), err)
	}
	p, err := vap.Compile(docs[0])
	if err != nil {
		t.Fatalf("Compile() error: %v", err)
	}
	bdocs, err := vap.DecodeBindings("test", []byte(data))
	if err != nil {
		t.Fatalf("DecodeBindings() error: %v", err)
	}
	var bs []*vap.Binding
	for _, d := range bdocs {
		b, err := vap.CompileBinding(d)
		if err != nil {
			t.Fatalf("CompileBinding() error: %v", err)
		}
		bs = append(bs, b)
	}
	return p, bs
}

func deployment(name string, replicas int) map[string]any {
	return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": "prod"}, "spec": map[string]any{"replicas": float64(replicas)}}
}

// TestEvaluateParams checks what Evaluate asks Params for and how it
// shapes their answer, in both modes (the cases of
// engine/cases/testdata/vap/params.yaml go through eval's Lookup).
func TestEvaluateParams(t *testing.T) {
	p, bs := compile(t, minimalPolicy)
	type call struct {
		Kind         vap.ParamKind
		Binding      string
		Name, NS, In string
	}
	tests := []struct {
		name     string
		giveCLI  bool
		giveObjs []map[string]any
		giveErr  error
		want     vap.Result
		wantOK   bool
	}{
		{
			name:     "one object",
			giveObjs: []map[string]any{{"data": map[string]any{"max": "5"}}},
			want:     vap.Result{Status: vap.StatusPass, Binding: "check-replicas-binding"},
			wantOK:   true,
		},
		{
			name:    "lookup error",
			giveErr: fmt.Errorf("configmaps \"limits\" is forbidden"),
			want:    vap.Result{Status: vap.StatusError, Message: "failed to collect params of binding check-replicas-binding: configmaps \"limits\" is forbidden", Binding: "check-replicas-binding"},
			wantOK:  true,
		},
		{
			name:   "none found with Deny",
			want:   vap.Result{Status: vap.StatusError, Message: "no params found", Binding: "check-replicas-binding"},
			wantOK: true,
		},
		{
			name:    "none found in the CLI",
			giveCLI: true,
			want:    vap.Result{Status: vap.StatusPass, Binding: "check-replicas-binding"},
			wantOK:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []call
			opts := vap.Options{CLI: tt.giveCLI, Params: func(_ context.Context, k *vap.ParamKind, b *vap.Binding, ns string) ([]map[string]any, error) {
				calls = append(calls, call{Kind: *k, Binding: b.Name(), Name: b.ParamRef.Name, NS: b.ParamRef.Namespace, In: ns})
				return tt.giveObjs, tt.giveErr
			}}
			in := vap.NewInput(vap.Request{Object: deployment("d1", 3), NamespaceLabels: map[string]string{"env": "prod"}}, opts)
			got, ok := p.Evaluate(t.Context(), in, bs)
			if ok != tt.wantOK {
				t.Fatalf("Evaluate(%s) ok = %v, want %v", tt.name, ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Evaluate(%s) (-want +got):\n%s", tt.name, diff)
			}
			wantCalls := []call{{Kind: vap.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}, Binding: "check-replicas-binding", Name: "limits", NS: "team", In: "prod"}}
			if diff := cmp.Diff(wantCalls, calls); diff != "" {
				t.Errorf("Evaluate(%s) Params calls (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestEvaluateConcurrently evaluates one compiled policy from many
// goroutines (run with -race): a Policy and an Input are never written.
func TestEvaluateConcurrently(t *testing.T) {
	p, _ := compile(t, `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  variables:
  - {name: replicas, expression: object.spec.replicas}
  validations:
  - expression: variables.replicas <= 2
    messageExpression: "'replicas: ' + string(variables.replicas)"
`)
	shared := vap.NewInput(vap.Request{Object: deployment("shared", 5)}, vap.Options{})
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 20 {
				n := (i + j) % 5
				own := vap.NewInput(vap.Request{Object: deployment("d", n)}, vap.Options{})
				for _, c := range []struct {
					in   *vap.Input
					want vap.Result
				}{
					{shared, vap.Result{Status: vap.StatusFail, Message: "replicas: 5"}},
					{own, map[bool]vap.Result{true: {Status: vap.StatusPass}, false: {Status: vap.StatusFail, Message: fmt.Sprintf("replicas: %d", n)}}[n <= 2]},
				} {
					got, ok := p.Evaluate(context.Background(), c.in, nil)
					if !ok || got != c.want {
						errs <- fmt.Sprintf("Evaluate() = %+v, %v, want %+v", got, ok, c.want)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
