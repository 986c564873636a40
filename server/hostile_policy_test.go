package server

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/verdict-policy/verdict/internal/testing/hostile"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// Policies of issue 17 that took the server down: a JMESPath expression
// nested a million deep overflowed the stack of go-jmespath's parser (a
// fatal error, on every reload and restart of a folder holding it), and
// nine nested replace_all calls ran it out of memory on the first Pod.
// Each is generated here.

// millionParens is the 2 MB expression of the issue.
var millionParens = hostile.Expressions()[0].Expr

// hasError reports whether l lists an error of code at path.
func (l listed) hasError(code, path string) bool {
	return slices.Contains(l.Errors, code+" at "+path)
}

func findListed(ls []listed, name string) (listed, bool) {
	for _, l := range ls {
		if l.Name == name {
			return l, true
		}
	}
	return listed{}, false
}

// A folder holding a hostile policy when the server starts: the others are
// served, ListPolicies reports it.
func TestFolderHostilePolicyAtStart(t *testing.T) {
	_, src := policyFolder(t, map[string]string{
		"team.yaml":    teamLabelPolicy,
		"hostile.yaml": hostile.MessagePolicy("hostile", millionParens),
	})
	ts := startServer(t, Options{Sources: []PolicySource{src}})
	c := ts.client(t)

	got, _ := listPolicies(t, c)
	if team, ok := findListed(got, "require-team-label"); !ok || !team.Ready {
		t.Errorf("ListPolicies = %v, want require-team-label ready", got)
	}
	if h, ok := findListed(got, "hostile"); !ok || h.Ready || !h.hasError("invalid_variable", "spec.rules[0].validate.message") {
		t.Errorf("ListPolicies = %v, want hostile not ready, with invalid_variable at spec.rules[0].validate.message", got)
	}
	if got, want := messageOf(t, c, pod(t, "p", "default", "nginx:1.0", nil)), "The label `team` is required."; !strings.Contains(got, want) {
		t.Errorf("Evaluate(pod) message = %q, want it to contain %q", got, want)
	}
}

// A hostile version of a served policy, and a new hostile file, written
// while the server runs: the last good version stays in use.
func TestFolderHostilePolicyAtRuntime(t *testing.T) {
	dir, src := policyFolder(t, map[string]string{"team.yaml": teamLabelPolicy})
	ts := startServer(t, Options{Sources: []PolicySource{src}})
	c := ts.client(t)
	before, _ := listPolicies(t, c)
	obj := pod(t, "p", "default", "nginx:1.0", nil)

	hostileTeam := strings.Replace(teamLabelPolicy, "message: \"The label `team` is required.\"", `message: "{{ `+millionParens+` }}"`, 1)
	if hostileTeam == teamLabelPolicy {
		t.Fatal("the hostile version of team.yaml is the same as the original")
	}
	writeFile(t, dir, "team.yaml", hostileTeam)
	writeFile(t, dir, "chain.yaml", hostile.MessagePolicy("chain", hostile.Expressions()[3].Expr))
	eventually(t, func() string {
		got, _ := listPolicies(t, c)
		team, ok := findListed(got, "require-team-label")
		if !ok || !team.Ready || team.Hash != before[0].Hash || !team.hasError("invalid_variable", "spec.rules[0].validate.message") {
			return fmt.Sprintf("ListPolicies = %v, want require-team-label ready with its last good hash %s and invalid_variable at spec.rules[0].validate.message", got, before[0].Hash)
		}
		if chain, ok := findListed(got, "chain"); !ok || chain.Ready || !chain.hasError("invalid_variable", "spec.rules[0].validate.message") {
			return fmt.Sprintf("ListPolicies = %v, want chain not ready, with invalid_variable at spec.rules[0].validate.message", got)
		}
		return ""
	})
	if got, want := messageOf(t, c, obj), "The label `team` is required."; !strings.Contains(got, want) {
		t.Errorf("Evaluate(pod) message = %q, want the last good version's %q", got, want)
	}
}

// hostileSizes are server options that take documents of the hostile
// sizes, so that they reach the compiler: the default
// MaxRequestPolicyBytes refuses the largest before (limits_test.go).
var hostileSizes = Options{MaxRequestPolicyBytes: 4 << 20}

