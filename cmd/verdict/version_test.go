package main

import (
	"bytes"
	"context"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadVersion(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "-buildmode", Value: "exe"},
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "c378e3086f3b348fc92270d9763ec24bce6ef186"},
		{Key: "vcs.time", Value: "2026-11-26T21:22:04Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	tests := []struct {
		name string
		set  string
		bi   *debug.BuildInfo
		want versionInfo
	}{
		{
			name: "no build information",
			want: versionInfo{Version: "devel", Time: "---", Commit: "---", TreeState: "---"},
		},
		{
			name: "ldflags version wins",
			set:  "v1.2.3",
			bi:   &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261126212204-c378e3086f3b"}, Settings: vcs},
			want: versionInfo{Version: "v1.2.3", Time: "2026-11-26T21:22:04Z", Commit: "c378e3086f3b348fc92270d9763ec24bce6ef186", TreeState: "dirty"},
		},
		{
			name: "module version of go build in a checkout",
			bi:   &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261126212204-c378e3086f3b+dirty"}, Settings: vcs},
			want: versionInfo{Version: "v0.0.0-20261126212204-c378e3086f3b+dirty", Time: "2026-11-26T21:22:04Z", Commit: "c378e3086f3b348fc92270d9763ec24bce6ef186", TreeState: "dirty"},
		},
		{
			name: "go install at a tag, clean",
			bi:   &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}, Settings: []debug.BuildSetting{{Key: "vcs.modified", Value: "false"}}},
			want: versionInfo{Version: "v0.4.0", Time: "---", Commit: "---", TreeState: "clean"},
		},
		{
			name: "devel without vcs",
			bi:   &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			want: versionInfo{Version: "devel", Time: "---", Commit: "---", TreeState: "---"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := readVersion(tt.set, tt.bi)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("readVersion(%q, %v) mismatch (-want +got):\n%s", tt.set, tt.bi, diff)
			}
		})
	}
}

func TestRunVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"version"}, &stdout, &stderr); code != 0 {
		t.Fatalf("run(version) = %d, want 0; stderr %s", code, stderr.String())
	}
	// The test binary carries no vcs information (go test never stamps it).
	want := "Version: devel\nTime: ---\nGit commit ID: ---\nGit tree state: ---\nGo version: " + runtime.Version() + "\n"
	if diff := cmp.Diff(want, stdout.String()); diff != "" {
		t.Errorf("run(version) mismatch (-want +got):\n%s", diff)
	}
}
