package server

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/protobuf/testing/protocmp"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// listed is what the reload tests compare of ListPolicies.
type listed struct {
	Name   string
	Ready  bool
	Hash   string
	Errors []string // code at path
}

func listPolicies(t *testing.T, c verdictv1.DecisionServiceClient) ([]listed, []string) {
	t.Helper()
	resp, err := c.ListPolicies(t.Context(), &verdictv1.ListPoliciesRequest{})
	if err != nil {
		t.Fatalf("ListPolicies: %v", err)
	}
	var out []listed
	for _, p := range resp.GetPolicies() {
		l := listed{Name: p.GetName(), Ready: p.GetReady(), Hash: p.GetContentHash()}
		for _, e := range p.GetErrors() {
			l.Errors = append(l.Errors, e.GetCode()+" at "+e.GetPath())
		}
		out = append(out, l)
	}
	var srcErrs []string
	for _, se := range resp.GetSourceErrors() {
		for _, e := range se.GetErrors() {
			srcErrs = append(srcErrs, filepath.Base(se.GetSource())+": "+e.GetCode())
		}
	}
	return out, srcErrs
}

// messageOf returns the message of the first result of evaluating obj.
func messageOf(t *testing.T, c verdictv1.DecisionServiceClient, obj []byte) string {
	t.Helper()
	resp, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{Object: obj})
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	if len(resp.GetResults()) == 0 {
		return ""
	}
	return resp.GetResults()[0].GetMessage()
}

func TestHotReload(t *testing.T) {
	dir, src := policyFolder(t, map[string]string{"team.yaml": teamLabelPolicy})
	ts := startServer(t, Options{Sources: []PolicySource{src}})
	c := ts.client(t)
	obj := pod(t, "p", "default", "nginx:latest", nil)

	if got, want := messageOf(t, c, obj), "validation error: The label `team` is required. rule check-team failed at path /metadata/labels/"; got != want {
		t.Fatalf("before reload: message %q, want %q", got, want)
	}
	before, _ := listPolicies(t, c)

	// Change a policy: its new version is used.
	writeFile(t, dir, "team.yaml", strings.Replace(teamLabelPolicy, "is required.", "is mandatory.", 1))
	eventually(t, func() string {
		if got := messageOf(t, c, obj); !strings.Contains(got, "is mandatory.") {
			return fmt.Sprintf("after changing team.yaml: message %q, want the new text", got)
		}
		return ""
	})
	after, _ := listPolicies(t, c)
	if len(after) != 1 || after[0].Hash == before[0].Hash {
		t.Errorf("after changing team.yaml: ListPolicies = %v, want one policy with a new hash (was %s)", after, before[0].Hash)
	}

	// Add a file in a sub-folder, remove the first one.
	writeFile(t, dir, "sub/latest.yaml", latestTagPolicy)
	if err := os.Remove(filepath.Join(dir, "team.yaml")); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() string {
		got, _ := listPolicies(t, c)
		if len(got) != 1 || got[0].Name != "disallow-latest-tag" {
			return fmt.Sprintf("after adding sub/latest.yaml and removing team.yaml: ListPolicies = %v, want disallow-latest-tag only", got)
		}
		return ""
	})
	if got, want := messageOf(t, c, obj), "validation error: An image tag other than latest is required. rule no-latest failed at path /spec/containers/0/image/"; got != want {
		t.Errorf("after reload: message %q, want %q", got, want)
	}
}

