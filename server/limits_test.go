package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"

	"github.com/verdict-policy/verdict/engine/policy"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// rulesPolicy returns a ClusterPolicy named name with n rules on
// ConfigMaps (no autogen), padded with a comment to size bytes when size
// is larger.
func rulesPolicy(t testing.TB, name string, n, size int) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: %s\nspec:\n  rules:\n", name)
	for i := range n {
		fmt.Fprintf(&b, "  - name: rule-%d\n    match: {any: [{resources: {kinds: [ConfigMap]}}]}\n    validate:\n      message: \"label k%d is required\"\n      pattern: {metadata: {labels: {k%d: \"?*\"}}}\n", i, i, i)
	}
	if pad := size - b.Len(); pad > 0 {
		if pad < 2 {
			t.Fatalf("rulesPolicy(%d rules, %d bytes): %d bytes without padding, want at most %d", n, size, b.Len(), size-2)
		}
		b.WriteString("#" + strings.Repeat("x", pad-2) + "\n")
	}
	return b.String()
}

func inlineDocs(obj []byte, docs ...string) *verdictv1.EvaluateRequest {
	req := &verdictv1.EvaluateRequest{Object: obj, Policies: &verdictv1.EvaluateRequest_InlinePolicies{InlinePolicies: &verdictv1.InlinePolicies{}}}
	for _, d := range docs {
		req.GetInlinePolicies().Documents = append(req.GetInlinePolicies().Documents, []byte(d))
	}
	return req
}

