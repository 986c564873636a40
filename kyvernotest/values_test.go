package kyvernotest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const valuesFile = `apiVersion: cli.kyverno.io/v1alpha1
kind: Values
metadata:
  name: values
globalValues:
  request.operation: UPDATE
  shared: global
  level: global
policies:
- name: p
  resources:
  - name: r1
    values:
      level: resource
      request.operation: DELETE
  rules:
  - name: rule-a
    values:
      level: rule
      cm.data.key: value
    foreachValues:
      element: [first, second]
- name: other
  resources:
  - name: r1
    values:
      level: other-policy
namespaceSelector:
- name: ns1
  labels:
    env: dev
- name: ns2
  labels:
    env: dev
namespaces:
- apiVersion: v1
  kind: Namespace
  metadata:
    name: ns2
    labels:
      env: prod
subresources:
- subresource:
    name: deployments/scale
    kind: Scale
    group: autoscaling
    version: v1
  parentResource:
    name: deployments
    kind: Deployment
    group: apps
    version: v1
`

func TestVariablesCompute(t *testing.T) {
	spec, err := ParseValues("values.yaml", []byte(valuesFile))
	if err != nil {
		t.Fatalf("ParseValues() error = %v", err)
	}
	tests := []struct {
		name         string
		giveSet      map[string]any
		givePolicy   string
		giveResource string
		want         map[string]any
	}{
		{
			name:       "global values only",
			givePolicy: "none", giveResource: "r1",
			want: map[string]any{"request.operation": "UPDATE", "shared": "global", "level": "global"},
		},
		{
			name:       "resource values win over global values; rule values are not here",
			givePolicy: "p", giveResource: "r1",
			want: map[string]any{"request.operation": "DELETE", "shared": "global", "level": "resource"},
		},
		{
			name:       "resource values of another resource name do not apply",
			givePolicy: "p", giveResource: "r2",
			want: map[string]any{"request.operation": "UPDATE", "shared": "global", "level": "global"},
		},
		{
			name:       "set values win over resource values",
			giveSet:    map[string]any{"level": "set"},
			givePolicy: "other", giveResource: "r1",
			want: map[string]any{"request.operation": "UPDATE", "shared": "global", "level": "set"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newVariables(spec, tt.giveSet)
			got := v.compute(tt.givePolicy, tt.giveResource)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("compute(%q, %q) mismatch (-want +got):\n%s", tt.givePolicy, tt.giveResource, diff)
			}
		})
	}
}

func TestVariablesRuleValues(t *testing.T) {
	spec, err := ParseValues("values.yaml", []byte(valuesFile))
	if err != nil {
		t.Fatalf("ParseValues() error = %v", err)
	}
	tests := []struct {
		name       string
		givePolicy string
		want       map[string]map[string]any
	}{
		{
			name:       "values and the first foreach value, per rule",
			givePolicy: "p",
			want:       map[string]map[string]any{"rule-a": {"level": "rule", "cm.data.key": "value", "element": "first"}},
		},
		{name: "a policy without rule values", givePolicy: "other", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := newVariables(spec, nil).ruleValues(tt.givePolicy)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ruleValues(%q) mismatch (-want +got):\n%s", tt.givePolicy, diff)
			}
		})
	}
}

func TestVariablesDefaultOperation(t *testing.T) {
	v := newVariables(nil, nil)
	want := map[string]any{"request.operation": "CREATE"}
	if diff := cmp.Diff(want, v.compute("p", "r")); diff != "" {
		t.Errorf("compute() without values mismatch (-want +got):\n%s", diff)
	}
}

func TestVariablesNamespacesAndSubresources(t *testing.T) {
	spec, err := ParseValues("values.yaml", []byte(valuesFile))
	if err != nil {
		t.Fatalf("ParseValues() error = %v", err)
	}
	v := newVariables(spec, nil)
	wantLabels := map[string]map[string]string{"ns1": {"env": "dev"}, "ns2": {"env": "prod"}}
	if diff := cmp.Diff(wantLabels, v.nsLabels); diff != "" {
		t.Errorf("nsLabels mismatch, namespaces win (-want +got):\n%s", diff)
	}
	g, ver, k, sub, ok := v.subresource("autoscaling", "v1", "Scale")
	if got, want := []any{g, ver, k, sub, ok}, []any{"apps", "v1", "Deployment", "scale", true}; !cmp.Equal(want, got) {
		t.Errorf("subresource(autoscaling/v1 Scale) = %v, want %v", got, want)
	}
	if _, _, _, _, ok := v.subresource("", "v1", "Pod"); ok {
		t.Errorf("subresource(v1 Pod) = ok, want not a subresource")
	}
}

