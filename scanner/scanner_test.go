package scanner_test

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/scanner"
)

// sampleFiles are resources in YAML, JSON (a List), a sub-folder, and
// files the scan must skip.
var sampleFiles = map[string]string{
	"namespaces.yaml": `apiVersion: v1
kind: Namespace
metadata: {name: prod, labels: {env: prod}}
---
apiVersion: v1
kind: Namespace
metadata: {name: dev}
`,
	"pods.yaml": `apiVersion: v1
kind: Pod
metadata: {name: a, namespace: prod, labels: {team: web}}
spec: {containers: [{name: c, image: "nginx:latest"}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: dev}
spec: {containers: [{name: c, image: "nginx:latest"}]}
---
apiVersion: v1
kind: Pod
metadata: {name: c, labels: {team: web}}
spec: {containers: [{name: c, image: "nginx:1.27"}]}
`,
	"sub/more.json": `{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "d", "namespace": "dev", "labels": {"team": "db"}}, "spec": {"containers": [{"name": "c", "image": "pg:16"}]}},
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "e", "namespace": "dev"}, "spec": {"containers": [{"name": "c", "image": "pg:16"}]}}
]}`,
	".hidden/skipped.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: hidden}\n",
	"README.md":            "not a resource",
}

// outcome is one rule result of a scanned resource.
type outcome struct {
	Resource, Policy, Rule string
	Result                 verdictv1.Result
}

func outcomes(results []scanner.Result) []outcome {
	var out []outcome
	for _, r := range results {
		for _, rr := range r.Response.GetResults() {
			out = append(out, outcome{r.Resource.String(), rr.GetPolicy(), rr.GetRule(), rr.GetResult()})
		}
	}
	return out
}

func TestScanFiles(t *testing.T) {
	ts := startServer(t, teamLabelPolicy, prodOnlyPolicy, adminOnlyPolicy)
	dir := writeFiles(t, sampleFiles)
	src, err := scanner.NewFileSource(context.Background(), []string{dir}, scanner.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sink := &collectSink{}
	s, err := scanner.New(ts.client, scanner.Options{BatchSize: 2, Linger: time.Minute, Sink: sink, SinkBatch: 3})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := s.Scan(context.Background(), src, nil, scanner.ScanOptions{})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}

	wantSum := scanner.Summary{
		Shard:     scanner.Shard{Index: 0, Count: 1},
		Resources: 7,
		Counts:    scanner.Counts{Pass: 3, Fail: 3},
	}
	sum.Duration = 0
	if diff := cmp.Diff(wantSum, sum); diff != "" {
		t.Errorf("Scan summary mismatch (-want +got):\n%s", diff)
	}
	// The userInfo policy (background: false) gives nothing; the prod
	// policy applies in the namespace labelled env=prod only, whose labels
	// come from the Namespace of the files.
	want := []outcome{
		{"prod/Pod/a", "prod-no-latest", "no-latest", verdictv1.Result_RESULT_FAIL},
		{"prod/Pod/a", "require-team-label", "check-team", verdictv1.Result_RESULT_PASS},
		{"dev/Pod/b", "require-team-label", "check-team", verdictv1.Result_RESULT_FAIL},
		{"default/Pod/c", "require-team-label", "check-team", verdictv1.Result_RESULT_PASS},
		{"dev/Pod/d", "require-team-label", "check-team", verdictv1.Result_RESULT_PASS},
		{"dev/Pod/e", "require-team-label", "check-team", verdictv1.Result_RESULT_FAIL},
	}
	if diff := cmp.Diff(want, outcomes(sink.results)); diff != "" {
		t.Errorf("Scan results mismatch (-want +got):\n%s", diff)
	}
	var sources []string
	for _, r := range sink.results {
		sources = append(sources, strings.TrimPrefix(r.Source, dir+"/"))
	}
	wantSources := []string{"namespaces.yaml:1", "namespaces.yaml:5", "pods.yaml:1", "pods.yaml:6", "pods.yaml:11", "sub/more.json:1", "sub/more.json:1"}
	if diff := cmp.Diff(wantSources, sources); diff != "" {
		t.Errorf("Scan result sources mismatch (-want +got):\n%s", diff)
	}
	// 7 resources in batches of 2 are 4 batches; 7 results in sink
	// writes of 3 are 3 writes.
	if got := ts.streamBatches(t); got != 4 {
		t.Errorf("Scan sent %d batches, want 4", got)
	}
	if sink.writes != 3 {
		t.Errorf("Scan wrote to the sink %d times, want 3", sink.writes)
	}
	if len(sink.done) != 1 || len(sink.done[0].Seen) != 7 {
		t.Fatalf("Scan ScanDone = %+v, want one with 7 resources seen", sink.done)
	}
	if diff := cmp.Diff([]string{"Namespace", "Pod"}, sink.done[0].Kinds); diff != "" {
		t.Errorf("ScanDone kinds mismatch (-want +got):\n%s", diff)
	}
	for _, r := range sink.results {
		if !r.AllPolicies || r.Time.IsZero() {
			t.Errorf("Scan result %s: AllPolicies %v, Time %v; want true and set", r.Resource, r.AllPolicies, r.Time)
		}
	}
}

