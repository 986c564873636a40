package kyvernotest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// applyRun is everything ApplyWrite's output depends on: what it wrote,
// the files of --output, the counts and the error.
type applyRun struct {
	Out     string
	Files   map[string]string
	Counts  Counts
	Rules   int
	Err     string
	Skipped []Skipped
}

// TestApplyWriteParallel: ApplyWrite writes, with N workers, byte for
// byte what it writes with one, in every format, with --output, and
// stops at the same bad document with the same error.
func TestApplyWriteParallel(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	many, _ := pods(300)
	manyPods := write("pods.yaml", many)
	var cms strings.Builder
	for i := range 120 {
		fmt.Fprintf(&cms, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d, namespace: ns%d}\ndata: {key: v%d}\n---\n", i, i%7, i)
	}
	configMaps := write("configmaps.yaml", cms.String())
	badMiddle := write("bad.yaml", cms.String()+"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [bad\n---\n"+cms.String())
	lookupPolicy := write("lookup-policy.yaml", `apiVersion: kyverno.io/v1
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
`)
	brokenPolicy := write("broken-policy.yaml", `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: broken}
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      deny:
        conditions: {any: [{key: a, operator: NoSuchOperator, value: b}]}
`)
	lookupRes := write("lookup.yaml", strings.Repeat(lookupResourcesFile+"---\n", 20))

	fixtures := []struct {
		name string
		opts ApplyOptions
	}{
		{name: "validate", opts: ApplyOptions{PolicyPaths: []string{validatePolicy, "testdata/namespaced/no-latest.yaml"}, ResourcePaths: []string{validateResources, "testdata/namespaced/pods.yaml", manyPods}}},
		{name: "values", opts: ApplyOptions{PolicyPaths: []string{"testdata/values/allowed-image.yaml"}, ResourcePaths: []string{"testdata/values/.kyverno-test/pods.yaml"}, ValuesFile: "testdata/values/.kyverno-test/values.yaml", UserInfoFile: "testdata/values/.kyverno-test/userinfo.yaml", AuditWarn: true}},
		{name: "mutate", opts: ApplyOptions{PolicyPaths: []string{"testdata/mutate"}, ResourcePaths: []string{"testdata/mutate/configmap.yaml", configMaps}}},
		{name: "generate", opts: ApplyOptions{PolicyPaths: []string{"testdata/generate/netpol.yaml"}, ResourcePaths: []string{"testdata/generate/namespaces.yaml"}}},
		{name: "lookup", opts: ApplyOptions{PolicyPaths: []string{lookupPolicy}, ResourcePaths: []string{lookupRes}}},
		{name: "mpol", opts: ApplyOptions{PolicyPaths: []string{"testdata/mpol/policies.yaml"}, ResourcePaths: []string{"testdata/mpol/resources.yaml"}}},
		{name: "vpol", opts: ApplyOptions{PolicyPaths: []string{"testdata/vpol/policies.yaml"}, ResourcePaths: []string{"testdata/vpol/resources.yaml"}, ValuesFile: "testdata/vpol/values.yaml", ExceptionPaths: []string{"testdata/vpol/exceptions.yaml"}, ContextFile: "testdata/vpol/context.yaml"}},
		{name: "ivpol", opts: ApplyOptions{PolicyPaths: []string{"testdata/ivpol/policies.yaml"}, ResourcePaths: []string{"testdata/ivpol/resources.yaml"}, ExceptionPaths: []string{"testdata/ivpol/exceptions.yaml"}}},
		{name: "vap", opts: ApplyOptions{PolicyPaths: []string{"testdata/vap/policies.yaml"}, ResourcePaths: []string{"testdata/vap/resources.yaml"}, ParamPaths: []string{"testdata/vap/params.yaml"}, ValuesFile: "testdata/vap/values.yaml", UserInfoFile: "testdata/vap/userinfo.yaml"}},
		{name: "bad document", opts: ApplyOptions{PolicyPaths: []string{"testdata/mutate"}, ResourcePaths: []string{badMiddle}}},
		{name: "broken policy", opts: ApplyOptions{PolicyPaths: []string{brokenPolicy, validatePolicy}, ResourcePaths: []string{manyPods}}},
	}
	outputs := []struct {
		name   string
		give   ApplyOutput
		output bool // -o DIR
	}{
		{name: "text", give: ApplyOutput{PrintMutated: true}},
		{name: "text -i", give: ApplyOutput{PrintMutated: true, Stdin: true}},
		{name: "table", give: ApplyOutput{Format: ApplyTable, PrintMutated: true, Detailed: true}},
		{name: "table color", give: ApplyOutput{Format: ApplyTable, Color: true}},
		{name: "report yaml", give: ApplyOutput{Format: ApplyReportYAML}},
		{name: "report json", give: ApplyOutput{Format: ApplyReportJSON}},
		{name: "-o DIR", give: ApplyOutput{}, output: true},
	}
	now := time.Unix(1700000000, 0)
	run := func(t *testing.T, opts ApplyOptions, out ApplyOutput, output bool, workers int) applyRun {
		t.Helper()
		opts.Parallelism = workers
		opts.Now = func() time.Time { return now }
		tmp := t.TempDir()
		out.TempDir = tmp
		if output {
			out.MutatedPath = filepath.Join(tmp, "out")
		}
		var b bytes.Buffer
		res, err := ApplyWrite(t.Context(), opts, &b, out)
		got := applyRun{Out: b.String()}
		if err != nil {
			got.Err = err.Error()
		} else {
			got.Counts, got.Rules, got.Skipped = res.Counts, res.RuleCount, res.Skipped
		}
		if _, err := os.Stat(out.MutatedPath); output && err == nil {
			got.Files = readTree(t, out.MutatedPath)
		}
		return got
	}
	for _, fx := range fixtures {
		for _, o := range outputs {
			t.Run(fx.name+"/"+o.name, func(t *testing.T) {
				want := run(t, fx.opts, o.give, o.output, 1)
				if want.Out == "" && want.Err == "" && want.Files == nil {
					t.Fatalf("ApplyWrite(%s, %s, 1 worker) wrote nothing", fx.name, o.name)
				}
				for _, workers := range []int{2, 4, 8} {
					got := run(t, fx.opts, o.give, o.output, workers)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("ApplyWrite(%s, %s, %d workers) mismatch with 1 worker (-want +got):\n%s", fx.name, o.name, workers, diff)
					}
				}
			})
		}
	}
}