// TestRequestPolicyLimits checks MaxRequestPolicyBytes and
// MaxRequestPolicyRules on inline policies, at the limits and over them:
// over, the call fails with RESOURCE_EXHAUSTED naming the field, and
// nothing is compiled.
func TestRequestPolicyLimits(t *testing.T) {
	const maxBytes, maxRules = 4096, 10
	ts := startServer(t, Options{MaxRequestPolicyBytes: maxBytes, MaxRequestPolicyRules: maxRules})
	c := ts.client(t)
	cm := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}`)
	half := rulesPolicy(t, "half", maxRules/2, 0)
	ok := []struct {
		name string
		give []string
	}{
		{"at the byte limit", []string{rulesPolicy(t, "at-bytes", 2, maxBytes)}},
		{"at the rule limit", []string{rulesPolicy(t, "at-rules", maxRules, 0)}},
		{"at the rule limit in two documents", []string{half, half}},
	}
	for _, tt := range ok {
		if _, err := c.Evaluate(t.Context(), inlineDocs(cm, tt.give...)); err != nil {
			t.Errorf("Evaluate(inline policies %s): %v, want no error", tt.name, err)
		}
	}

	compiles := metricValue(t, ts.reg, "verdict_policy_compilations_total")
	tests := []struct {
		name string
		give []string
	}{
		{"over the byte limit", []string{rulesPolicy(t, "over-bytes", 2, maxBytes+1)}},
		{"over the byte limit in two documents", []string{rulesPolicy(t, "a", 2, maxBytes/2), rulesPolicy(t, "b", 2, maxBytes/2+1)}},
		{"over the rule limit", []string{rulesPolicy(t, "over-rules", maxRules+1, 0)}},
		{"over the rule limit in two documents", []string{half, rulesPolicy(t, "half-plus", maxRules/2+1, 0)}},
	}
	for _, tt := range tests {
		_, err := c.Evaluate(t.Context(), inlineDocs(cm, tt.give...))
		code, vs := statusOf(err)
		if want := []violation{{"inline_policies.documents", "limit_exceeded"}}; code != codes.ResourceExhausted || !cmp.Equal(vs, want) {
			t.Errorf("Evaluate(inline policies %s): code %v, violations %v; want ResourceExhausted, %v", tt.name, code, vs, want)
		}
	}
	if got := metricValue(t, ts.reg, "verdict_policy_compilations_total"); got != compiles {
		t.Errorf("verdict_policy_compilations_total went from %v to %v over refused requests, want no compilation", compiles, got)
	}
}

// TestValidatePoliciesLimits checks MaxRequestPolicyBytes (per document)
// and MaxRequestPolicyRules (per policy) on ValidatePolicies, at the
// limits and over them: over, the document gets a limit_exceeded error
// and is not compiled; the other documents of the call are validated.
func TestValidatePoliciesLimits(t *testing.T) {
	const maxBytes, maxRules = 4096, 10
	ts := startServer(t, Options{MaxRequestPolicyBytes: maxBytes, MaxRequestPolicyRules: maxRules})
	c := ts.client(t)
	badVariable := strings.Replace(rulesPolicy(t, "bad", maxRules+1, 0), `"label k0 is required"`, `"{{ request.object | }}"`, 1)
	tests := []struct {
		name      string
		give      string
		wantCodes []string // of the document's errors
	}{
		{"at the byte limit", rulesPolicy(t, "at-bytes", 2, maxBytes), nil},
		{"at the rule limit", rulesPolicy(t, "at-rules", maxRules, 0), nil},
		{"two policies at the rule limit", rulesPolicy(t, "a", maxRules, 0) + "---\n" + rulesPolicy(t, "b", maxRules, 0), nil},
		{"over the byte limit", rulesPolicy(t, "over-bytes", 2, maxBytes+1), []string{"limit_exceeded"}},
		{"over the rule limit", rulesPolicy(t, "over-rules", maxRules+1, 0), []string{"limit_exceeded"}},
		{"over the rule limit, not compiled", badVariable, []string{"limit_exceeded"}},
	}
	req := &verdictv1.ValidatePoliciesRequest{}
	for _, tt := range tests {
		req.Documents = append(req.Documents, []byte(tt.give))
	}
	resp, err := c.ValidatePolicies(t.Context(), req)
	if err != nil {
		t.Fatalf("ValidatePolicies: %v", err)
	}
	for i, tt := range tests {
		var got []string
		for _, e := range resp.GetDocuments()[i].GetErrors() {
			got = append(got, e.GetCode())
		}
		if diff := cmp.Diff(tt.wantCodes, got); diff != "" {
			t.Errorf("ValidatePolicies(%s): error codes (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestInlineCacheBytes sends generated inline policies of about 80 KB
// compiled each to a server that keeps 512 KiB of them: the cache stays
// within its budget, evicting the oldest; a policy that takes more than
// the whole budget is refused with RESOURCE_EXHAUSTED, and the refusal is
// cached.
func TestInlineCacheBytes(t *testing.T) {
	const budget = 512 << 10
	ts := startServer(t, Options{InlineCacheBytes: budget, MaxRequestPolicyRules: 1000})
	c := ts.client(t)
	cm := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}`)
	for i := range 12 {
		if _, err := c.Evaluate(t.Context(), inlineDocs(cm, rulesPolicy(t, fmt.Sprintf("p%d", i), 20, 0))); err != nil {
			t.Fatalf("Evaluate(inline policy %d): %v", i, err)
		}
		if got := metricValue(t, ts.reg, "verdict_inline_policy_cache_bytes"); got > budget || got <= 0 {
			t.Fatalf("after %d policies, verdict_inline_policy_cache_bytes = %v, want in (0, %d]", i+1, got, budget)
		}
	}
	t.Logf("12 policies: %v bytes cached, %v evictions", metricValue(t, ts.reg, "verdict_inline_policy_cache_bytes"), metricValue(t, ts.reg, "verdict_policy_cache_evictions_total"))
	if got := metricValue(t, ts.reg, "verdict_policy_cache_evictions_total"); got < 3 {
		t.Errorf("verdict_policy_cache_evictions_total = %v after 12 policies of about 80 KB in 512 KiB, want at least 3", got)
	}

	big := rulesPolicy(t, "big", 200, 0) // about 800 KB compiled
	for i := range 2 {
		code, vs := statusOf(func() error { _, err := c.Evaluate(t.Context(), inlineDocs(cm, big)); return err }())
		if want := []violation{{"inline_policies.documents[0]", "limit_exceeded"}}; code != codes.ResourceExhausted || !cmp.Equal(vs, want) {
			t.Errorf("Evaluate(inline policy larger than the cache), call %d: code %v, violations %v; want ResourceExhausted, %v", i+1, code, vs, want)
		}
	}
	if got := metricValue(t, ts.reg, "verdict_policy_compilations_total"); got != 13 {
		t.Errorf("verdict_policy_compilations_total = %v, want 13 (the refused policy compiled once)", got)
	}
	if got := metricValue(t, ts.reg, "verdict_inline_policy_cache_bytes"); got > budget {
		t.Errorf("verdict_inline_policy_cache_bytes = %v, want at most %d", got, budget)
	}
}

// TestValidatePoliciesTakesASlot checks that ValidatePolicies waits for
// an evaluation slot: with one slot held, a call waits in line and fails
// with DEADLINE_EXCEEDED at its deadline; once the slot is free, it runs.
func TestValidatePoliciesTakesASlot(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	ts := startServer(t, Options{MaxEvaluations: 1, slotHook: hook(entered, release)})
	c := ts.client(t)
	first := make(chan error, 1)
	go func() {
		_, err := c.Evaluate(t.Context(), requestIn(t, "block"))
		first <- err
	}()
	<-entered
	req := &verdictv1.ValidatePoliciesRequest{Documents: [][]byte{[]byte(teamLabelPolicy)}}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	queued := make(chan error, 1)
	go func() {
		_, err := c.ValidatePolicies(ctx, req)
		queued <- err
	}()
	eventually(t, func() string {
		if got := testutil.ToFloat64(ts.srv.slots.waiting); got != 1 {
			return fmt.Sprintf("verdict_evaluations_waiting during ValidatePolicies = %v, want 1", got)
		}
		return ""
	})
	if code, _ := statusOf(<-queued); code != codes.DeadlineExceeded {
		t.Errorf("ValidatePolicies waiting for the only slot past its deadline: code %v, want DeadlineExceeded", code)
	}
	close(release)
	if err := <-first; err != nil {
		t.Errorf("Evaluate holding the slot: %v", err)
	}
	if _, err := c.ValidatePolicies(t.Context(), req); err != nil {
		t.Errorf("ValidatePolicies with the slot free: %v", err)
	}
}

