package celrule

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyverno"
)

func pod() map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "p1", "namespace": "ns1"},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
	}
}

func input() *Input {
	return NewInput(Request{Version: "v1", Kind: "Pod", Name: "p1", Namespace: "ns1", Operation: "CREATE"}, pod(), nil, nil, nil)
}

func mustCompile(t *testing.T, spec Spec) *Rule {
	t.Helper()
	r, err := Compile(spec, "spec.rules[0].validate.cel")
	if err != nil {
		t.Fatalf("Compile() error = %v", err)
	}
	return r
}

func TestEvaluate(t *testing.T) {
	nested := "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, a + b + c + d + e + f > 0))))))"
	tests := []struct {
		name    string
		give    kyverno.CEL
		message string
		want    Outcome
	}{
		{
			name: "pass",
			give: kyverno.CEL{Expressions: []kyverno.CELExpression{{Expression: "object.metadata.name == 'p1'"}}},
			want: Outcome{Status: Pass},
		},
		{
			name:    "rule message for expressions without one",
			give:    kyverno.CEL{Expressions: []kyverno.CELExpression{{Expression: "false"}}},
			message: "rule message",
			want:    Outcome{Status: Fail, Message: "rule message"},
		},
		{
			name: "per-call cost limit",
			give: kyverno.CEL{Expressions: []kyverno.CELExpression{{Expression: nested}}},
			want: Outcome{Status: Fail, Message: "expression '" + nested + "' resulted in error: operation cancelled: actual cost limit exceeded"},
		},
		{
			name: "message expression reads variables",
			give: kyverno.CEL{
				Variables:   []kyverno.CELVariable{{Name: "images", Expression: "object.spec.containers.map(c, c.image)"}},
				Expressions: []kyverno.CELExpression{{Expression: "variables.images.all(i, i.contains(':'))", MessageExpression: "'untagged: ' + variables.images.join(',')"}},
			},
			want: Outcome{Status: Fail, Message: "untagged: nginx"},
		},
		{
			name: "authorizer is not declared for message expressions",
			give: kyverno.CEL{Expressions: []kyverno.CELExpression{{Expression: "false", Message: "fallback", MessageExpression: "string(authorizer.group('').resource('pods').check('get').allowed())"}}},
			want: Outcome{Status: Fail, Message: "fallback"},
		},
		{
			name: "expression text in the default message is trimmed",
			give: kyverno.CEL{Expressions: []kyverno.CELExpression{{Expression: "  false\n"}}},
			want: Outcome{Status: Fail, Message: "failed expression: false"},
		},
	}
	for _, tt := range tests {
		for _, deferred := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/deferred=%t", tt.name, deferred), func(t *testing.T) {
				r := mustCompile(t, Spec{CEL: &tt.give, Message: tt.message, Deferred: deferred})
				got := r.Evaluate(context.Background(), input(), nil)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("Evaluate() mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestEvaluatePreconditions(t *testing.T) {
	tests := []struct {
		name string
		give []kyverno.MatchCondition
		want Outcome
	}{
		{name: "met", give: []kyverno.MatchCondition{{Name: "a", Expression: "object.metadata.name == 'p1'"}}, want: Outcome{Status: Fail, Message: "failed expression: false"}},
		{name: "not met", give: []kyverno.MatchCondition{{Name: "a", Expression: "object.metadata.name == 'x'"}}, want: Outcome{Status: Skip, Message: MessagePreconditionsNotMet}},
		{name: "does not compile", give: []kyverno.MatchCondition{{Name: "a", Expression: "1"}}, want: Outcome{Status: Fail, Message: "compilation error: must evaluate to bool but got int"}},
	}
	for _, tt := range tests {
		for _, deferred := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/deferred=%t", tt.name, deferred), func(t *testing.T) {
				r := mustCompile(t, Spec{Preconditions: tt.give, CEL: &kyverno.CEL{Expressions: []kyverno.CELExpression{{Expression: "false"}}}, Deferred: deferred})
				got := r.Evaluate(context.Background(), input(), nil)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("Evaluate() mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestEvaluateParams(t *testing.T) {
	spec := kyverno.CEL{
		ParamKind:   &kyverno.CELParamKind{APIVersion: "v1", Kind: "ConfigMap"},
		ParamRef:    map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"a": "b"}}, "parameterNotFoundAction": "Allow"},
		Expressions: []kyverno.CELExpression{{Expression: "object.metadata.name != params.data.name", MessageExpression: "'denied by ' + params.metadata.name"}},
	}
	r := mustCompile(t, Spec{CEL: &spec})
	cm := func(name, denied string) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": name}, "data": map[string]any{"name": denied}}
	}
	tests := []struct {
		name   string
		params []map[string]any
		want   Outcome
	}{
		{name: "no params passes", want: Outcome{Status: Pass}},
		{name: "every params resource is checked", params: []map[string]any{cm("a", "x"), cm("b", "p1")}, want: Outcome{Status: Fail, Message: "denied by b"}},
		{name: "all pass", params: []map[string]any{cm("a", "x"), cm("b", "y")}, want: Outcome{Status: Pass}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Evaluate(context.Background(), input(), tt.params)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Evaluate(%v) mismatch (-want +got):\n%s", tt.params, diff)
			}
		})
	}
	if r.Params == nil || r.Params.Selector == nil || r.Params.DenyNotFound {
		t.Errorf("Compile() Params = %+v, want a selector and Allow", r.Params)
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name     string
		give     kyverno.CEL
		wantPath string
	}{
		{name: "empty expression", give: kyverno.CEL{Expressions: []kyverno.CELExpression{{Message: "m"}}}, wantPath: "v.cel.expressions[0].expression"},
		{name: "paramKind without kind", give: kyverno.CEL{ParamKind: &kyverno.CELParamKind{APIVersion: "v1"}, ParamRef: map[string]any{"name": "a", "parameterNotFoundAction": "Deny"}}, wantPath: "v.cel.paramKind.kind"},
		{name: "paramRef without paramKind", give: kyverno.CEL{ParamRef: map[string]any{"name": "a", "parameterNotFoundAction": "Deny"}}, wantPath: "v.cel.paramKind"},
		{name: "paramRef unknown field", give: kyverno.CEL{ParamKind: &kyverno.CELParamKind{APIVersion: "v1", Kind: "ConfigMap"}, ParamRef: map[string]any{"name": "a", "parameterNotFoundAction": "Deny", "nme": "b"}}, wantPath: "v.cel.paramRef.nme"},
		{name: "audit annotation without key", give: kyverno.CEL{AuditAnnotations: []kyverno.CELAnnotation{{ValueExpression: "'x'"}}}, wantPath: "v.cel.auditAnnotations[0].key"},
		{name: "variable without name", give: kyverno.CEL{Variables: []kyverno.CELVariable{{Expression: "1"}}}, wantPath: "v.cel.variables[0].name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(Spec{CEL: &tt.give}, "v.cel")
			var es engine.Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("Compile() error = %v, want engine.Errors", err)
			}
			if es[0].Code != engine.CodeInvalidPolicy && es[0].Code != engine.CodeDecode {
				t.Errorf("Compile() code = %s, want invalid_policy or decode_error", es[0].Code)
			}
			if es[0].Path != tt.wantPath {
				t.Errorf("Compile() path = %q, want %q", es[0].Path, tt.wantPath)
			}
		})
	}
}

