package kyvernocel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/cel-go/cel"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
)

type mapResources map[string]map[string]any

func (m mapResources) GetResource(_ context.Context, apiVersion, resource, namespace, name string) (map[string]any, error) {
	if o, ok := m[apiVersion+"/"+resource+"/"+namespace+"/"+name]; ok {
		return o, nil
	}
	return nil, engine.ErrNotFound
}

func (m mapResources) ListResources(_ context.Context, apiVersion, resource, namespace string, _ map[string]string) (map[string]any, error) {
	var items []any
	for _, o := range m {
		items = append(items, o)
	}
	return map[string]any{"items": items}, nil
}

func (m mapResources) PostResource(_ context.Context, _, _, _ string, data map[string]any) (map[string]any, error) {
	return data, nil
}

func TestExpressions(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sources := kyvernocel.Sources{Resources: mapResources{"v1/configmaps/ns/cm": {"data": map[string]any{"k": "v"}}}}
	tests := []struct {
		name    string
		give    string
		want    any
		wantErr bool
	}{
		{name: "object", give: "object.metadata.name", want: "p"},
		{name: "request", give: "request.operation", want: "CREATE"},
		{name: "resource.Get", give: "resource.Get('v1', 'configmaps', 'ns', 'cm').data.k", want: "v"},
		{name: "resource.Get not found is null", give: "type(resource.Get('v1', 'configmaps', 'ns', 'x')) == null_type", want: true},
		{name: "resource.List", give: "size(resource.List('v1', 'configmaps', 'ns').items)", want: int64(1)},
		{name: "time.now", give: "time.now() == timestamp('2026-01-02T03:04:05Z')", want: true},
		{name: "image", give: "image('nginx:1.2').tag()", want: "1.2"},
		{name: "exceptions", give: "size(exceptions.allowedValues)", want: int64(1)},
		{name: "orValue on a value", give: "object.metadata.name.orValue('x')", want: "p"},
		{name: "optional orValue", give: "object.?spec.orValue('none')", want: "none"},
		{name: "cross-type numeric", give: "1 < 1.5", want: true},
		{name: "no data source", give: "http.Get('https://example.com') == null", wantErr: true},
		{name: "json", give: "json.unmarshal('{\"a\": 1}').a", want: float64(1)},
	}
	env, err := kyvernocel.NewEnv("")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prog, _, err := env.Compile(tt.give)
			if err != nil {
				t.Fatalf("Compile(%q) error: %v", tt.give, err)
			}
			act := kyvernocel.NewActivation(t.Context(), sources, now)
			act.Object = map[string]any{"metadata": map[string]any{"name": "p"}}
			act.Request = map[string]any{"operation": "CREATE"}
			act.SetExceptions(nil, []string{"a"})
			out, _, err := prog.ContextEval(t.Context(), act)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Eval(%q) error = %v, want error %v", tt.give, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got := out.Value(); got != tt.want {
				t.Errorf("Eval(%q) = %v (%T), want %v (%T)", tt.give, got, got, tt.want, tt.want)
			}
		})
	}
}

func TestCompileType(t *testing.T) {
	env, err := kyvernocel.NewEnv("")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := env.Compile("'a'", cel.BoolType); err == nil {
		t.Errorf("Compile('a', bool) = nil error, want a type error")
	}
	if _, _, err := env.Compile("unknownFunction()"); err == nil {
		t.Errorf("Compile(unknownFunction()) = nil error, want an error")
	}
}

func BenchmarkNewEnv(b *testing.B) {
	for b.Loop() {
		if _, err := kyvernocel.NewEnv("ns"); err != nil {
			b.Fatal(err)
		}
	}
}

func TestExpressionSizeLimit(t *testing.T) {
	env, err := kyvernocel.NewEnv("")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		give    string
		wantErr bool
	}{
		{name: "at the limit", give: "true" + strings.Repeat(" ", kyvernocel.MaxExpressionSize-4)},
		{name: "over the limit", give: "true" + strings.Repeat(" ", kyvernocel.MaxExpressionSize-3), wantErr: true},
		{name: "deep", give: strings.Repeat("(", kyvernocel.MaxExpressionDepth+1) + "true" + strings.Repeat(")", kyvernocel.MaxExpressionDepth+1), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := env.Compile(tt.give, cel.BoolType)
			if (err != nil) != tt.wantErr {
				t.Errorf("Compile(%d code points) error = %v, want error %v", len(tt.give), err, tt.wantErr)
			}
		})
	}
}

