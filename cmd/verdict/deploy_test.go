package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/verdict-policy/verdict/deploy"
	"github.com/verdict-policy/verdict/scanner"
)

// TestDeployFlags parses the args of every container of the rendered
// manifests with the real command's flag set, so that a renamed or
// removed flag, a bad value, or a positional argument fails here. In an
// Indexed Job, $(JOB_COMPLETION_INDEX) takes each index in turn and
// --shard i/n must have n equal to completions and parallelism.
func TestDeployFlags(t *testing.T) {
	for _, k := range deploy.Kustomizations {
		objs, err := deploy.Render(k)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := deploy.Workloads(objs)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			id := k + ": " + w.Kind + " " + w.Name
			envs := []map[string]string{{}}
			if w.Indexed {
				envs = nil
				for i := range w.Completions {
					envs = append(envs, map[string]string{"JOB_COMPLETION_INDEX": strconv.Itoa(int(i))})
				}
			}
			for _, e := range w.Container.Env {
				for _, env := range envs {
					env[e.Name] = e.Value
				}
			}
			for _, env := range envs {
				args := make([]string, len(w.Container.Args))
				for i, a := range w.Container.Args {
					if args[i], err = deploy.Expand(a, env); err != nil {
						t.Fatalf("%s: %v", id, err)
					}
				}
				cmd, err := parseArgs(args)
				if err != nil {
					t.Errorf("%s: verdict %s: %v", id, strings.Join(args, " "), err)
					continue
				}
				// serve listens on loopback by default: in a Pod, the
				// addresses must be given.
				if cmd.CommandPath() == "verdict serve" {
					for _, f := range []string{"listen", "metrics-listen"} {
						if !cmd.Flags().Changed(f) {
							t.Errorf("%s: verdict %s: no --%s (the default, %s, is not reachable from other Pods)", id, strings.Join(args, " "), f, cmd.Flags().Lookup(f).DefValue)
						}
					}
				}
				if cmd.Name() != "scan" {
					continue
				}
				shard, err := scanner.ParseShard(cmd.Flags().Lookup("shard").Value.String())
				if err != nil {
					t.Errorf("%s: --shard: %v", id, err)
					continue
				}
				if !w.Indexed {
					continue
				}
				if got := shardCount(t, cmd.Flags().Lookup("shard").Value.String()); got != int(w.Completions) || got != int(w.Parallelism) {
					t.Errorf("%s: --shard %v: n = %d, want completions %d = parallelism %d", id, shard, got, w.Completions, w.Parallelism)
				}
			}
		}
	}
}

func shardCount(t *testing.T, s string) int {
	t.Helper()
	_, n, _ := strings.Cut(s, "/")
	v, err := strconv.Atoi(n)
	if err != nil {
		return -1
	}
	return v
}

// parseArgs finds the subcommand of args and parses its flags as cobra
// would before running it.
func parseArgs(args []string) (*cobra.Command, error) {
	root := newRootCmd()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return nil, err
	}
	if cmd == root {
		return nil, fmt.Errorf("no subcommand in %q", args)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return nil, err
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return nil, err
	}
	return cmd, nil
}

// TestDeployPolicies applies Verdict's example policies and the corpus'
// pod-security and best-practices policies that concern the manifests to
// every rendered kustomization: no rule may fail.
func TestDeployPolicies(t *testing.T) {
	policies := []string{"../../examples/policies"}
	const corpus = "../../../shared/conformance/kyverno-policies"
	for _, dir := range []string{"pod-security/baseline", "pod-security/restricted"} {
		entries, err := os.ReadDir(filepath.Join(corpus, dir))
		if err != nil {
			t.Logf("corpus %s: %v: only the example policies are applied", dir, err)
			continue
		}
		for _, e := range entries {
			policies = append(policies, filepath.Join(corpus, dir, e.Name(), e.Name()+".yaml"))
		}
	}
	for _, name := range []string{
		"require-drop-all", "require-drop-cap-net-raw", "require-ro-rootfs", "require-pod-requests-limits",
		"require-probes", "disallow-latest-tag", "disallow-default-namespace", "disallow-cri-sock-mount",
		"disallow-helm-tiller", "restrict-node-port", "restrict-service-external-ips",
	} {
		p := filepath.Join(corpus, "best-practices", name, name+".yaml")
		if _, err := os.Stat(p); err == nil {
			policies = append(policies, p)
		}
	}
	t.Logf("%d policy paths", len(policies))
	for _, k := range deploy.Kustomizations {
		objs, err := deploy.Render(k)
		if err != nil {
			t.Fatal(err)
		}
		// The CRDs are matched by no policy and are most of the bytes.
		objs = slices.DeleteFunc(objs, func(o *unstructured.Unstructured) bool { return o.GetKind() == "CustomResourceDefinition" })
		b, err := deploy.YAML(objs)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "manifests.yaml")
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"apply"}, policies...)
		args = append(args, "--resource", file)
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
			t.Errorf("%s: verdict apply = exit %d, want 0\n%s%s", k, code, stdout.String(), stderr.String())
			continue
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		t.Logf("%s: %s", k, lines[len(lines)-1])
	}
}
