package kyvernotest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine/policy"
)

// lookupResources is the resource file of TestApplyLookup: two Namespaces
// (triggers), then resources of other kinds, then the Secret, ConfigMap
// and NetworkPolicy the rules look up, after their triggers.
const lookupResourcesFile = `apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: team-a}
spec:
  containers: [{name: web, image: nginx}]
---
apiVersion: v1
kind: Secret
metadata: {name: regcred, namespace: default}
type: kubernetes.io/dockerconfigjson
data: {.dockerconfigjson: e30=}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team-a}
data: {key: value}
`

// TestApplyLookup: the rules that look resources up see those of the
// resource files of the kinds they can look up, wherever they are in the
// files, and only those are kept (the files are read twice, see
// lookupResources); a kind given by a variable keeps every resource.
func TestApplyLookup(t *testing.T) {
	const head = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [Namespace]}}]}
`
	tests := []struct {
		name     string
		rule     string
		stdin    bool
		wantKept []string // kind/name of the resources of the lookup
		// wantOut are lines WriteMutated must print.
		wantOut []string
	}{
		{
			// As Kyverno's CLI prints it (kyverno apply 1.19 of the
			// same files): the ConfigMap that comes after the Namespace
			// is patched as a target.
			name: "mutate target given after its trigger",
			rule: `    mutate:
      targets:
      - {apiVersion: v1, kind: ConfigMap, name: settings, namespace: "{{request.object.metadata.name}}"}
      patchStrategicMerge: {metadata: {labels: {owner: "{{request.object.metadata.name}}"}}}
`,
			wantKept: []string{"ConfigMap/settings"},
			wantOut:  []string{"patched targets: \n\napiVersion: v1\ndata:\n    key: value\nkind: ConfigMap\nmetadata:\n    labels:\n        owner: team-a\n    name: settings\n    namespace: team-a\n"},
		},
		{
			// A clone copies its source's data (Kyverno's manageClone).
			name: "generate clone of a Secret of the file",
			rule: `    generate:
      apiVersion: v1
      kind: Secret
      name: regcred
      namespace: "{{request.object.metadata.name}}"
      clone: {namespace: default, name: regcred}
`,
			wantKept: []string{"Secret/regcred"},
			wantOut: []string{
				"policy p applied to /Namespace/team-a:\napiVersion: v1\ndata:\n    .dockerconfigjson: e30=\nkind: Secret\n",
				"policy p applied to /Namespace/team-b:\napiVersion: v1\ndata:\n    .dockerconfigjson: e30=\nkind: Secret\n",
			},
		},
		{
			name: "generate clone, resources on standard input",
			rule: `    generate:
      apiVersion: v1
      kind: Secret
      name: regcred
      namespace: "{{request.object.metadata.name}}"
      clone: {namespace: default, name: regcred}
`,
			stdin:    true,
			wantKept: []string{"Namespace/team-a", "Namespace/team-b", "Pod/web", "Secret/regcred", "ConfigMap/settings"},
			wantOut:  []string{"policy p applied to /Namespace/team-b:\napiVersion: v1\ndata:\n    .dockerconfigjson: e30=\nkind: Secret\n"},
		},
		{
			name: "generate of a kind given by a variable",
			rule: `    generate:
      apiVersion: v1
      kind: "{{request.object.kind}}"
      name: copy
      namespace: default
      data: {}