func TestCompileKeepsExpressionErrors(t *testing.T) {
	for _, deferred := range []bool{false, true} {
		r := mustCompile(t, Spec{CEL: &kyverno.CEL{Expressions: []kyverno.CELExpression{{Expression: "'abc'"}, {Expression: "true"}}}, Deferred: deferred})
		want := []string{"'abc': must evaluate to bool but got string"}
		if diff := cmp.Diff(want, r.CompileErrors()); diff != "" {
			t.Errorf("CompileErrors() with Deferred %t mismatch (-want +got):\n%s", deferred, diff)
		}
	}
}

// TestDeferred checks that a Deferred rule compiles its expressions when
// first evaluated, not before, and keeps Compile's problems.
func TestDeferred(t *testing.T) {
	spec := kyverno.CEL{
		Variables:   []kyverno.CELVariable{{Name: "n", Expression: "object.metadata.name"}},
		Expressions: []kyverno.CELExpression{{Expression: "variables.n == 'x'", MessageExpression: "'name ' + variables.n"}},
	}
	r := mustCompile(t, Spec{CEL: &spec, Deferred: true})
	if len(r.validations) != 0 || len(r.variables) != 0 {
		t.Errorf("Compile(Deferred) compiled %d validations and %d variables, want none before an evaluation", len(r.validations), len(r.variables))
	}
	if got, want := r.Evaluate(context.Background(), input(), nil), (Outcome{Status: Fail, Message: "name p1"}); got != want {
		t.Errorf("Evaluate() = %+v, want %+v", got, want)
	}
	if len(r.validations) != 1 || len(r.variables) != 1 {
		t.Errorf("after Evaluate(), %d validations and %d variables, want 1 and 1", len(r.validations), len(r.variables))
	}
	_, err := Compile(Spec{CEL: &kyverno.CEL{Expressions: []kyverno.CELExpression{{Message: "m"}}}, Deferred: true}, "v.cel")
	var es engine.Errors
	if !errors.As(err, &es) || len(es) == 0 || es[0].Path != "v.cel.expressions[0].expression" {
		t.Errorf("Compile(Deferred, no expression) error = %v, want one at v.cel.expressions[0].expression", err)
	}
}

