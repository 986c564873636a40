package scanner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/scanner"
)

// netpolPolicy generates a NetworkPolicy in every Namespace labelled
// netpol=default, for existing Namespaces too.
const netpolPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: default-deny
spec:
  generateExisting: true
  rules:
  - name: deny-all
    match:
      any:
      - resources:
          kinds: [Namespace]
          selector:
            matchLabels:
              netpol: default
    generate:
      apiVersion: networking.k8s.io/v1
      kind: NetworkPolicy
      name: default-deny
      namespace: "{{request.object.metadata.name}}"
      data:
        spec:
          podSelector: {}
          policyTypes: [Ingress, Egress]
`

// kindsPolicy names kinds in the forms a match block allows.
const kindsPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: kinds
spec:
  rules:
  - name: workloads
    match:
      all:
      - resources:
          kinds: [apps/v1/Deployment, v1/ConfigMap, Pod/exec]
    validate:
      message: "x"
      pattern:
        metadata:
          name: "?*"
`

func TestLoadPolicies(t *testing.T) {
	ts := startServer(t, teamLabelPolicy, adminOnlyPolicy, netpolPolicy, kindsPolicy)
	set, err := scanner.LoadPolicies(context.Background(), ts.client)
	if err != nil {
		t.Fatal(err)
	}
	type ref struct {
		Key   string
		Kinds []string
		Rules []string
	}
	refs := func(ps []*scanner.PolicyRef) []ref {
		var out []ref
		for _, p := range ps {
			r := ref{Key: p.Key(), Rules: p.Rules}
			for _, k := range p.Kinds {
				r.Kinds = append(r.Kinds, k.String())
			}
			if len(p.Hash) != 64 {
				t.Errorf("policy %s hash %q, want 64 hex digits", p.Key(), p.Hash)
			}
			out = append(out, r)
		}
		return out
	}
	// Pod rules get their autogen rules (and kinds) too; subresources are
	// not scanned; admins-only (background: false) is not scanned.
	wantBG := []ref{
		{Key: "kinds", Kinds: []string{"apps/v1/Deployment", "v1/ConfigMap"}, Rules: []string{"workloads"}},
		{Key: "require-team-label", Kinds: []string{"Pod", "apps/v1/DaemonSet", "apps/v1/Deployment", "batch/v1/Job", "apps/v1/ReplicaSet", "v1/ReplicationController", "apps/v1/StatefulSet", "batch/v1/CronJob"}, Rules: []string{"check-team", "autogen-check-team", "autogen-cronjob-check-team"}},
	}
	if diff := cmp.Diff(wantBG, refs(set.Background)); diff != "" {
		t.Errorf("LoadPolicies background mismatch (-want +got):\n%s", diff)
	}
	wantGen := []ref{{Key: "default-deny", Kinds: []string{"Namespace"}, Rules: []string{"deny-all"}}}
	if diff := cmp.Diff(wantGen, refs(set.GenerateExisting)); diff != "" {
		t.Errorf("LoadPolicies generateExisting mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"admins-only", "default-deny", "kinds", "require-team-label"}, sortedKeys(set.Versions)); diff != "" {
		t.Errorf("LoadPolicies versions mismatch (-want +got):\n%s", diff)
	}
}

func TestRunRescansChangedPolicy(t *testing.T) {
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
	type scan struct {
		rescanned []string
		sum       scanner.Summary
		err       error
	}
	scans := make(chan scan, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.Run(ctx, func(*scanner.PolicySet) scanner.Source { return src }, scanner.RunOptions{
			Interval:   time.Hour,
			PolicyPoll: 5 * time.Millisecond,
			Scanned: func(sum scanner.Summary, rescanned []string, err error) {
				scans <- scan{rescanned, sum, err}
			},
		})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	next := func() scan {
		t.Helper()
		select {
		case sc := <-scans:
			return sc
		case <-time.After(10 * time.Second):
			t.Fatal("no scan within 10s")
			return scan{}
		}
	}
	first := next()
	if first.err != nil || first.rescanned != nil || first.sum.Counts != (scanner.Counts{Pass: 3, Fail: 3}) {
		t.Fatalf("Run first scan = %+v, want a full scan with 3 pass and 3 fail", first)
	}
	// A new version of prod-no-latest: only it is scanned again.
	changed := strings.Replace(prodOnlyPolicy, "latest is not allowed in prod.", "no latest in prod.", 1)
	ts.source.updates <- documents(t, teamLabelPolicy, changed)
	second := next()
	if second.err != nil || second.sum.Counts != (scanner.Counts{Fail: 1}) {
		t.Errorf("Run rescan = %+v, want 1 fail", second)
	}
	if diff := cmp.Diff([]string{"prod-no-latest"}, second.rescanned); diff != "" {
		t.Errorf("Run rescanned policies mismatch (-want +got):\n%s", diff)
	}
	var msgs []string
	for _, r := range sink.results[7:] {
		for _, rr := range r.Response.GetResults() {
			msgs = append(msgs, rr.GetMessage())
		}
	}
	if len(msgs) != 1 || !strings.Contains(msgs[0], "no latest in prod.") {
		t.Errorf("Run rescan messages = %q, want the new policy's message", msgs)
	}
}
