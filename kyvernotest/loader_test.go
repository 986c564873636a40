package kyvernotest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLoaderRelease checks that a loaded policy file stays cached while a
// test that names it (or its folder) has not finished, and only then.
func TestLoaderRelease(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "policies")
	pol := filepath.Join(folder, "team.yaml")
	other := filepath.Join(dir, "other.yaml")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("testdata/validate/require-team-label.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{pol, other} {
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		// pins are the paths of each test; the first released of them
		// are released, in order.
		pins     [][]string
		released int
		wantKept bool
	}{
		{name: "pinned by its file", pins: [][]string{{pol}}, released: 0, wantKept: true},
		{name: "its only test done", pins: [][]string{{pol}}, released: 1, wantKept: false},
		{name: "pinned by its folder", pins: [][]string{{folder}}, released: 0, wantKept: true},
		{name: "its folder's test done", pins: [][]string{{folder + "/"}}, released: 1, wantKept: false},
		{name: "a second test pins it", pins: [][]string{{pol}, {folder}}, released: 1, wantKept: true},
		{name: "both tests done", pins: [][]string{{pol}, {folder}}, released: 2, wantKept: false},
		{name: "the same test twice, one done", pins: [][]string{{pol}, {pol}}, released: 1, wantKept: true},
		{name: "another file's test done", pins: [][]string{{other}, {pol}}, released: 1, wantKept: true},
		{name: "a test of another file only", pins: [][]string{{other}}, released: 1, wantKept: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLoader(fileOptions{})
			for _, p := range tt.pins {
				l.pin(p)
			}
			first, err := l.policies([]string{pol})
			if err != nil || len(first) != 1 {
				t.Fatalf("policies(%s) = %v, %v, want 1 policy", pol, first, err)
			}
			for _, p := range tt.pins[:tt.released] {
				l.release(p)
			}
			again, err := l.policies([]string{pol})
			if err != nil || len(again) != 1 {
				t.Fatalf("policies(%s) again = %v, %v, want 1 policy", pol, again, err)
			}
			if kept := again[0] == first[0]; kept != tt.wantKept {
				t.Errorf("policies(%s) after %d of %d tests done: kept = %v, want %v", pol, tt.released, len(tt.pins), kept, tt.wantKept)
			}
		})
	}
}

// TestRunKeepPolicies checks that a report holds the suites' policies
// only when asked.
func TestRunKeepPolicies(t *testing.T) {
	tests := []struct {
		keep bool
		want []string
	}{
		{keep: false, want: nil},
		{keep: true, want: []string{"ClusterPolicy/require-team-label"}},
	}
	for _, tt := range tests {
		rep, err := Run(context.Background(), []string{"testdata/validate"}, Options{KeepPolicies: tt.keep})
		if err != nil {
			t.Fatalf("Run(testdata/validate, KeepPolicies %v) error = %v", tt.keep, err)
		}
		var got []string
		for _, s := range rep.Suites {
			for _, p := range s.Policies {
				got = append(got, p.Kind+"/"+p.Name)
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Run(testdata/validate, KeepPolicies %v) policies mismatch (-want +got):\n%s", tt.keep, diff)
		}
	}
}

// TestTestFiles checks the files a test names, resolved from its folder.
func TestTestFiles(t *testing.T) {
	tests := []struct {
		name string
		test Test
		want []string
	}{
		{name: "empty", test: Test{}, want: nil},
		{
			name: "every field",
			test: Test{
				Policies: []string{"p.yaml", "/abs/p"}, Resources: []string{"r.yaml"}, TargetResources: []string{"t.yaml"},
				ParamResources: []string{"pr.yaml"}, Exceptions: []string{"e.yaml"}, ClusterResources: []string{"c.yaml"},
				Variables: "values.yaml", UserInfo: "user.yaml", Context: "context.yaml",
				Results: []ExpectedResult{{PatchedResources: "patched.yaml", GeneratedResource: "gen.yaml", CloneSourceResource: "clone.yaml", GeneratedResources: []string{"g1.yaml"}}},
			},
			want: []string{"d/p.yaml", "/abs/p", "d/r.yaml", "d/t.yaml", "d/pr.yaml", "d/e.yaml", "d/c.yaml", "d/values.yaml", "d/user.yaml", "d/context.yaml", "d/patched.yaml", "d/gen.yaml", "d/clone.yaml", "d/g1.yaml"},
		},
	}
	for _, tt := range tests {
		got := tt.test.files("d")
		for i := range got {
			got[i] = filepath.ToSlash(got[i])
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: files(d) mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}