func TestBadPolicyFile(t *testing.T) {
	badVariable := strings.Replace(teamLabelPolicy, `message: "The label`, `message: "{{ request.object | }} The label`, 1)
	dir, src := policyFolder(t, map[string]string{
		"team.yaml":   teamLabelPolicy,
		"latest.yaml": latestTagPolicy,
	})
	ts := startServer(t, Options{Sources: []PolicySource{src}})
	c := ts.client(t)
	initial, _ := listPolicies(t, c)
	hash := map[string]string{}
	for _, l := range initial {
		hash[l.Name] = l.Hash
	}
	obj := pod(t, "p", "default", "nginx:1.0", nil)

	tests := []struct {
		name           string
		giveFile       string
		giveContent    string
		wantPolicies   []listed
		wantSrcErrors  []string
		wantMsgContain string // of the first result of evaluating obj
	}{
		{
			name:        "a policy that does not compile keeps its last good version",
			giveFile:    "team.yaml",
			giveContent: badVariable,
			wantPolicies: []listed{
				{Name: "disallow-latest-tag", Ready: true, Hash: hash["disallow-latest-tag"]},
				{Name: "require-team-label", Ready: true, Hash: hash["require-team-label"], Errors: []string{
					"invalid_variable at spec.rules[0].validate.message",
				}},
			},
			wantMsgContain: "The label `team` is required.",
		},
		{
			name:        "a file that is not YAML keeps what it held",
			giveFile:    "latest.yaml",
			giveContent: "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: [unclosed\n",
			wantPolicies: []listed{
				{Name: "disallow-latest-tag", Ready: true, Hash: hash["disallow-latest-tag"]},
				{Name: "require-team-label", Ready: true, Hash: hash["require-team-label"], Errors: []string{
					"invalid_variable at spec.rules[0].validate.message",
				}},
			},
			wantSrcErrors:  []string{"latest.yaml: decode_error"},
			wantMsgContain: "The label `team` is required.",
		},
		{
			name:        "a new policy that never compiled is listed, not used",
			giveFile:    "other.yaml",
			giveContent: strings.Replace(badVariable, "name: require-team-label", "name: other", 1),
			wantPolicies: []listed{
				{Name: "disallow-latest-tag", Ready: true, Hash: hash["disallow-latest-tag"]},
				{Name: "other", Errors: []string{
					"invalid_variable at spec.rules[0].validate.message",
				}},
				{Name: "require-team-label", Ready: true, Hash: hash["require-team-label"], Errors: []string{
					"invalid_variable at spec.rules[0].validate.message",
				}},
			},
			wantSrcErrors:  []string{"latest.yaml: decode_error"},
			wantMsgContain: "The label `team` is required.",
		},
		{
			name:        "fixing the files clears the errors",
			giveFile:    "latest.yaml",
			giveContent: latestTagPolicy,
			wantPolicies: []listed{
				{Name: "disallow-latest-tag", Ready: true, Hash: hash["disallow-latest-tag"]},
				{Name: "other", Errors: []string{
					"invalid_variable at spec.rules[0].validate.message",
				}},
				{Name: "require-team-label", Ready: true, Hash: hash["require-team-label"], Errors: []string{
					"invalid_variable at spec.rules[0].validate.message",
				}},
			},
			wantMsgContain: "The label `team` is required.",
		},
	}
	// The steps build on each other: they run in order, not in parallel.
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writeFile(t, dir, tt.giveFile, tt.giveContent)
			eventually(t, func() string {
				got, srcErrs := listPolicies(t, c)
				if diff := cmp.Diff(tt.wantPolicies, got, cmpopts.EquateEmpty()); diff != "" {
					return fmt.Sprintf("ListPolicies after writing %s mismatch (-want +got):\n%s", tt.giveFile, diff)
				}
				if diff := cmp.Diff(tt.wantSrcErrors, srcErrs, cmpopts.EquateEmpty()); diff != "" {
					return fmt.Sprintf("ListPolicies source errors after writing %s mismatch (-want +got):\n%s", tt.giveFile, diff)
				}
				return ""
			})
			resp, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{Object: obj})
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			var found bool
			for _, r := range resp.GetResults() {
				found = found || strings.Contains(r.GetMessage(), tt.wantMsgContain)
			}
			if !found {
				t.Errorf("Evaluate after writing %s: results %v, want one whose message holds %q", tt.giveFile, resp.GetResults(), tt.wantMsgContain)
			}
		})
	}

	// GetPolicy shows the version in use and the errors of the latest.
	got, err := c.GetPolicy(t.Context(), &verdictv1.GetPolicyRequest{Name: "require-team-label"})
	if err != nil {
		t.Fatalf("GetPolicy: %v", err)
	}
	wantInfo := &verdictv1.PolicyInfo{
		Kind:        "ClusterPolicy",
		Name:        "require-team-label",
		Source:      filepath.Join(dir, "team.yaml") + ":1",
		Ready:       true,
		ContentHash: hash["require-team-label"],
		Rules:       []string{"check-team", "autogen-check-team", "autogen-cronjob-check-team"},
		Labels:      map[string]string{"set": "baseline"},
		Background:  true,
		// What a background scan lists: the kinds of the rules and of
		// their autogen rules (Kyverno's pod controllers).
		BackgroundScan: &verdictv1.ScanScope{
			Rules: []string{"check-team", "autogen-check-team", "autogen-cronjob-check-team"},
			Resources: []*verdictv1.ResourceSelector{
				{Group: "*", Version: "*", Kind: "Pod"},
				{Group: "apps", Version: "v1", Kind: "DaemonSet"},
				{Group: "apps", Version: "v1", Kind: "Deployment"},
				{Group: "batch", Version: "v1", Kind: "Job"},
				{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
				{Group: "*", Version: "v1", Kind: "ReplicationController"},
				{Group: "apps", Version: "v1", Kind: "StatefulSet"},
				{Group: "batch", Version: "v1", Kind: "CronJob"},
			},
		},
	}
	if diff := cmp.Diff(wantInfo, got.GetPolicy(), protocmp.Transform(), protocmp.IgnoreFields(&verdictv1.PolicyInfo{}, "errors")); diff != "" {
		t.Errorf("GetPolicy(require-team-label) mismatch (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(got.GetDocument()), "The label `team` is required.") {
		t.Errorf("GetPolicy(require-team-label).Document = %s, want the version in use", got.GetDocument())
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes (a log
// destination).
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestBadPolicyFilesAtStart starts a server on a folder that holds, next
// to a good policy, a file that is not YAML and a policy that does not
// compile: the server serves the good policy, and reports the others in
// ListPolicies, its logs and its metrics.
func TestBadPolicyFilesAtStart(t *testing.T) {
	badVariable := strings.Replace(teamLabelPolicy, `message: "The label`, `message: "{{ request.object | }} The label`, 1)
	_, src := policyFolder(t, map[string]string{
		"latest.yaml": latestTagPolicy,
		"broken.yaml": "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: [unclosed\n",
		"team.yaml":   badVariable,
	})
	var logs lockedBuffer
	ts := startServer(t, Options{Sources: []PolicySource{src}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	c := ts.client(t)

	got, srcErrs := listPolicies(t, c)
	for i := range got {
		got[i].Hash = ""
	}
	wantPolicies := []listed{
		{Name: "disallow-latest-tag", Ready: true},
		{Name: "require-team-label", Errors: []string{
			"invalid_variable at spec.rules[0].validate.message",
		}},
	}
	if diff := cmp.Diff(wantPolicies, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("ListPolicies mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"broken.yaml: decode_error"}, srcErrs); diff != "" {
		t.Errorf("ListPolicies source errors mismatch (-want +got):\n%s", diff)
	}
	if msg := messageOf(t, c, pod(t, "p", "default", "nginx:latest", nil)); !strings.Contains(msg, "An image tag other than latest is required.") {
		t.Errorf("Evaluate(Pod with a latest image) = first message %q, want the good policy's", msg)
	}
	if got := metricValue(t, ts.reg, "verdict_policy_source_errors"); got != 1 {
		t.Errorf("verdict_policy_source_errors = %v, want 1", got)
	}
	if got := testutil.ToFloat64(ts.srv.metrics.policies.WithLabelValues("invalid")); got != 1 {
		t.Errorf(`verdict_policies{state="invalid"} = %v, want 1`, got)
	}
	for _, want := range []string{"broken.yaml", "team.yaml"} {
		if !strings.Contains(logs.String(), want) || !strings.Contains(logs.String(), "level=WARN") {
			t.Errorf("logs do not warn about %s:\n%s", want, logs.String())
		}
	}
}