func TestRequestObject(t *testing.T) {
	in := NewInput(Request{
		Group: "apps", Version: "v1", Kind: "Deployment", Name: "d", Namespace: "ns", Operation: "UPDATE",
		User: UserInfo{Username: "alice", Groups: []string{"dev"}},
	}, nil, nil, nil, nil)
	kind := map[string]any{"group": "apps", "version": "v1", "kind": "Deployment"}
	resource := map[string]any{"group": "apps", "version": "v1", "resource": ""}
	want := map[string]any{
		"uid": "", "kind": kind, "resource": resource, "requestKind": kind, "requestResource": resource,
		"name": "d", "namespace": "ns", "operation": "UPDATE", "dryRun": false, "options": nil,
		"userInfo": map[string]any{"username": "alice", "groups": []any{"dev"}},
	}
	if diff := cmp.Diff(want, in.request); diff != "" {
		t.Errorf("NewInput().request mismatch (-want +got):\n%s", diff)
	}
	wantNS := map[string]any{"metadata": map[string]any{"name": "ns", "creationTimestamp": nil}, "spec": map[string]any{}, "status": map[string]any{}}
	if diff := cmp.Diff(wantNS, in.namespace); diff != "" {
		t.Errorf("NewInput().namespace mismatch (-want +got):\n%s", diff)
	}
}

func TestNamespaceObjectKeepsKubernetesFields(t *testing.T) {
	ns := map[string]any{
		"metadata": map[string]any{"name": "ns", "labels": map[string]any{"a": "b"}, "managedFields": []any{}, "uid": "u"},
		"spec":     map[string]any{"finalizers": []any{"kubernetes"}},
	}
	want := map[string]any{
		"metadata": map[string]any{"name": "ns", "labels": map[string]any{"a": "b"}, "uid": "u", "creationTimestamp": nil},
		"spec":     map[string]any{"finalizers": []any{"kubernetes"}},
		"status":   map[string]any{},
	}
	if diff := cmp.Diff(want, NamespaceObject("ns", ns)); diff != "" {
		t.Errorf("NamespaceObject() mismatch (-want +got):\n%s", diff)
	}
}

