package kyvernotest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/internal/safefile"
)

// TestRunGlobalContextMocks runs testdata/gctx/gctx-test.yaml:
// globalContextEntries given inline as resources, as resourceFiles and as
// data with fieldPath and projections, read by globalReference entries
// ("entry" and "entry.projection") and by globalContext.Get; and a test
// whose entry is not valid. Kyverno v1.19.0's CLI gives the same results
// (and stops on the invalid entry with the same message).
func TestRunGlobalContextMocks(t *testing.T) {
	rep, err := Run(context.Background(), []string{"testdata/gctx"}, Options{FileName: "gctx-test.yaml"})
	if err != nil {
		t.Fatalf("Run(testdata/gctx) error = %v", err)
	}
	var got []string
	errs := map[string]string{}
	for _, s := range rep.Suites {
		if s.Err != nil {
			errs[s.Name] = s.Err.Error()
			continue
		}
		for _, r := range s.Results {
			got = append(got, r.Policy+" "+summarize(r))
		}
	}
	want := []string{
		"gctx-v1 v1/ConfigMap/default/app inline-resources: pass -> pass ok Ok",
		"gctx-v1 v1/ConfigMap/default/app resource-files: pass -> pass ok Ok",
		"gctx-v1 v1/ConfigMap/default/app projection: pass -> pass ok Ok",
		"gctx-v1 v1/ConfigMap/default/app unknown-projection: error -> error ok Ok",
		"gctx-cel v1/ConfigMap/default/app : pass -> pass ok Ok",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Run(testdata/gctx) mismatch (-want +got):\n%s", diff)
	}
	wantErrs := map[string]string{"gctx-invalid": `globalContextEntries entry "both": data, resources, and resourceFiles are mutually exclusive`}
	if diff := cmp.Diff(wantErrs, errs); diff != "" {
		t.Errorf("Run(testdata/gctx) errors mismatch (-want +got):\n%s", diff)
	}
}

