package mutate

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func fromYAML(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("yaml.Unmarshal(%q) = %v", s, err)
	}
	return m
}

// TestUnchangedAgreesWithTheWalk checks the shortcut of walk: a part of
// the resource the patch does not touch comes out of the lazy merge as
// it comes out of kyaml's full walk, also for lists kyaml rebuilds
// (duplicate keys, missing keys, empty elements).
func TestUnchangedAgreesWithTheWalk(t *testing.T) {
	tests := []struct {
		name, resource string
	}{
		{"plain pod", `{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: a, image: x, ports: [{containerPort: 80, protocol: TCP}]}]}}`},
		{"duplicate container names", `{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: a, image: x}, {name: a, image: y}]}}`},
		{"port without protocol", `{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: a, ports: [{containerPort: 443}, {containerPort: 80, protocol: TCP}]}]}}`},
		{"container without name", `{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{image: x}, {name: b, image: y}]}}`},
		{"empty and null elements", `{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{}, null, {name: b}]}}`},
		{"duplicate finalizers", `{apiVersion: v1, kind: Pod, metadata: {name: p, finalizers: [a, a, b]}, spec: {}}`},
		{"env with duplicate names", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {template: {spec: {containers: [{name: a, env: [{name: X, value: "1"}, {name: X, value: "2"}]}]}}}}`},
		{"nested object with a kind", `{apiVersion: example.com/v1, kind: Wrapper, metadata: {name: w}, spec: {template: {apiVersion: v1, kind: Pod, spec: {containers: [{name: a}, {name: a}]}}}}`},
		{"nulls", `{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {nodeName: null, containers: [{name: a, args: null}]}}`},
	}
	patch := map[string]any{"metadata": map[string]any{"labels": map[string]any{"x": "y"}}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := fromYAML(t, tt.resource)
			full := func() any {
				pn, _ := toNode(patch)
				rn, err := toNode(res)
				if err != nil {
					t.Fatal(err)
				}
				m, err := merge(pn, rn)
				if err != nil {
					return err.Error()
				}
				v, _ := m.value()
				return v
			}()
			lazy := func() any {
				pn, _ := toNode(patch)
				m, err := merge(pn, lazyNode(res))
				if err != nil {
					return err.Error()
				}
				v, _ := m.value()
				return v
			}()
			if diff := cmp.Diff(full, lazy); diff != "" {
				t.Errorf("merge(lazy %s) differs from the full walk (-full +lazy):\n%s", tt.name, diff)
			}
		})
	}
}

// TestDiffApplies checks that the JSON Patch of Diff turns the original
// into the patched object.
func TestDiffApplies(t *testing.T) {
	tests := []struct {
		name, original, patched string
	}{
		{"add labels", `{metadata: {name: p}}`, `{metadata: {name: p, labels: {a: b, "x/y~z": c}}}`},
		{"remove and replace", `{a: 1, b: [1, 2, 3], c: {d: e}}`, `{a: "1", b: [3], c: null}`},
		{"grow list", `{l: [{n: a}]}`, `{l: [{n: z}, {n: a}, {n: b}]}`},
		{"type change", `{a: {b: c}}`, `{a: [b, c]}`},
		{"nothing", `{a: [1, {b: 2}]}`, `{a: [1, {b: 2}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig, want := fromYAML(t, tt.original), fromYAML(t, tt.patched)
			ops := Diff(orig, want)
			raw, err := MarshalPatch(ops)
			if err != nil {
				t.Fatal(err)
			}
			p, err := jsonpatch.DecodePatch(raw)
			if err != nil {
				t.Fatalf("DecodePatch(%s) = %v", raw, err)
			}
			doc, _ := json.Marshal(orig)
			out, err := p.Apply(doc)
			if err != nil {
				t.Fatalf("Apply(%s) = %v", raw, err)
			}
			var got any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(normalizeJSON(t, want), got); diff != "" {
				t.Errorf("Diff(%s) applied mismatch (-want +got):\n%s\npatch: %s", tt.name, diff, raw)
			}
		})
	}
}

func normalizeJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSchemaMergeKeys(t *testing.T) {
	pod := schemaFor("v1", "Pod")
	deploy := schemaFor("apps/v1", "Deployment")
	tests := []struct {
		name      string
		give      schema
		wantMerge bool
		wantKeys  []string
	}{
		{"pod containers", pod.field("spec").field("containers"), true, []string{"name"}},
		{"container ports", pod.field("spec").field("containers").elements().field("ports"), true, []string{"containerPort", "protocol"}},
		{"volume mounts", pod.field("spec").field("containers").elements().field("volumeMounts"), true, []string{"mountPath"}},
		{"tolerations", pod.field("spec").field("tolerations"), false, nil},
		{"finalizers", pod.field("metadata").field("finalizers"), true, nil},
		{"deployment containers", deploy.field("spec").field("template").field("spec").field("containers"), true, []string{"name"}},
	}
	for _, tt := range tests {
		if tt.give == nil {
			t.Errorf("%s: no schema", tt.name)
			continue
		}
		if tt.give.merge != tt.wantMerge || !cmp.Equal(tt.give.keys, tt.wantKeys) {
			t.Errorf("%s: merge, keys = %v, %v, want %v, %v", tt.name, tt.give.merge, tt.give.keys, tt.wantMerge, tt.wantKeys)
		}
	}
	if s := schemaFor("example.com/v1", "Widget"); s != nil {
		t.Errorf("schemaFor(custom resource) = %v, want nil", s)
	}
}

func TestParseJSON6902Errors(t *testing.T) {
	tests := []struct {
		name, give string
	}{
		{"not yaml", "- op: add\n  path: [\n"},
		{"not a list", "op: add"},
		{"path without slash", `[{"op": "add", "path": "a", "value": 1}]`},
		{"unknown op", `[{"op": "upsert", "path": "/a", "value": 1}]`},
		{"missing value", `[{"op": "add", "path": "/a"}]`},
	}
	for _, tt := range tests {
		jp, err := ParseJSON6902(tt.give)
		if err == nil {
			err = jp.Check()
		}
		if err == nil {
			t.Errorf("ParseJSON6902(%s) and Check = nil, want an error", tt.name)
		}
	}
}

func TestFormatNumber(t *testing.T) {
	for give, want := range map[float64]string{8080: "8080", 0.5: "0.5", 1e21: "1e+21", 1e-7: "1e-7", -3: "-3"} {
		if got := formatNumber(give); got != want {
			t.Errorf("formatNumber(%v) = %q, want %q", give, got, want)
		}
	}
}

// TestOverlayIsStrategicMerge applies each patch as an Overlay to several
// resources in turn, each twice: every result and error is
// StrategicMerge's with the patch (the merge must not change the
// overlay it keeps).
func TestOverlayIsStrategicMerge(t *testing.T) {
	resources := []string{
		`{apiVersion: v1, kind: Pod, metadata: {name: p, labels: {a: b}}, spec: {containers: [{name: a, image: x}, {name: b, image: "y:latest"}], volumes: [{name: v, emptyDir: {}}]}}`,
		`{apiVersion: v1, kind: Pod, metadata: {name: q, annotations: {x: "1"}}, spec: {containers: [{name: a, image: "x:latest", ports: [{containerPort: 80}]}], volumes: [{name: h, hostPath: {path: /data}}]}}`,
		`{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {template: {spec: {containers: [{name: a}]}}}}`,
		`{apiVersion: example.com/v1, kind: Thing, metadata: {name: t}, spec: {items: [1, 2]}}`,
	}
	patches := []string{
		`{metadata: {annotations: {+(cluster-autoscaler.kubernetes.io/safe-to-evict): "true"}}, spec: {volumes: [{<(emptyDir): {}}]}}`,
		`{metadata: {annotations: {+(cluster-autoscaler.kubernetes.io/safe-to-evict): "true"}}, spec: {volumes: [{hostPath: {<(path): "*"}}]}}`,
		`{spec: {containers: [{(image): "*:latest", imagePullPolicy: IfNotPresent}]}}`,
		`{spec: {containers: [{(name): "*", +(imagePullPolicy): Always, securityContext: {+(runAsNonRoot): true}}]}}`,
		`{metadata: {labels: {+(a): c, d: e}}}`,
		`{metadata: {(name): q, labels: {matched: "yes"}}}`,
		`{spec: {containers: [{name: a, $patch: delete}, {name: z, image: new}]}}`,
		`{spec: {items: {$patch: replace}, extra: [x]}}`,
		`{spec: {template: {spec: {containers: [{(name): a, env: [{name: E, value: v}]}]}}}}`,
		`{spec: {containers: [{<(name): none}]}, metadata: {labels: {x: y}}}`,
		`{spec: {containers: "not a list"}}`,
		`{metadata: {labels: null}}`,
	}
	for _, ps := range patches {
		patch := fromYAML(t, ps)
		o, err := NewOverlay(patch)
		if err != nil {
			t.Fatalf("NewOverlay(%s) = %v", ps, err)
		}
		for _, rs := range resources {
			res := fromYAML(t, rs)
			want, wantErr := StrategicMerge(res, patch)
			for i := range 2 {
				got, err := o.Apply(res)
				if fmt.Sprint(err) != fmt.Sprint(wantErr) {
					t.Errorf("NewOverlay(%s).Apply(%s) #%d error = %v, want %v", ps, rs, i, err, wantErr)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("NewOverlay(%s).Apply(%s) #%d mismatch (-want +got):\n%s", ps, rs, i, diff)
				}
			}
		}
	}
}

