package kyvernotest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// yamlSample holds the field types sigs.k8s.io/yaml converts values for.
type yamlSample struct {
	Name    string         `json:"name"`
	Count   int64          `json:"count"`
	Ratio   float64        `json:"ratio"`
	Enabled bool           `json:"enabled"`
	Any     any            `json:"any"`
	Names   []string       `json:"names"`
	Labels  map[string]any `json:"labels"`
	Ptr     *string        `json:"ptr"`
	Inner   `json:",inline"`
}

type Inner struct {
	Deep string `json:"deep"`
}

// TestUnmarshalStrict checks that unmarshalStrict decodes each document
// as sigs.k8s.io/yaml.UnmarshalStrict does: the same value, or an error
// with the same message.
func TestUnmarshalStrict(t *testing.T) {
	tests := []struct {
		name     string
		give     string
		wantFast bool // decoded by the fast path
	}{
		{"strings", "name: a\nnames: [x, 'y']\nlabels: {a: b}\nptr: p\nDeep: d\n", true},
		{"numbers", "count: 12\nratio: 1.5\nany: 3\nlabels:\n  num: 1000.5\n  neg: -3\n", true},
		{"integer at 2^53", "count: 9007199254740993\nany: 9007199254740993\n", false},
		{"integer below 2^53", "count: 9007199254740991\nany: -9007199254740991\n", true},
		{"number for a string", "name: 12\n", false},
		{"float for a string", "name: 1.50\nnames: [1, true]\n", false},
		{"boolean for a string", "name: yes\nptr: false\n", false},
		{"booleans", "enabled: yes\nany: true\nlabels: {a: off}\n", true},
		{"nulls", "name: ~\nany: null\nlabels:\nnames: []\n", true},
		{"case-insensitive keys", "NAME: a\nEnabled: true\n", true},
		{"unknown field", "name: a\nnmae: b\n", false},
		{"repeated key", "name: a\nname: b\n", false},
		{"wrong type", "names: a\n", false},
		{"not a mapping", "- a\n", false},
		{"empty", "", true},
		{"comments only", "# c\n", true},
		{"document marker", "---\nname: a\n", false},
		{"two documents", "name: a\n---\nname: b\n", false},
		{"anchors", "name: &n a\nlabels: {b: *n}\n", false},
		{"block scalar", "name: |\n  a\n  b\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want, got yamlSample
			wantErr := yaml.UnmarshalStrict([]byte(tt.give), &want)
			gotErr := unmarshalStrict([]byte(tt.give), &got)
			var fast yamlSample
			if gotFast := fastUnmarshalStrict([]byte(tt.give), &fast); gotFast != tt.wantFast {
				t.Errorf("fastUnmarshalStrict(%q) = %t, want %t", tt.give, gotFast, tt.wantFast)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("unmarshalStrict(%q) differs from yaml.UnmarshalStrict (-want +got):\n%s", tt.give, diff)
			}
			if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
				t.Errorf("unmarshalStrict(%q) = %v, want %v", tt.give, gotErr, wantErr)
			}
		})
	}
}

// TestUnmarshalStrictKinds decodes documents of the CLI's file kinds both
// ways.
func TestUnmarshalStrictKinds(t *testing.T) {
	const test = `apiVersion: cli.kyverno.io/v1alpha1
kind: Test
metadata:
  name: t
policies: [p.yaml]
resources: [r.yaml]
variables: values.yaml
results:
- policy: p
  rule: r
  resources: [a, b]
  kind: Pod
  result: pass
  isValidatingPolicy: true
- policy: q
  isMUtatingPolicy: true
  patchedResources: patched.yaml
  resources: [c]
  result: fail
`
	const values = `apiVersion: cli.kyverno.io/v1alpha1
kind: Values
globalValues:
  request.operation: UPDATE
  n: 3
policies:
- name: p
  resources:
  - name: a
    values:
      x: 1.5
      y: true
namespaceSelector:
- name: ns
  labels: {a: b}
`
	const userInfo = `apiVersion: cli.kyverno.io/v1alpha1
kind: UserInfo
roles: [r]
userInfo:
  username: u
  groups: [g]
`
	for _, give := range []string{test, values, userInfo} {
		var wantTest, gotTest Test
		var wantValues, gotValues Values
		var wantUser, gotUser UserInfo
		checks := []struct {
			name            string
			wantErr, gotErr error
			want, got       any
		}{
			{"Test", yaml.UnmarshalStrict([]byte(give), &wantTest), unmarshalStrict([]byte(give), &gotTest), &wantTest, &gotTest},
			{"Values", yaml.UnmarshalStrict([]byte(give), &wantValues), unmarshalStrict([]byte(give), &gotValues), &wantValues, &gotValues},
			{"UserInfo", yaml.UnmarshalStrict([]byte(give), &wantUser), unmarshalStrict([]byte(give), &gotUser), &wantUser, &gotUser},
		}
		for _, c := range checks {
			if diff := cmp.Diff(c.want, c.got); diff != "" {
				t.Errorf("unmarshalStrict(%.40q) into a %s differs from yaml.UnmarshalStrict (-want +got):\n%s", give, c.name, diff)
			}
			if (c.wantErr == nil) != (c.gotErr == nil) || (c.wantErr != nil && c.wantErr.Error() != c.gotErr.Error()) {
				t.Errorf("unmarshalStrict(%.40q) into a %s = %v, want %v", give, c.name, c.gotErr, c.wantErr)
			}
		}
	}
}