`,
			wantKept: []string{"Namespace/team-a", "Namespace/team-b", "Pod/web", "Secret/regcred", "ConfigMap/settings"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			pol := filepath.Join(dir, "policy.yaml")
			res := filepath.Join(dir, "resources.yaml")
			if err := os.WriteFile(pol, []byte(head+tt.rule), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(res, []byte(lookupResourcesFile), 0o600); err != nil {
				t.Fatal(err)
			}
			opts := ApplyOptions{PolicyPaths: []string{pol}, ResourcePaths: []string{res}, Parallelism: 1}
			if tt.stdin {
				opts.ResourcePaths, opts.Stdin = []string{StdinPath}, strings.NewReader(lookupResourcesFile)
			}

			l := newLoader(fileOptions{stdin: opts.Stdin})
			docs, err := l.policies(opts.PolicyPaths)
			if err != nil || len(docs) != 1 || docs[0].Compiled == nil {
				t.Fatalf("policies(%s) = %v, %v", pol, docs, err)
			}
			kinds, all, looks := lookupKinds([]*policy.Policy{docs[0].Compiled})
			if !looks {
				t.Fatalf("lookupKinds() looks = false, want true")
			}
			kept, _, err := lookupResources(context.Background(), l, opts, nil, kinds, all, true)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range kept {
				got = append(got, r.Kind+"/"+r.Name)
			}
			if diff := cmp.Diff(tt.wantKept, got); diff != "" {
				t.Errorf("lookupResources() kept (-want +got):\n%s", diff)
			}

			if tt.stdin {
				opts.Stdin = strings.NewReader(lookupResourcesFile)
			}
			ar, err := Apply(context.Background(), opts)
			if err != nil {
				t.Fatalf("Apply() error = %v", err)
			}
			if n := len(ar.Resources); n != 5 {
				t.Errorf("Apply() evaluated %d resources, want 5", n)
			}
			var b bytes.Buffer
			if err := WriteMutated(&b, ar); err != nil {
				t.Fatal(err)
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(b.String(), want) {
					t.Errorf("WriteMutated() lacks %q; got:\n%s", want, b.String())
				}
			}
		})
	}
}

func TestKindFilter(t *testing.T) {
	tests := []struct {
		name     string
		kinds    []string
		doc      string
		wantNil  bool
		wantSkip bool
	}{
		{"other kind", []string{"NetworkPolicy", "Secret"}, "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n", false, true},
		{"one of the kinds", []string{"NetworkPolicy", "Secret"}, "apiVersion: v1\nkind: Secret\nmetadata: {name: a}\n", false, false},
		{"quoted", []string{"Secret"}, "apiVersion: v1\nkind: 'Secret'\n", false, false},
		{"kind named elsewhere", []string{"Secret"}, "kind: Pod\nmetadata: {name: Secret}\n", false, false},
		{"escape", []string{"Secret"}, "kind: \"\\x53ecret\"\n", false, false},
		{"binary scalar", []string{"Secret"}, "kind: !!binary U2VjcmV0\n", false, false},
		{"List of the kind", []string{"Secret"}, "kind: SecretList\nitems: [{metadata: {name: a}}]\n", false, false},
		{"empty kind", []string{"Secret", ""}, "kind: Pod\n", true, false},
		{"kind with a space", []string{"Net Policy"}, "kind: Pod\n", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			skip := kindFilter(tt.kinds)
			if (skip == nil) != tt.wantNil {
				t.Fatalf("kindFilter(%q) = nil: %v, want %v", tt.kinds, skip == nil, tt.wantNil)
			}
			if skip == nil {
				return
			}
			if got := skip(tt.doc); got != tt.wantSkip {
				t.Errorf("kindFilter(%q)(%q) = %v, want %v", tt.kinds, tt.doc, got, tt.wantSkip)
			}
		})
	}
}

// TestApplyWriteLookupBadDocument: a document that does not decode, of a
// kind the rules do not look up, fails the run before anything is
// written, to the output or to the --output folder, as when the resources
// were loaded whole.
func TestApplyWriteLookupBadDocument(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	res := filepath.Join(dir, "resources.yaml")
	const policy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [Namespace, Pod]}}]}
    mutate:
      targets:
      - {apiVersion: v1, kind: ConfigMap, name: settings, namespace: "{{request.object.metadata.namespace}}"}
      patchStrategicMerge: {metadata: {labels: {owner: x}}}
`
	if err := os.WriteFile(pol, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(res, []byte(lookupResourcesFile+"---\napiVersion: v1\nkind: Pod\nmetadata: {name: [bad\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mutated := range []string{"", filepath.Join(dir, "out")} {
		var b bytes.Buffer
		_, err := ApplyWrite(context.Background(), ApplyOptions{PolicyPaths: []string{pol}, ResourcePaths: []string{res}, Parallelism: 1}, &b, ApplyOutput{PrintMutated: true, MutatedPath: mutated})
		if err == nil || !strings.Contains(err.Error(), "document 6") {
			t.Errorf("ApplyWrite(--output %q) error = %v, want the error of document 6", mutated, err)
		}
		if b.Len() > 0 {
			t.Errorf("ApplyWrite(--output %q) wrote %q, want nothing", mutated, b.String())
		}
		if mutated != "" {
			if _, err := os.Stat(mutated); !os.IsNotExist(err) {
				t.Errorf("ApplyWrite(--output %q) made the folder (%v), want nothing written", mutated, err)
			}
		}
	}
}