// TestNewOverlayError: a patch that is not JSON fails as StrategicMerge
// fails with it.
func TestNewOverlayError(t *testing.T) {
	tests := []struct {
		name string
		give any
	}{
		{"a channel", map[string]any{"a": make(chan int)}},
		{"NaN", []any{math.NaN()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, want := StrategicMerge(map[string]any{"a": "b"}, tt.give)
			_, err := NewOverlay(tt.give)
			if want == nil || err == nil || err.Error() != want.Error() {
				t.Errorf("NewOverlay(%v) = %v, want %v", tt.give, err, want)
			}
		})
	}
}

// TestStrategicMergeShares pins which maps and lists of the resource a
// merge returns as they are: those the patch did not change, even when
// its anchors were checked in them.
func TestStrategicMergeShares(t *testing.T) {
	pod := `{apiVersion: v1, kind: Pod, metadata: {name: p, labels: {a: b}}, spec: {containers: [{name: c, image: x}], volumes: [{name: v, hostPath: {path: /data}}]}}`
	tests := []struct {
		name, patch string
		wantShared  []string // paths of maps and lists of the result that are the resource's
		wantNew     []string // and of those that are not
	}{
		{"annotation added, anchor in the volumes", `{metadata: {annotations: {+(x): "y"}}, spec: {volumes: [{hostPath: {<(path): "*"}}]}}`,
			[]string{"spec", "spec.volumes", "spec.containers", "metadata.labels"}, []string{"", "metadata"}},
		{"label added", `{metadata: {labels: {c: d}}}`,
			[]string{"spec"}, []string{"", "metadata", "metadata.labels"}},
		{"existing label set again", `{metadata: {labels: {a: b}}}`,
			[]string{"", "spec", "metadata", "metadata.labels"}, nil},
		{"add anchor on a present key", `{metadata: {labels: {+(a): z}}, spec: {containers: [{(name): c, +(image): y}]}}`,
			[]string{"", "spec", "spec.containers", "metadata", "metadata.labels"}, nil},
		{"container changed", `{spec: {containers: [{(name): c, imagePullPolicy: Always}]}}`,
			[]string{"metadata", "spec.volumes"}, []string{"", "spec", "spec.containers"}},
	}
	at := func(v any, path string) any {
		if path == "" {
			return v
		}
		for _, k := range strings.Split(path, ".") {
			v = v.(map[string]any)[k]
		}
		return v
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := fromYAML(t, pod)
			got, err := StrategicMerge(res, fromYAML(t, tt.patch))
			if err != nil {
				t.Fatalf("StrategicMerge(%s) = %v", tt.patch, err)
			}
			for _, p := range tt.wantShared {
				if !identical(at(got, p), at(res, p)) {
					t.Errorf("StrategicMerge(%s) at %q is a new value, want the resource's", tt.patch, p)
				}
			}
			for _, p := range tt.wantNew {
				if identical(at(got, p), at(res, p)) {
					t.Errorf("StrategicMerge(%s) at %q is the resource's value, want a new one", tt.patch, p)
				}
			}
		})
	}
}