func TestGlobalMocks(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "objs.yaml"), []byte("a: 1\n---\n---\nb: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "list.yaml"), []byte("- a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"spec": map[string]any{"n": 1.0}}
	tests := []struct {
		name    string
		give    []GlobalContextEntry
		want    map[string]any
		wantErr string
	}{
		{name: "none", give: nil, want: nil},
		{name: "data as is", give: []GlobalContextEntry{{Name: "e", Data: obj}}, want: map[string]any{"e": obj}},
		{name: "fieldPath", give: []GlobalContextEntry{{Name: "e", Data: obj, FieldPath: "spec.n"}}, want: map[string]any{"e": 1.0}},
		{
			name: "projections of the fieldPath's result",
			give: []GlobalContextEntry{{Name: "e", Data: obj, FieldPath: "spec", Projections: []GlobalContextProjection{{Name: "n", Path: "n"}, {Name: "all", Path: "@"}}}},
			want: map[string]any{"e": map[string]any{"n": 1.0, "all": map[string]any{"n": 1.0}}},
		},
		{name: "empty resources are an empty list", give: []GlobalContextEntry{{Name: "e", Resources: []any{}}}, want: map[string]any{"e": []any{}}},
		{name: "resourceFiles without empty documents", give: []GlobalContextEntry{{Name: "e", ResourceFiles: []string{"objs.yaml", "./objs.yaml"}}}, want: map[string]any{"e": []any{map[string]any{"a": 1.0}, map[string]any{"b": 2.0}, map[string]any{"a": 1.0}, map[string]any{"b": 2.0}}}},
		{name: "no name", give: []GlobalContextEntry{{Name: " ", Data: obj}}, wantErr: "globalContextEntries: name is required"},
		{name: "duplicate name", give: []GlobalContextEntry{{Name: "e", Data: obj}, {Name: "e", Data: obj}}, wantErr: `globalContextEntries: duplicate name "e"`},
		{name: "projection without name", give: []GlobalContextEntry{{Name: "e", Data: obj, Projections: []GlobalContextProjection{{Path: "a"}}}}, wantErr: `globalContextEntries entry "e": projection name is required`},
		{name: "projection without path", give: []GlobalContextEntry{{Name: "e", Data: obj, Projections: []GlobalContextProjection{{Name: "p"}}}}, wantErr: `globalContextEntries entry "e" projection "p": path is required`},
		{name: "no source", give: []GlobalContextEntry{{Name: "e"}}, wantErr: `globalContextEntries entry "e": one of data, resources, or resourceFiles is required`},
		{name: "two sources", give: []GlobalContextEntry{{Name: "e", Resources: []any{}, ResourceFiles: []string{"objs.yaml"}}}, wantErr: `globalContextEntries entry "e": data, resources, and resourceFiles are mutually exclusive`},
		{name: "data not an object", give: []GlobalContextEntry{{Name: "e", Data: []any{}}}, wantErr: `globalContextEntries entry "e": data must be a JSON object`},
		{name: "resource not an object", give: []GlobalContextEntry{{Name: "e", Resources: []any{"x"}}}, wantErr: `globalContextEntries entry "e" resources[0]: must be a JSON object (Kubernetes resource manifest)`},
		{name: "empty file path", give: []GlobalContextEntry{{Name: "e", ResourceFiles: []string{" "}}}, wantErr: `globalContextEntries entry "e" resourceFiles[0]: file path must not be empty`},
		{name: "absolute file path", give: []GlobalContextEntry{{Name: "e", ResourceFiles: []string{filepath.Join(dir, "objs.yaml")}}}, wantErr: `globalContextEntries entry "e" resourceFiles[0]: file path must not be absolute`},
		{name: "file path out of the folder", give: []GlobalContextEntry{{Name: "e", ResourceFiles: []string{"a/../../objs.yaml"}}}, wantErr: `globalContextEntries entry "e" resourceFiles[0]: file path must not escape the test directory`},
		{name: "missing file", give: []GlobalContextEntry{{Name: "e", ResourceFiles: []string{"nope.yaml"}}}, wantErr: `globalContextEntries "e" resourceFiles "nope.yaml": `},
		{name: "document not an object", give: []GlobalContextEntry{{Name: "e", ResourceFiles: []string{"list.yaml"}}}, wantErr: `globalContextEntries "e" resourceFiles "list.yaml": document[0]: invalid YAML`},
		{name: "fieldPath error", give: []GlobalContextEntry{{Name: "e", Data: obj, FieldPath: "spec.missing"}}, wantErr: `globalContextEntries "e" fieldPath: `},
		{name: "projection error", give: []GlobalContextEntry{{Name: "e", Data: obj, Projections: []GlobalContextProjection{{Name: "p", Path: "length(@"}}}}, wantErr: `globalContextEntries "e" projection "p" path "length(@": `},
	}
	r := &runner{load: newLoader(fileOptions{})}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.globalMocks(dir, tt.give)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Errorf("globalMocks(%+v) error = %v, want %q", tt.give, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("globalMocks(%+v) error = %v", tt.give, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("globalMocks(%+v) mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

// TestGlobalMocksFileLimit: a resourceFiles file is read whole, with the
// document limit of every file read whole.
func TestGlobalMocksFileLimit(t *testing.T) {
	dir := t.TempDir()
	data := []byte("a: 1\n")
	if err := os.WriteFile(filepath.Join(dir, "objs.yaml"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	give := []GlobalContextEntry{{Name: "e", ResourceFiles: []string{"objs.yaml"}}}
	tests := []struct {
		name    string
		limit   int
		wantErr bool
	}{
		{name: "at the limit", limit: len(data)},
		{name: "over the limit", limit: len(data) - 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &runner{load: newLoader(fileOptions{maxDocument: tt.limit})}
			_, err := r.globalMocks(dir, give)
			var tooLarge *safefile.TooLargeError
			if got := errors.As(err, &tooLarge); got != tt.wantErr || (err != nil && !got) {
				t.Errorf("globalMocks(%d-byte file, limit %d) error = %v, want a *safefile.TooLargeError %v", len(data), tt.limit, err, tt.wantErr)
			}
		})
	}
}