func TestCostLimit(t *testing.T) {
	env, err := kyvernocel.NewEnv("")
	if err != nil {
		t.Fatal(err)
	}
	// A list of n elements costs about n per comprehension over it.
	tests := []struct {
		name    string
		give    string
		wantErr bool
	}{
		{name: "under the limit", give: "object.items.all(i, i >= 0)"},
		{name: "over the limit", give: "object.items.all(i, object.items.all(j, i + j >= 0))", wantErr: true},
	}
	items := make([]any, 1_000)
	for i := range items {
		items[i] = int64(i)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prog, _, err := env.Compile(tt.give, cel.BoolType)
			if err != nil {
				t.Fatal(err)
			}
			act := kyvernocel.NewActivation(t.Context(), kyvernocel.Sources{}, time.Now())
			act.Object = map[string]any{"items": items}
			_, _, err = prog.ContextEval(t.Context(), act)
			if (err != nil) != tt.wantErr {
				t.Errorf("Eval(%s) error = %v, want error %v", tt.give, err, tt.wantErr)
			}
		})
	}
}

// callerHTTP answers http.Get with the policy CallingPolicy finds in the
// call's context.
type callerHTTP struct{}

func (callerHTTP) Get(ctx context.Context, _ string, _ map[string]string) (any, error) {
	p, ok := kyvernocel.CallingPolicy(ctx)
	if !ok {
		return map[string]any{"caller": "none"}, nil
	}
	return map[string]any{"caller": p.Kind + "/" + p.Namespace + "/" + p.Name}, nil
}

func (callerHTTP) Post(ctx context.Context, url string, _ any, headers map[string]string) (any, error) {
	return callerHTTP{}.Get(ctx, url, headers)
}

func (callerHTTP) Client(string) (kyvernocel.HTTP, error) { return callerHTTP{}, nil }

// TestCallingPolicy: the calls of a policy's expressions to a data source
// carry the policy SetPolicy named (so the host can decide by policy);
// without it, none.
func TestCallingPolicy(t *testing.T) {
	env, err := kyvernocel.NewEnv("")
	if err != nil {
		t.Fatal(err)
	}
	prog, _, err := env.Compile("http.Get('https://example.com').caller")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		give *kyvernocel.PolicyRef
		want string
	}{
		{"named", &kyvernocel.PolicyRef{Kind: "NamespacedValidatingPolicy", Namespace: "team-a", Name: "p"}, "NamespacedValidatingPolicy/team-a/p"},
		{"not named", nil, "none"},
	}
	libs := kyvernocel.NewLibraries(t.Context(), kyvernocel.Sources{HTTP: callerHTTP{}})
	for _, tt := range tests {
		act := libs.NewActivation(time.Now())
		if tt.give != nil {
			act.SetPolicy(tt.give)
		}
		out, _, err := prog.ContextEval(t.Context(), act)
		if err != nil {
			t.Fatalf("Eval(%s): %v", tt.name, err)
		}
		if got := out.Value(); got != tt.want {
			t.Errorf("Eval(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestMutatingEnv checks what NewMutatingEnv adds to NewEnv: Object
// literals of any field path, JSONPatch values and jsonpatch.escapeKey,
// which NewEnv does not know.
func TestMutatingEnv(t *testing.T) {
	tests := []struct {
		name     string
		give     string
		wantType *cel.Type
	}{
		{name: "object literal", give: "Object{metadata: Object.metadata{labels: {'a': 'b'}}}", wantType: kyvernocel.ObjectType},
		{name: "json patch", give: "[JSONPatch{op: 'add', path: '/metadata/labels/' + jsonpatch.escapeKey('a/b'), value: 'x'}]", wantType: cel.ListType(kyvernocel.JSONPatchType)},
	}
	mutating, err := kyvernocel.NewMutatingEnv("")
	if err != nil {
		t.Fatal(err)
	}
	validating, err := kyvernocel.NewEnv("")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := mutating.Compile(tt.give, tt.wantType); err != nil {
				t.Errorf("NewMutatingEnv: Compile(%q, %s) error: %v", tt.give, tt.wantType, err)
			}
			if _, _, err := validating.Compile(tt.give); err == nil {
				t.Errorf("NewEnv: Compile(%q) = nil error, want an error", tt.give)
			}
		})
	}
}