// TestEvaluateConcurrently shares one compiled rule and one Input between
// goroutines (run with -race).
func TestEvaluateConcurrently(t *testing.T) {
	r := mustCompile(t, Spec{CEL: &kyverno.CEL{
		Variables:   []kyverno.CELVariable{{Name: "names", Expression: "object.spec.containers.map(c, c.name)"}},
		Expressions: []kyverno.CELExpression{{Expression: "variables.names.all(n, n == 'x')", MessageExpression: "'names: ' + variables.names.join(',')"}},
	}})
	noVars := mustCompile(t, Spec{CEL: &kyverno.CEL{Expressions: []kyverno.CELExpression{{Expression: "object.metadata.name == 'p1'"}}}})
	// The same rules, compiled by whichever evaluation comes first.
	deferred := mustCompile(t, Spec{CEL: &kyverno.CEL{
		Variables:   []kyverno.CELVariable{{Name: "names", Expression: "object.spec.containers.map(c, c.name)"}},
		Expressions: []kyverno.CELExpression{{Expression: "variables.names.all(n, n == 'x')", MessageExpression: "'names: ' + variables.names.join(',')"}},
	}, Deferred: true})
	deferredNoVars := mustCompile(t, Spec{CEL: &kyverno.CEL{Expressions: []kyverno.CELExpression{{Expression: "object.metadata.name == 'p1'"}}}, Deferred: true})
	in := input()
	done := make(chan Outcome, 32)
	for i := 0; i < 8; i++ {
		go func() { done <- r.Evaluate(context.Background(), in, nil) }()
		go func() { done <- noVars.Evaluate(context.Background(), in, nil) }()
		go func() { done <- deferred.Evaluate(context.Background(), in, nil) }()
		go func() { done <- deferredNoVars.Evaluate(context.Background(), in, nil) }()
	}
	for i := 0; i < 32; i++ {
		got := <-done
		if got != (Outcome{Status: Fail, Message: "names: c"}) && got != (Outcome{Status: Pass}) {
			t.Errorf("Evaluate() = %+v", got)
		}
	}
}

// TestSharedEnvs compiles rules without variables from several goroutines
// at once (they share one environment per params and authorizer) between
// rules with variables (each its own): each rule sees its own variables
// only.
func TestSharedEnvs(t *testing.T) {
	tests := []struct {
		name       string
		give       kyverno.CEL
		want       Outcome
		wantErrors []string
	}{
		{
			name: "no variables",
			give: kyverno.CEL{Expressions: []kyverno.CELExpression{{Expression: "object.metadata.name == 'p1'"}}},
			want: Outcome{Status: Pass},
		},
		{
			name: "variables",
			give: kyverno.CEL{
				Variables:   []kyverno.CELVariable{{Name: "name", Expression: "object.metadata.name"}},
				Expressions: []kyverno.CELExpression{{Expression: "variables.name == 'p2'", MessageExpression: "'name ' + variables.name"}},
			},
			want: Outcome{Status: Fail, Message: "name p1"},
		},
		{
			name:       "another rule's variable",
			give:       kyverno.CEL{Expressions: []kyverno.CELExpression{{Expression: "variables.name == 'p1'"}}},
			wantErrors: []string{"variables.name == 'p1': compilation failed: ERROR: <input>:1:10: undefined field 'name'\n | variables.name == 'p1'\n | .........^"},
		},
	}
	const rounds = 4
	type got struct {
		name    string
		outcome Outcome
		errs    []string
	}
	out := make(chan got, rounds*len(tests))
	for range rounds {
		for _, tt := range tests {
			go func() {
				r, err := Compile(Spec{CEL: &tt.give}, "v.cel")
				if err != nil {
					t.Errorf("%s: Compile() error = %v", tt.name, err)
					out <- got{name: tt.name}
					return
				}
				g := got{name: tt.name, errs: r.CompileErrors()}
				if len(g.errs) == 0 {
					g.outcome = r.Evaluate(context.Background(), input(), nil)
				}
				out <- g
			}()
		}
	}
	want := map[string]got{}
	for _, tt := range tests {
		want[tt.name] = got{name: tt.name, outcome: tt.want, errs: tt.wantErrors}
	}
	for range rounds * len(tests) {
		g := <-out
		if diff := cmp.Diff(want[g.name], g, cmp.AllowUnexported(got{})); diff != "" {
			t.Errorf("%s: Compile() and Evaluate() mismatch (-want +got):\n%s", g.name, diff)
		}
	}
}
