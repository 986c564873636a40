package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

// unknownBuildValue stands for a build value the binary does not carry, as
// Kyverno's version command prints it.
const unknownBuildValue = "---"

func newVersionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, the build time and the git commit",
		Long: `Print the version, the time and the git commit of the build, as kyverno
version does, then the git tree state (dirty when the build had local
changes) and the Go version. The version is the one given at build time
(-ldflags "-X main.version=..."), else the module version Go recorded
(a tagged version for go install ...@version), else "devel". The time and
commit are Go's build information (vcs.time, vcs.revision), "---" when
the binary was built without it (-buildvcs=false, or outside a git
checkout).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi, _ := debug.ReadBuildInfo()
			v := readVersion(version, bi)
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "Version: %s\nTime: %s\nGit commit ID: %s\nGit tree state: %s\nGo version: %s\n",
				v.Version, v.Time, v.Commit, v.TreeState, runtime.Version())
			return err
		},
	}
	// kyverno's global flags: version writes no log lines, -v changes
	// nothing.
	registerKlogFlags(cmd.Flags()) // kyvernoflags.go
	return cmd
}

// versionInfo is what verdict version prints.
type versionInfo struct {
	Version, Time, Commit, TreeState string
}

// readVersion reads the version of the build: set is the version set with
// -ldflags (wins when not empty), bi the build information (nil when the
// binary has none).
func readVersion(set string, bi *debug.BuildInfo) versionInfo {
	v := versionInfo{Version: set, Time: unknownBuildValue, Commit: unknownBuildValue, TreeState: unknownBuildValue}
	if bi == nil {
		if v.Version == "" {
			v.Version = "devel"
		}
		return v
	}
	if v.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v.Version = bi.Main.Version
	}
	if v.Version == "" {
		v.Version = "devel"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.time":
			v.Time = s.Value
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			v.TreeState = "clean"
			if s.Value == "true" {
				v.TreeState = "dirty"
			}
		}
	}
	return v
}

// versionString is the version alone (the service version of traces).
func versionString() string {
	bi, _ := debug.ReadBuildInfo()
	return readVersion(version, bi).Version
}
