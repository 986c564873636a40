package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/verdict-policy/verdict/deploy"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("chartgen", flag.ContinueOnError)
	flags.SetOutput(stderr)
	out := flags.String("out", filepath.Join("deploy", deploy.ChartDir, "templates"), "the chart's templates folder")
	check := flags.Bool("check", false, "compare with the templates folder instead of writing it; exit 1 when it differs")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	stale, err := generate(*out, *check, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "chartgen:", err)
		return 2
	}
	if stale > 0 {
		return 1
	}
	return 0
}

// generate writes (or, with check, compares) the generated templates
// under dir and returns how many differ.
func generate(dir string, check bool, stdout io.Writer) (int, error) {
	files, err := deploy.ChartTemplates()
	if err != nil {
		return 0, err
	}
	old, err := Generated(dir)
	if err != nil {
		return 0, err
	}
	stale := 0
	for _, name := range slices.Sorted(maps.Keys(files)) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if check {
			b, err := os.ReadFile(p)
			if err != nil || !bytes.Equal(b, files[name]) {
				fmt.Fprintf(stdout, "%s is not up to date (go run ./hack/chartgen)\n", p)
				stale++
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return 0, err
		}
		if err := os.WriteFile(p, files[name], 0o644); err != nil {
			return 0, err
		}
		fmt.Fprintf(stdout, "wrote %s (%d bytes)\n", p, len(files[name]))
	}
	for _, name := range old {
		if _, ok := files[name]; ok {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if check {
			fmt.Fprintf(stdout, "%s is generated but the base no longer has its objects (go run ./hack/chartgen)\n", p)
			stale++
			continue
		}
		if err := os.Remove(p); err != nil {
			return 0, err
		}
		fmt.Fprintf(stdout, "removed %s\n", p)
	}
	return stale, nil
}

// Generated returns the files under dir (slash-separated, relative to
// it) that start with deploy.ChartGeneratedHeader, sorted.
func Generated(dir string) ([]string, error) {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.HasPrefix(b, []byte(deploy.ChartGeneratedHeader)) {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(names)
	return names, err
}