func TestScanPolicySelection(t *testing.T) {
	ts := startServer(t, teamLabelPolicy, prodOnlyPolicy)
	src, err := scanner.NewFileSource(context.Background(), []string{writeFiles(t, sampleFiles)}, scanner.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sink := &collectSink{}
	s, err := scanner.New(ts.client, scanner.Options{Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := s.Scan(context.Background(), src, nil, scanner.ScanOptions{Policies: []string{"prod-no-latest"}})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	want := []outcome{{"prod/Pod/a", "prod-no-latest", "no-latest", verdictv1.Result_RESULT_FAIL}}
	if diff := cmp.Diff(want, outcomes(sink.results)); diff != "" {
		t.Errorf("Scan(prod-no-latest) results mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"prod-no-latest"}, sink.done[0].Policies); diff != "" {
		t.Errorf("ScanDone policies mismatch (-want +got):\n%s", diff)
	}
	if sum.Resources != 7 {
		t.Errorf("Scan(prod-no-latest) scanned %d resources, want 7", sum.Resources)
	}
}

func TestScanItemErrors(t *testing.T) {
	ts := startServer(t, teamLabelPolicy)
	src, err := scanner.NewFileSource(context.Background(), []string{writeFiles(t, sampleFiles)}, scanner.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sink := &collectSink{}
	s, err := scanner.New(ts.client, scanner.Options{Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	// An unknown policy name is NOT_FOUND for every item; the scan goes
	// on and counts them.
	sum, err := s.Scan(context.Background(), src, nil, scanner.ScanOptions{Policies: []string{"no-such-policy"}})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if sum.Failed != 7 || sum.Resources != 7 {
		t.Errorf("Scan(no-such-policy) = %d failed of %d, want 7 of 7", sum.Failed, sum.Resources)
	}
	if len(sink.results) != 7 || sink.results[0].Err == nil {
		t.Errorf("Scan(no-such-policy) results = %v, want 7 with an error", sink.results)
	}
}

func TestScanProgress(t *testing.T) {
	ts := startServer(t, teamLabelPolicy)
	src, err := scanner.NewFileSource(context.Background(), []string{writeFiles(t, sampleFiles)}, scanner.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	s, err := scanner.New(ts.client, scanner.Options{Progress: &buf, ProgressInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Scan(context.Background(), src, nil, scanner.ScanOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := strings.Split(out, "\r")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "scanned 7/7 resources (") || !strings.HasSuffix(last, "\n") {
		t.Errorf("Scan progress ends with %q, want \"scanned 7/7 resources (...)\\n\"", last)
	}
	if !strings.Contains(last, "/s, ") {
		t.Errorf("Scan progress %q has no rate", last)
	}

	// No writer, no output.
	s, err = scanner.New(ts.client, scanner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Scan(context.Background(), src, nil, scanner.ScanOptions{}); err != nil {
		t.Fatal(err)
	}
}

// shardFiles are Pods in 40 namespaces and two cluster-scoped objects.
func shardFiles() map[string]string {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns-%d}\nspec: {containers: [{name: c, image: x}]}\n---\n", i)
	}
	b.WriteString("apiVersion: v1\nkind: Namespace\nmetadata: {name: ns-0}\n---\n")
	b.WriteString("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n")
	return map[string]string{"all.yaml": b.String()}
}

func TestScanShardsPartition(t *testing.T) {
	ts := startServer(t, teamLabelPolicy)
	src, err := scanner.NewFileSource(context.Background(), []string{writeFiles(t, shardFiles())}, scanner.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 3
	seen := map[string][]int{}
	total := 0
	for i := range n {
		sink := &collectSink{}
		s, err := scanner.New(ts.client, scanner.Options{Shard: scanner.Shard{Index: i, Count: n}, Sink: sink})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := s.Scan(context.Background(), src, nil, scanner.ScanOptions{})
		if err != nil {
			t.Fatalf("Scan(shard %d/%d): %v", i, n, err)
		}
		if len(sink.done) != 1 || sink.done[0].Shard != (scanner.Shard{Index: i, Count: n}) {
			t.Errorf("Scan(shard %d/%d) ScanDone = %+v, want one for its shard", i, n, sink.done)
		}
		if sum.Resources == 0 {
			t.Errorf("Scan(shard %d/%d) scanned nothing; the test wants every shard used", i, n)
		}
		for _, r := range sink.done[0].Seen {
			seen[r.String()] = append(seen[r.String()], i)
			if got := scanner.ShardOf(r.Namespace, n); got != i {
				t.Errorf("Scan(shard %d/%d) scanned %s of shard %d", i, n, r, got)
			}
		}
		total += sum.Resources
	}
	if total != src.Len() || len(seen) != src.Len() {
		t.Errorf("shards scanned %d resources (%d distinct), want %d", total, len(seen), src.Len())
	}
	for r, shards := range seen {
		if len(shards) != 1 {
			t.Errorf("%s scanned by shards %v, want one", r, shards)
		}
	}
}

func TestShardOfPartition(t *testing.T) {
	namespaces := []string{""}
	for i := range 1000 {
		namespaces = append(namespaces, fmt.Sprintf("team-%d", i))
	}
	for _, count := range []int{1, 2, 3, 7, 16} {
		used := make([]int, count)
		for _, ns := range namespaces {
			owners := 0
			for i := range count {
				if (scanner.Shard{Index: i, Count: count}).Owns(ns) {
					owners++
					used[i]++
				}
			}
			if owners != 1 {
				t.Errorf("namespace %q is owned by %d of %d shards, want 1", ns, owners, count)
			}
		}
		for i, u := range used {
			// 1001 namespaces: each shard gets a fair part.
			if u < len(namespaces)/count/2 {
				t.Errorf("shard %d/%d owns %d of %d namespaces", i, count, u, len(namespaces))
			}
		}
	}
	// The assignment is stable: it is part of the contract with the report
	// writer and between scanner versions.
	tests := []struct {
		give  string
		count int
		want  int
	}{
		{"", 4, 1},
		{"default", 4, 2},
		{"kube-system", 4, 2},
		{"team-1", 16, 6},
	}
	for _, tt := range tests {
		if got := scanner.ShardOf(tt.give, tt.count); got != tt.want {
			t.Errorf("ShardOf(%q, %d) = %d, want %d", tt.give, tt.count, got, tt.want)
		}
	}
}

func TestParseShard(t *testing.T) {
	tests := []struct {
		give string
		want scanner.Shard
	}{
		{"", scanner.Shard{Index: 0, Count: 1}},
		{"0/1", scanner.Shard{Index: 0, Count: 1}},
		{"3/4", scanner.Shard{Index: 3, Count: 4}},
	}
	for _, tt := range tests {
		got, err := scanner.ParseShard(tt.give)
		if err != nil || got != tt.want {
			t.Errorf("ParseShard(%q) = %v, %v, want %v", tt.give, got, err, tt.want)
		}
	}
	bad := []string{"1", "4/4", "-1/4", "0/0", "a/2", "1/b", "1/2/3"}
	for _, give := range bad {
		if got, err := scanner.ParseShard(give); err == nil {
			t.Errorf("ParseShard(%q) = %v, want an error", give, got)
		}
	}
}

func TestNewFileSourceErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string // parts of the error
	}{
		{
			name:  "bad yaml names file and line",
			files: map[string]string{"a.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: [b\n"},
			want:  []string{"a.yaml: document 2 (line 5): line 8:"},
		},
		{
			name:  "not an object names file and line",
			files: map[string]string{"b.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\n\nfoo: bar\n"},
			want:  []string{"b.yaml:6: not a Kubernetes object: no apiVersion, kind, metadata.name"},
		},
		{
			name:  "every bad file is reported",
			files: map[string]string{"c.json": `{"kind": "Pod"}`, "d.yml": "kind: Pod\napiVersion: v1\n"},
			want:  []string{"c.json:1: not a Kubernetes object: no apiVersion, metadata.name", "d.yml:1: not a Kubernetes object: no metadata.name"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, tt.files)
			_, err := scanner.NewFileSource(context.Background(), []string{dir}, scanner.FileOptions{})
			if err == nil {
				t.Fatalf("NewFileSource(%v) = nil error, want one", tt.files)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("NewFileSource(%v) = %q, want it to contain %q", tt.files, err, w)
				}
			}
		})
	}
	if _, err := scanner.NewFileSource(context.Background(), []string{"/no/such/file.yaml"}, scanner.FileOptions{}); err == nil || !strings.Contains(err.Error(), "/no/such/file.yaml") {
		t.Errorf("NewFileSource(missing) = %v, want an error naming the path", err)
	}
	if _, err := scanner.NewFileSource(context.Background(), nil, scanner.FileOptions{}); err == nil {
		t.Error("NewFileSource(nil) = nil error, want one")
	}
}

func TestOptionsDefaults(t *testing.T) {
	ts := startServer(t, teamLabelPolicy)
	if _, err := scanner.New(ts.client, scanner.Options{Shard: scanner.Shard{Index: 2, Count: 2}}); err == nil {
		t.Error("New(shard 2/2) = nil error, want one")
	}
	if _, err := scanner.New(nil, scanner.Options{}); err == nil {
		t.Error("New(nil client) = nil error, want one")
	}
	// Batches larger than the server's limit (1000) end the scan with
	// RESOURCE_EXHAUSTED rather than being cut silently.
	var b strings.Builder
	for i := range 1001 {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d, namespace: x}\n---\n", i)
	}
	src, err := scanner.NewFileSource(context.Background(), []string{writeFiles(t, map[string]string{"cm.yaml": b.String()})}, scanner.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := scanner.New(ts.client, scanner.Options{BatchSize: 1001, Linger: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Scan(context.Background(), src, nil, scanner.ScanOptions{}); err == nil || !strings.Contains(err.Error(), "ResourceExhausted") {
		t.Errorf("Scan(batch 1001) = %v, want RESOURCE_EXHAUSTED", err)
	}
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
