package podsecurity

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/pod-security-admission/policy"

	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/internal/testing/testcorpus"
)

// testPods returns the Pods of the engine's podSecurity cases and, when
// the corpus is present, of its pod-security folders.
func testPods(t *testing.T) []map[string]any {
	t.Helper()
	var pods []map[string]any
	collect := func(path string) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := kyverno.SplitDocuments(path, data)
		if err != nil {
			return // not a resource file
		}
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				if v["kind"] == "Pod" {
					if _, ok := v["spec"].(map[string]any); ok {
						pods = append(pods, v)
					}
				}
				for _, e := range v {
					walk(e)
				}
			case []any:
				for _, e := range v {
					walk(e)
				}
			}
		}
		for _, o := range objs {
			walk(o.Value)
		}
	}
	collect("../cases/testdata/podsecurity/podsecurity.yaml")
	collect("../testdata/bench/pod.yaml")
	for _, folder := range []string{"pod-security", "pod-security-cel"} {
		dir, ok := testcorpus.Corpus(folder)
		if !ok {
			continue
		}
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
				collect(path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return pods
}

// TestFieldErrorsAddOnly pins what check relies on: every version of
// every check gives the same result with and without field errors, but
// for ErrList, which only a failing check has.
func TestFieldErrorsAddOnly(t *testing.T) {
	pods := testPods(t)
	if len(pods) < 10 {
		t.Fatalf("testPods() = %d pods, want at least 10", len(pods))
	}
	t.Logf("%d pods", len(pods))
	failures := 0
	for _, obj := range pods {
		pod, err := PodOf(obj)
		if err != nil {
			continue // an invalid Pod is an error result before any check
		}
		for _, c := range policy.DefaultChecks() {
			for _, v := range c.Versions {
				with := v.CheckPod(&pod.ObjectMeta, &pod.Spec, policy.WithFieldErrors())
				without := v.CheckPod(&pod.ObjectMeta, &pod.Spec)
				if without.ErrList != nil && len(*without.ErrList) > 0 {
					t.Errorf("%s %s on pod %s without field errors: ErrList = %v, want none", c.ID, v.MinimumVersion, pod.Name, *without.ErrList)
				}
				if with.Allowed && with.ErrList != nil && len(*with.ErrList) > 0 {
					t.Errorf("%s %s on pod %s passes with field errors %v", c.ID, v.MinimumVersion, pod.Name, *with.ErrList)
				}
				if !with.Allowed {
					failures++
				}
				with.ErrList, without.ErrList = nil, nil
				if diff := cmp.Diff(with, without); diff != "" {
					t.Errorf("%s %s on pod %s: result without field errors (-with +without):\n%s", c.ID, v.MinimumVersion, pod.Name, diff)
				}
			}
		}
	}
	if failures == 0 {
		t.Errorf("no check failed on any of the %d pods: the comparison saw only passing checks", len(pods))
	}
}