// TestCompileCacheWaiters checks the calls that miss a key another call is
// compiling: they wait without their evaluation slot, give up when their
// context ends, and get the compilation once it is done.
func TestCompileCacheWaiters(t *testing.T) {
	m, err := newMetrics(prometheus.NewRegistry(), Options{}.withDefaults().resultLimits())
	if err != nil {
		t.Fatal(err)
	}
	sl, err := newSlots(1, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	c := newCompileCache(8, 0, nil, m)
	key := cacheKey{identity: "inline", hash: "h"}
	building, finish := make(chan struct{}), make(chan struct{})
	want := &compiled{policies: []*policy.Policy{}}
	leader := make(chan *compiled, 1)
	go func() {
		v, _ := c.get(t.Context(), key, func() *compiled {
			close(building)
			<-finish
			return want
		})
		leader <- v
	}()
	<-building

	// A waiter whose deadline passes gives up, and gives its slot back
	// meanwhile (a third call takes it).
	ctx, slot, err := sl.acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	waited := make(chan error, 1)
	go func() {
		_, err := c.get(ctx, key, func() *compiled { t.Error("second build of a key being compiled"); return nil })
		waited <- err
	}()
	otherCtx, cancelOther := context.WithTimeout(t.Context(), 400*time.Millisecond)
	defer cancelOther()
	if _, other, err := sl.acquire(otherCtx); err != nil {
		t.Errorf("acquire while the only slot's holder waits for a compilation: %v, want the slot", err)
	} else {
		other.done()
	}
	if err := <-waited; err != context.DeadlineExceeded {
		t.Errorf("get(key being compiled) past the deadline = %v, want %v", err, context.DeadlineExceeded)
	}
	slot.done()

	// A waiter with time gets the compilation.
	got := make(chan *compiled, 1)
	go func() {
		v, _ := c.get(t.Context(), key, func() *compiled { t.Error("second build of a key being compiled"); return nil })
		got <- v
	}()
	close(finish)
	if v := <-leader; v != want {
		t.Errorf("get by the compiling call = %p, want %p", v, want)
	}
	if v := <-got; v != want {
		t.Errorf("get by a waiting call = %p, want %p", v, want)
	}
}

// foreachPolicy checks every container of a Pod in a foreach.
const foreachPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: each-container
  annotations: {pod-policies.kyverno.io/autogen-controllers: none}
spec:
  rules:
  - name: named
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      foreach:
      - list: request.object.spec.containers
        pattern: {name: "?*"}
`

// TestMaxEvaluationSteps: the step budget of Options reaches the engine.
// Under it, the Pod's containers are checked; over it, the rule reports an
// error naming the budget instead of running on.
func TestMaxEvaluationSteps(t *testing.T) {
	containers := make([]map[string]any, 200)
	for i := range containers {
		containers[i] = map[string]any{"name": fmt.Sprintf("c%d", i), "image": "nginx"}
	}
	obj := mustJSON(t, map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "p", "namespace": "default"},
		"spec":     map[string]any{"containers": containers}})
	tests := []struct {
		name        string
		giveSteps   int64
		wantResult  verdictv1.Result
		wantMessage string
	}{
		{name: "default", giveSteps: 0, wantResult: verdictv1.Result_RESULT_PASS},
		{name: "over the budget", giveSteps: 50, wantResult: verdictv1.Result_RESULT_ERROR, wantMessage: "budget of 50 steps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, src := policyFolder(t, map[string]string{"each.yaml": foreachPolicy})
			ts := startServer(t, Options{Sources: []PolicySource{src}, MaxEvaluationSteps: tt.giveSteps})
			resp, err := ts.client(t).Evaluate(t.Context(), &verdictv1.EvaluateRequest{Object: obj})
			if err != nil {
				t.Fatalf("Evaluate(MaxEvaluationSteps %d) = %v", tt.giveSteps, err)
			}
			rs := resp.GetResults()
			if len(rs) != 1 || rs[0].GetResult() != tt.wantResult || !strings.Contains(rs[0].GetMessage(), tt.wantMessage) {
				t.Errorf("Evaluate(MaxEvaluationSteps %d) = %v, want one %v result with %q", tt.giveSteps, rs, tt.wantResult, tt.wantMessage)
			}
		})
	}
}