func TestParseValuesErrors(t *testing.T) {
	tests := []struct {
		name    string
		give    string
		wantErr string
	}{
		{name: "unknown field", give: "kind: Values\nglobalValue:\n  a: b\n", wantErr: `unknown field "globalValue"`},
		{name: "a test file", give: "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\npolicies:\n- policy.yaml\n", wantErr: "cannot unmarshal string"},
		{name: "global value name with a stray quote", give: "globalValues:\n  'a.b\"c': x\n", wantErr: `globalValues: failed to add variable to context a.b"c (variable name "a.b\"c": parse error`},
		{name: "resource value name with an unterminated quote", give: "policies:\n- name: p\n  resources:\n  - name: r\n    values:\n      'a.\"b': x\n", wantErr: `policies[0].resources[0].values: failed to add variable to context a."b`},
		{name: "rule foreach value with an empty name", give: "policies:\n- name: p\n  rules:\n  - name: r\n    foreachValues:\n      '': [x]\n", wantErr: `policies[0].rules[0].foreachValues: failed to add variable to context  (variable name "": EOF)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseValues("values.yaml", []byte(tt.give))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseValues(%q) error = %v, want it to contain %q", tt.give, err, tt.wantErr)
			}
		})
	}
}

// TestParseValuesForms checks every header Kyverno 1.19's values.Load
// reads (it decodes into v1alpha1.Values, whose TypeMeta it never checks):
// kind Values or Value, any apiVersion, or none.
func TestParseValuesForms(t *testing.T) {
	const body = "globalValues:\n  request.operation: UPDATE\n"
	want := &ValuesSpec{GlobalValues: map[string]any{"request.operation": "UPDATE"}}
	tests := []struct {
		name, header string
	}{
		{name: "Values", header: "apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\n"},
		{name: "Value", header: "apiVersion: cli.kyverno.io/v1alpha1\nkind: Value\n"},
		{name: "Value with metadata", header: "apiVersion: cli.kyverno.io/v1alpha1\nkind: Value\nmetadata:\n  name: values\n"},
		{name: "v1beta1", header: "apiVersion: cli.kyverno.io/v1beta1\nkind: Values\n"},
		{name: "no apiVersion", header: "kind: Value\n"},
		{name: "no header", header: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseValues("values.yaml", []byte(tt.header+body))
			if err != nil {
				t.Fatalf("ParseValues(%q) error = %v, want nil", tt.header+body, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ParseValues(%q) mismatch (-want +got):\n%s", tt.header+body, diff)
			}
		})
	}
}

func TestParseSet(t *testing.T) {
	tests := []struct {
		name string
		give []string
		want map[string]any
	}{
		{name: "nil", give: nil, want: nil},
		{name: "pairs", give: []string{"a=1", " b = two "}, want: map[string]any{"a": "1", "b": "two"}},
		{name: "first value of a key wins", give: []string{"a=1", "a=2"}, want: map[string]any{"a": "1"}},
		{name: "malformed, empty and request.object entries are ignored", give: []string{"a", "b=", "=c", "d=1=2", "request.object.spec=x"}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ParseSet(tt.give)); diff != "" {
				t.Errorf("ParseSet(%q) mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

func TestParseUserInfo(t *testing.T) {
	give := `apiVersion: cli.kyverno.io/v1alpha1
kind: UserInfo
metadata:
  name: u
roles: [ns/dev]
clusterRoles: [admin]
userInfo:
  username: alice
  groups: [team]
`
	got, err := ParseUserInfo("user.yaml", []byte(give))
	if err != nil {
		t.Fatalf("ParseUserInfo() error = %v", err)
	}
	if got.UserInfo.Username != "alice" || !cmp.Equal(got.Roles, []string{"ns/dev"}) || !cmp.Equal(got.ClusterRoles, []string{"admin"}) || !cmp.Equal(got.UserInfo.Groups, []string{"team"}) {
		t.Errorf("ParseUserInfo() = %+v, want alice with roles, cluster roles and groups", got)
	}
	if _, err := ParseUserInfo("user.yaml", []byte("kind: UserInfo\nusername: alice\n")); err == nil || !strings.Contains(err.Error(), `unknown field "username"`) {
		t.Errorf("ParseUserInfo(top-level username) error = %v, want unknown field", err)
	}
}

func TestCLIContext(t *testing.T) {
	entries := map[string]string{"cm": srcConfigMap, "img": srcImageRegistry, "call": srcAPICall, "global": srcGlobalReference, "v": srcVariable}
	tests := []struct {
		name      string
		giveVars  map[string]any
		giveMocks bool
		want      map[string]any
	}{
		{
			name:     "values under an unloaded entry become the entry",
			giveVars: map[string]any{"cm.data.a": "1", "cm.data.b": "2", "img.x": "y", "request.operation": "CREATE"},
			want: map[string]any{
				"cm":                map[string]any{"data": map[string]any{"a": "1", "b": "2"}},
				"img":               map[string]any{"x": "y"},
				"request.operation": "CREATE",
			},
		},
		{
			name:     "values of variable entries and of other names stay dotted",
			giveVars: map[string]any{"v.x": "1", "other.y": "2"},
			want:     map[string]any{"v.x": "1", "other.y": "2"},
		},
		{
			name:      "values under apiCall and globalReference entries fold only without mocks",
			giveVars:  map[string]any{"call.a": "1", "global.b": "2"},
			giveMocks: true,
			want:      map[string]any{"call.a": "1", "global.b": "2"},
		},
		{
			name:     "values under apiCall and globalReference entries fold without mocks",
			giveVars: map[string]any{"call.a": "1", "global.b": "2"},
			want:     map[string]any{"call": map[string]any{"a": "1"}, "global": map[string]any{"b": "2"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &suiteRun{entries: entries, apiMocks: tt.giveMocks, globalMocks: tt.giveMocks}
			s.cliContext(tt.giveVars)
			if diff := cmp.Diff(tt.want, tt.giveVars); diff != "" {
				t.Errorf("cliContext() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