// TestPolicyVariables compiles, at once, the expressions of policies of
// one namespace with and without variables: the policies without share
// the namespace's environment, and each sees its own variables only (an
// unknown one is cel-go's "undefined field", before and after the
// policy's first variable).
func TestPolicyVariables(t *testing.T) {
	tests := []struct {
		name    string
		vars    []string // each registered as an int, in order
		expr    string
		wantErr string // a part of the error; "" for none
	}{
		{name: "no variables", expr: "object.metadata.name == 'x'"},
		{name: "no variables, a variable read", expr: "variables.count > 1", wantErr: "undefined field 'count'"},
		{name: "own variable", vars: []string{"count"}, expr: "variables.count > 1"},
		{name: "another variable", vars: []string{"size"}, expr: "variables.count > 1", wantErr: "undefined field 'count'"},
		{name: "two variables", vars: []string{"size", "count"}, expr: "variables.count + variables.size > 1"},
	}
	const rounds = 4
	errs := make(chan string, rounds*len(tests))
	for range rounds {
		for _, tt := range tests {
			go func() {
				env, err := kyvernocel.NewEnv("team-vars")
				if err != nil {
					errs <- tt.name + ": NewEnv: " + err.Error()
					return
				}
				for _, v := range tt.vars {
					env.RegisterVariable(v, cel.IntType)
				}
				_, _, err = env.Compile(tt.expr, cel.BoolType)
				switch {
				case tt.wantErr == "" && err != nil:
					errs <- tt.name + ": Compile(" + tt.expr + ") error = " + err.Error() + ", want none"
				case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
					errs <- tt.name + ": Compile(" + tt.expr + ") error = " + fmt.Sprint(err) + ", want " + tt.wantErr
				default:
					errs <- ""
				}
			}()
		}
	}
	for range rounds * len(tests) {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}

// TestCompileAgain compiles expressions twice in one policy's Env: the
// same variables give the program of the first time (its type checked
// against each call's want), a changed variable compiles again.
func TestCompileAgain(t *testing.T) {
	tests := []struct {
		name     string
		first    string
		register []string // name:type registered between the two compilations
		second   string
		want     []*cel.Type // of the second
		wantSame bool
		wantType string // of the second; "" for an error
		wantErr  string
	}{
		{name: "same expression", first: "object.metadata.name", second: "object.metadata.name", wantSame: true, wantType: "dyn"},
		{name: "another expression", first: "object.metadata.name", second: "object.metadata.namespace", wantSame: false, wantType: "dyn"},
		{name: "want checked again", first: "1 + 1", second: "1 + 1", want: []*cel.Type{cel.BoolType}, wantErr: "output is expected to be of type bool"},
		{name: "same variable again", first: "variables.x + 1", register: []string{"x:int"}, second: "variables.x + 1", wantSame: true, wantType: "int"},
		{name: "a new variable", first: "variables.x + 1", register: []string{"y:int"}, second: "variables.x + 1", wantSame: false, wantType: "int"},
		{name: "a variable's type changed", first: "variables.x", register: []string{"x:string"}, second: "variables.x", wantSame: false, wantType: "string"},
	}
	types := map[string]*cel.Type{"int": cel.IntType, "string": cel.StringType}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := kyvernocel.NewEnv("")
			if err != nil {
				t.Fatal(err)
			}
			env.RegisterVariable("x", cel.IntType)
			first, _, err := env.Compile(tt.first)
			if err != nil {
				t.Fatalf("Compile(%q) error = %v", tt.first, err)
			}
			for _, r := range tt.register {
				name, typ, _ := strings.Cut(r, ":")
				env.RegisterVariable(name, types[typ])
			}
			second, typ, err := env.Compile(tt.second, tt.want...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Compile(%q) again error = %v, want %q", tt.second, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Compile(%q) again error = %v", tt.second, err)
			}
			if same := first == second; same != tt.wantSame {
				t.Errorf("Compile(%q) again: same program = %v, want %v", tt.second, same, tt.wantSame)
			}
			if got := typ.String(); got != tt.wantType {
				t.Errorf("Compile(%q) again: type = %s, want %s", tt.second, got, tt.wantType)
			}
		})
	}
}