func TestValidatePoliciesHostile(t *testing.T) {
	ts := startServer(t, hostileSizes)
	c := ts.client(t)
	for _, ex := range hostile.Expressions() {
		t.Run(ex.Name, func(t *testing.T) {
			resp, err := c.ValidatePolicies(t.Context(), &verdictv1.ValidatePoliciesRequest{Documents: [][]byte{[]byte(hostile.MessagePolicy("hostile", ex.Expr))}})
			if err != nil {
				t.Fatalf("ValidatePolicies(%s) = %v", ex.Name, err)
			}
			errs := resp.GetDocuments()[0].GetErrors()
			if len(errs) != 1 {
				t.Fatalf("ValidatePolicies(%s) = %d errors, want 1", ex.Name, len(errs))
			}
			e := errs[0]
			if e.GetCode() != "invalid_variable" || e.GetPath() != "spec.rules[0].validate.message" {
				t.Errorf("ValidatePolicies(%s) error = {%s at %s}, want {invalid_variable at spec.rules[0].validate.message}", ex.Name, e.GetCode(), e.GetPath())
			}
			if msg := e.GetMessage(); len(msg) > 1024 || !strings.Contains(msg, ex.Limit) {
				t.Errorf("ValidatePolicies(%s) message = %.300q (%d bytes), want at most 1 KiB naming %s", ex.Name, msg, len(msg), ex.Limit)
			}
		})
	}
	t.Run("string amplification compiles", func(t *testing.T) {
		resp, err := c.ValidatePolicies(t.Context(), &verdictv1.ValidatePoliciesRequest{Documents: [][]byte{[]byte(hostile.AmplifyPolicy())}})
		if err != nil || len(resp.GetDocuments()[0].GetErrors()) != 0 {
			t.Errorf("ValidatePolicies(amplify) = %v, %v, want no error: its results are bounded at evaluation", resp.GetDocuments(), err)
		}
	})
}

func TestEvaluateInlineHostile(t *testing.T) {
	ts := startServer(t, hostileSizes)
	c := ts.client(t)
	for _, ex := range hostile.Expressions() {
		t.Run(ex.Name, func(t *testing.T) {
			_, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{
				Object:   pod(t, "p", "default", "nginx", nil),
				Policies: &verdictv1.EvaluateRequest_InlinePolicies{InlinePolicies: &verdictv1.InlinePolicies{Documents: [][]byte{[]byte(hostile.MessagePolicy("hostile", ex.Expr))}}},
			})
			code, vs := statusOf(err)
			if code != codes.InvalidArgument {
				t.Errorf("Evaluate(inline %s) code = %v, want InvalidArgument (%.300v)", ex.Name, code, err)
			}
			want := []violation{{"inline_policies.documents[0].spec.rules[0].validate.message", "invalid_variable"}}
			if diff := cmp.Diff(want, vs); diff != "" {
				t.Errorf("Evaluate(inline %s) field violations mismatch (-want +got):\n%s", ex.Name, diff)
			}
			if msg := status.Convert(err).Message(); len(msg) > 2048 {
				t.Errorf("Evaluate(inline %s) status message of %d bytes, want at most 2 KiB", ex.Name, len(msg))
			}
		})
	}
}

// The nine nested replace_all calls of the issue, against a Pod: an error
// result naming the limit, quickly.
func TestEvaluateStringAmplification(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.client(t)
	start := time.Now()
	resp, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{
		Object:   pod(t, strings.Repeat("a", 40), "default", "nginx", nil),
		Policies: &verdictv1.EvaluateRequest_InlinePolicies{InlinePolicies: &verdictv1.InlinePolicies{Documents: [][]byte{[]byte(hostile.AmplifyPolicy())}}},
	})
	if err != nil {
		t.Fatalf("Evaluate(amplify) = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Evaluate(amplify) took %v, want at most 5s", d)
	}
	rs := resp.GetResults()
	if len(rs) != 1 || rs[0].GetResult() != verdictv1.Result_RESULT_ERROR || !strings.Contains(rs[0].GetMessage(), "MaxStringBytes") {
		t.Errorf("Evaluate(amplify) = %v, want one error result naming MaxStringBytes", rs)
	}
}
