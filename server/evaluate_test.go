package server

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// result is the part of a RuleResult the tests compare.
type result struct {
	Policy, Rule string
	Result       verdictv1.Result
	Enforce      bool
}

func resultsOf(resp *verdictv1.EvaluateResponse) []result {
	var out []result
	for _, r := range resp.GetResults() {
		out = append(out, result{r.GetPolicy(), r.GetRule(), r.GetResult(), r.GetEnforce()})
	}
	return out
}

func TestEvaluate(t *testing.T) {
	_, src := policyFolder(t, map[string]string{
		"ns.yaml":     nsPurposePolicy,
		"team.yaml":   teamLabelPolicy,
		"latest.yaml": latestTagPolicy,
	})
	ts := startServer(t, Options{Sources: []PolicySource{src}})
	c := ts.client(t)

	nsMessage := "validation error: You must have label `purpose` with value `production` set on all new namespaces. rule require-ns-purpose-label failed at path /metadata/labels/purpose/"
	latestMessage := "validation error: An image tag other than latest is required. rule no-latest failed at path /spec/containers/0/image/"
	tests := []struct {
		name         string
		give         *verdictv1.EvaluateRequest
		wantAllowed  bool
		wantMessage  string
		wantResults  []result
		wantWarnings []string
		wantPolicies []string
	}{
		{
			name: "validate.md namespace allowed",
			give: &verdictv1.EvaluateRequest{Object: mustJSON(t, map[string]any{
				"apiVersion": "v1", "kind": "Namespace",
				"metadata": map[string]any{"name": "prod-bus-app1", "labels": map[string]any{"purpose": "production"}},
			})},
			wantAllowed:  true,
			wantResults:  []result{{"require-ns-purpose-label", "require-ns-purpose-label", verdictv1.Result_RESULT_PASS, true}},
			wantPolicies: []string{"require-ns-purpose-label"},
		},
		{
			name: "validate.md namespace blocked",
			give: &verdictv1.EvaluateRequest{Object: mustJSON(t, map[string]any{
				"apiVersion": "v1", "kind": "Namespace",
				"metadata": map[string]any{"name": "prod-bus-app1", "labels": map[string]any{"purpose": "development"}},
			})},
			wantAllowed: false,
			wantMessage: "\n\nresource Namespace//prod-bus-app1 was blocked due to the following policies \n\n" +
				"require-ns-purpose-label:\n  require-ns-purpose-label: '" + nsMessage + "'\n",
			wantResults:  []result{{"require-ns-purpose-label", "require-ns-purpose-label", verdictv1.Result_RESULT_FAIL, true}},
			wantPolicies: []string{"require-ns-purpose-label"},
		},
		{
			name:        "audit failure with emitWarning is a warning",
			give:        &verdictv1.EvaluateRequest{Object: pod(t, "p", "default", "nginx:latest", map[string]string{"team": "a"})},
			wantAllowed: true,
			wantResults: []result{
				{"disallow-latest-tag", "no-latest", verdictv1.Result_RESULT_FAIL, false},
				{"require-team-label", "check-team", verdictv1.Result_RESULT_PASS, true},
			},
			wantWarnings: []string{"policy disallow-latest-tag.no-latest: " + latestMessage},
			wantPolicies: []string{"disallow-latest-tag", "require-team-label"},
		},
		{
			name:        "enforce failure blocks, audit failure is not in the message",
			give:        &verdictv1.EvaluateRequest{Object: pod(t, "p", "default", "nginx:latest", nil)},
			wantAllowed: false,
			wantMessage: "\n\nresource Pod/default/p was blocked due to the following policies \n\n" +
				"require-team-label:\n  check-team: 'validation error: The label `team` is required. rule check-team failed at path /metadata/labels/'\n",
			wantResults: []result{
				{"disallow-latest-tag", "no-latest", verdictv1.Result_RESULT_FAIL, false},
				{"require-team-label", "check-team", verdictv1.Result_RESULT_FAIL, true},
			},
			wantPolicies: []string{"disallow-latest-tag", "require-team-label"},
		},
		{
			name: "background mode never blocks",
			give: &verdictv1.EvaluateRequest{
				Object: pod(t, "p", "default", "nginx:1.27", nil),
				Mode:   verdictv1.Mode_MODE_BACKGROUND,
			},
			wantAllowed: true,
			wantResults: []result{
				{"disallow-latest-tag", "no-latest", verdictv1.Result_RESULT_PASS, false},
				{"require-team-label", "check-team", verdictv1.Result_RESULT_FAIL, true},
			},
			wantPolicies: []string{"disallow-latest-tag", "require-team-label"},
		},
		{
			name: "policy selector by label",
			give: &verdictv1.EvaluateRequest{
				Object:   pod(t, "p", "default", "nginx:latest", nil),
				Policies: &verdictv1.EvaluateRequest_PolicySelector{PolicySelector: &verdictv1.PolicySelector{Labels: map[string]string{"set": "baseline"}}},
			},
			wantAllowed: false,
			wantMessage: "\n\nresource Pod/default/p was blocked due to the following policies \n\n" +
				"require-team-label:\n  check-team: 'validation error: The label `team` is required. rule check-team failed at path /metadata/labels/'\n",
			wantResults:  []result{{"require-team-label", "check-team", verdictv1.Result_RESULT_FAIL, true}},
			wantPolicies: []string{"require-team-label"},
		},
		{
			name: "policy selector by name",
			give: &verdictv1.EvaluateRequest{
				Object:   pod(t, "p", "default", "nginx:latest", nil),
				Policies: &verdictv1.EvaluateRequest_PolicySelector{PolicySelector: &verdictv1.PolicySelector{Names: []string{"disallow-latest-tag"}}},
			},
			wantAllowed: true,
			wantResults: []result{
				{"disallow-latest-tag", "no-latest", verdictv1.Result_RESULT_FAIL, false},
			},
			wantWarnings: []string{"policy disallow-latest-tag.no-latest: " + latestMessage},
			wantPolicies: []string{"disallow-latest-tag"},
		},
		{
			name: "DELETE evaluates the old object",
			give: &verdictv1.EvaluateRequest{
				Operation: verdictv1.Operation_OPERATION_DELETE,
				OldObject: pod(t, "p", "default", "nginx:1.27", map[string]string{"protected": "true"}),
				Policies:  &verdictv1.EvaluateRequest_InlinePolicies{InlinePolicies: &verdictv1.InlinePolicies{Documents: [][]byte{[]byte(protectDeletePolicy)}}},
			},
			wantAllowed: false,
			wantMessage: "\n\nresource Pod/default/p was blocked due to the following policies \n\n" +
				"protect-pods:\n  protect: Pod p is protected.\n",
			wantResults:  []result{{"protect-pods", "protect", verdictv1.Result_RESULT_FAIL, true}},
			wantPolicies: []string{"protect-pods"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.Evaluate(t.Context(), tt.give)
			if err != nil {
				t.Fatalf("Evaluate(%s) error: %v", tt.name, err)
			}
			if got.GetAllowed() != tt.wantAllowed {
				t.Errorf("Evaluate(%s).Allowed = %v, want %v", tt.name, got.GetAllowed(), tt.wantAllowed)
			}
			if diff := cmp.Diff(tt.wantMessage, got.GetMessage()); diff != "" {
				t.Errorf("Evaluate(%s).Message mismatch (-want +got):\n%s", tt.name, diff)
			}
			if diff := cmp.Diff(tt.wantResults, resultsOf(got)); diff != "" {
				t.Errorf("Evaluate(%s).Results mismatch (-want +got):\n%s", tt.name, diff)
			}
			if diff := cmp.Diff(tt.wantWarnings, got.GetWarnings(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Evaluate(%s).Warnings mismatch (-want +got):\n%s", tt.name, diff)
			}
			var policies []string
			for _, p := range got.GetPolicies() {
				policies = append(policies, p.GetName())
				if len(p.GetContentHash()) != 64 || p.GetKind() != "ClusterPolicy" {
					t.Errorf("Evaluate(%s) policy version %v: want kind ClusterPolicy and a SHA-256 hash", tt.name, p)
				}
			}
			if diff := cmp.Diff(tt.wantPolicies, policies); diff != "" {
				t.Errorf("Evaluate(%s).Policies mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestEvaluateRuleResultFields(t *testing.T) {
	_, src := policyFolder(t, map[string]string{"team.yaml": teamLabelPolicy})
	ts := startServer(t, Options{Sources: []PolicySource{src}})
	c := ts.client(t)
	got, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{Object: pod(t, "p", "default", "nginx", map[string]string{"team": "a"})})
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	want := []*verdictv1.RuleResult{{
		Policy:   "require-team-label",
		Rule:     "check-team",
		Type:     verdictv1.RuleType_RULE_TYPE_VALIDATION,
		Result:   verdictv1.Result_RESULT_PASS,
		Message:  "validation rule 'check-team' passed.",
		Category: "Best Practices",
		Severity: "medium",
		Scored:   true,
		Enforce:  true,
	}}
	if diff := cmp.Diff(want, got.GetResults(), protocmp.Transform()); diff != "" {
		t.Errorf("Evaluate results mismatch (-want +got):\n%s", diff)
	}
}

// violation is a field violation of a status, as the tests compare it.
type violation struct {
	Field, Reason string
}

func statusOf(err error) (codes.Code, []violation) {
	st := status.Convert(err)
	var vs []violation
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				vs = append(vs, violation{v.GetField(), v.GetReason()})
			}
		}
	}
	return st.Code(), vs
}

func TestEvaluateErrors(t *testing.T) {
	_, src := policyFolder(t, map[string]string{"team.yaml": teamLabelPolicy})
	ts := startServer(t, Options{Sources: []PolicySource{src}})
	c := ts.client(t)
	badPolicy := `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: bad
spec:
  rules:
  - name: r
    match:
      any:
      - resources:
          kinds: [Pod]
    validate:
      message: "{{ request.object.metadata.name | }}"
      pattern:
        metadata:
          name: "?*"
`
	tests := []struct {
		name           string
		give           *verdictv1.EvaluateRequest
		wantCode       codes.Code
		wantViolations []violation
	}{
		{
			name:           "no object",
			give:           &verdictv1.EvaluateRequest{},
			wantCode:       codes.InvalidArgument,
			wantViolations: []violation{{"object", "invalid_argument"}},
		},
		{
			name:           "DELETE without objects",
			give:           &verdictv1.EvaluateRequest{Operation: verdictv1.Operation_OPERATION_DELETE},
			wantCode:       codes.InvalidArgument,
			wantViolations: []violation{{"object", "invalid_argument"}},
		},
		{
			name:           "object is not a JSON object",
			give:           &verdictv1.EvaluateRequest{Object: []byte(`[1]`)},
			wantCode:       codes.InvalidArgument,
			wantViolations: []violation{{"object", "invalid_argument"}},
		},
		{
			name:           "object is broken JSON",
			give:           &verdictv1.EvaluateRequest{Object: []byte(`{"kind": `)},
			wantCode:       codes.InvalidArgument,
			wantViolations: []violation{{"object", "invalid_argument"}},
		},
		{
			name:           "old object is broken JSON",
			give:           &verdictv1.EvaluateRequest{Object: pod(t, "p", "default", "nginx", nil), OldObject: []byte(`{"kind"`)},
			wantCode:       codes.InvalidArgument,
			wantViolations: []violation{{"old_object", "invalid_argument"}},
		},
		{
			name:           "unknown operation and mode",
			give:           &verdictv1.EvaluateRequest{Object: pod(t, "p", "default", "nginx", nil), Operation: 42, Mode: 7},
			wantCode:       codes.InvalidArgument,
			wantViolations: []violation{{"operation", "invalid_argument"}, {"mode", "invalid_argument"}},
		},
		{
			name:           "kind override without version",
			give:           &verdictv1.EvaluateRequest{Object: pod(t, "p", "default", "nginx", nil), Kind: &verdictv1.GroupVersionKind{Kind: "Pod"}},
			wantCode:       codes.InvalidArgument,
			wantViolations: []violation{{"kind", "invalid_argument"}},
		},
		{
			name:           "resource without version",
			give:           &verdictv1.EvaluateRequest{Object: pod(t, "p", "default", "nginx", nil), Resource: &verdictv1.GroupVersionResource{Resource: "pods"}},
			wantCode:       codes.InvalidArgument,
			wantViolations: []violation{{"resource", "invalid_argument"}},
		},
		{
			name: "variable is not JSON",
			give: &verdictv1.EvaluateRequest{
				Object:    pod(t, "p", "default", "nginx", nil),
				Variables: map[string][]byte{"x": []byte("{nope")},
			},
			wantCode:       codes.InvalidArgument,
			wantViolations: []violation{{`variables["x"]`, "invalid_argument"}},
		},
		{
			name: "variable name with a stray quote",
			give: &verdictv1.EvaluateRequest{
				Object:    pod(t, "p", "default", "nginx", nil),
				Variables: map[string][]byte{`a.b"c`: []byte(`1`)},
			},
			wantCode:       codes.InvalidArgument,
			wantViolations: []violation{{`variables["a.b\"c"]`, "invalid_argument"}},
		},
		{
			name: "inline policy does not compile",
			give: &verdictv1.EvaluateRequest{
				Object:   pod(t, "p", "default", "nginx", nil),
				Policies: &verdictv1.EvaluateRequest_InlinePolicies{InlinePolicies: &verdictv1.InlinePolicies{Documents: [][]byte{[]byte(teamLabelPolicy), []byte(badPolicy)}}},
			},
			wantCode: codes.InvalidArgument,
			wantViolations: []violation{
				{"inline_policies.documents[1].spec.rules[0].validate.message", "invalid_variable"},
			},
		},
		{
			name: "empty inline document",
			give: &verdictv1.EvaluateRequest{
				Object:   pod(t, "p", "default", "nginx", nil),
				Policies: &verdictv1.EvaluateRequest_InlinePolicies{InlinePolicies: &verdictv1.InlinePolicies{Documents: [][]byte{[]byte(" \n")}}},
			},
			wantCode:       codes.InvalidArgument,
			wantViolations: []violation{{"inline_policies.documents[0]", "invalid_argument"}},
		},
		{
			name: "selector names an unknown policy",
			give: &verdictv1.EvaluateRequest{
				Object:   pod(t, "p", "default", "nginx", nil),
				Policies: &verdictv1.EvaluateRequest_PolicySelector{PolicySelector: &verdictv1.PolicySelector{Names: []string{"require-team-label", "nope"}}},
			},
			wantCode:       codes.NotFound,
			wantViolations: []violation{{"policy_selector.names[1]", "not_found"}},
		},
		{
			name: "selector name is malformed",
			give: &verdictv1.EvaluateRequest{
				Object:   pod(t, "p", "default", "nginx", nil),
				Policies: &verdictv1.EvaluateRequest_PolicySelector{PolicySelector: &verdictv1.PolicySelector{Names: []string{"a/b/c"}}},
			},
			wantCode:       codes.InvalidArgument,
			wantViolations: []violation{{"policy_selector.names[0]", "invalid_argument"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Evaluate(t.Context(), tt.give)
			code, vs := statusOf(err)
			if code != tt.wantCode {
				t.Errorf("Evaluate(%s) code = %v, want %v (%v)", tt.name, code, tt.wantCode, err)
			}
			if diff := cmp.Diff(tt.wantViolations, vs); diff != "" {
				t.Errorf("Evaluate(%s) field violations mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestGetPolicyErrors(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.client(t)
	tests := []struct {
		name           string
		give           *verdictv1.GetPolicyRequest
		wantCode       codes.Code
		wantViolations []violation
	}{
		{"no name", &verdictv1.GetPolicyRequest{}, codes.InvalidArgument, []violation{{"name", "invalid_argument"}}},
		{"unknown", &verdictv1.GetPolicyRequest{Name: "nope"}, codes.NotFound, []violation{{"name", "not_found"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.GetPolicy(t.Context(), tt.give)
			code, vs := statusOf(err)
			if code != tt.wantCode {
				t.Errorf("GetPolicy(%v) code = %v, want %v", tt.give, code, tt.wantCode)
			}
			if diff := cmp.Diff(tt.wantViolations, vs); diff != "" {
				t.Errorf("GetPolicy(%v) field violations mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

func TestInlinePoliciesCompileOnce(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.client(t)
	req := &verdictv1.EvaluateRequest{
		Object:   pod(t, "p", "default", "nginx:latest", nil),
		Policies: &verdictv1.EvaluateRequest_InlinePolicies{InlinePolicies: &verdictv1.InlinePolicies{Documents: [][]byte{[]byte(teamLabelPolicy + "---\n" + latestTagPolicy)}}},
	}
	const calls = 32
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.Evaluate(context.Background(), req)
			if err == nil && len(resp.GetResults()) != 2 {
				err = status.Errorf(codes.Unknown, "got %d results, want 2", len(resp.GetResults()))
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Evaluate with inline policies: %v", err)
		}
	}
	if got := metricValue(t, ts.reg, "verdict_policy_compilations_total"); got != 1 {
		t.Errorf("verdict_policy_compilations_total = %v after %d concurrent calls with one document, want 1", got, calls)
	}
	if got := metricValue(t, ts.reg, "verdict_policy_cache_misses_total") + metricValue(t, ts.reg, "verdict_policy_cache_hits_total"); got != calls {
		t.Errorf("cache hits + misses = %v, want %d", got, calls)
	}
}

func TestCompileCacheEviction(t *testing.T) {
	ts := startServer(t, Options{CacheSize: 1})
	c := ts.client(t)
	docs := []string{teamLabelPolicy, latestTagPolicy}
	for i := range 4 {
		_, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{
			Object:   pod(t, "p", "default", "nginx", nil),
			Policies: &verdictv1.EvaluateRequest_InlinePolicies{InlinePolicies: &verdictv1.InlinePolicies{Documents: [][]byte{[]byte(docs[i%2])}}},
		})
		if err != nil {
			t.Fatalf("Evaluate: %v", err)
		}
	}
	tests := []struct {
		metric string
		want   float64
	}{
		{"verdict_policy_compilations_total", 4},
		{"verdict_policy_cache_evictions_total", 3},
		{"verdict_policy_cache_size", 1},
		{"verdict_policy_cache_hits_total", 0},
	}
	for _, tt := range tests {
		if got := metricValue(t, ts.reg, tt.metric); got != tt.want {
			t.Errorf("%s = %v, want %v", tt.metric, got, tt.want)
		}
	}
}

func TestPolicyResultMetric(t *testing.T) {
	_, src := policyFolder(t, map[string]string{"team.yaml": teamLabelPolicy})
	ts := startServer(t, Options{Sources: []PolicySource{src}})
	c := ts.client(t)
	for _, labels := range []map[string]string{{"team": "a"}, nil, nil} {
		if _, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{Object: pod(t, "p", "ns1", "nginx", labels)}); err != nil {
			t.Fatal(err)
		}
	}
	mfs, err := ts.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "verdict_policy_results_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			key := ""
			for _, l := range m.GetLabel() {
				key += l.GetName() + "=" + l.GetValue() + ","
			}
			got[key] = m.GetCounter().GetValue()
		}
	}
	labels := func(result string) string {
		return "policy_background_mode=true,policy_name=require-team-label,policy_namespace=-,policy_type=cluster," +
			"policy_validation_mode=enforce,resource_kind=Pod,resource_namespace=ns1,resource_request_operation=create," +
			"rule_execution_cause=admission_request,rule_name=check-team,rule_result=" + result + ",rule_type=validate,"
	}
	want := map[string]float64{labels("pass"): 1, labels("fail"): 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verdict_policy_results_total mismatch (-want +got):\n%s", diff)
	}
}

func TestPolicyExceptionsFromTheFolder(t *testing.T) {
	exception := `apiVersion: kyverno.io/v2
kind: PolicyException
metadata:
  name: team-exempt
  namespace: default
spec:
  exceptions:
  - policyName: require-team-label
    ruleNames: [check-team]
  match:
    any:
    - resources:
        kinds: [Pod]
        namespaces: [exempt]
`
	_, src := policyFolder(t, map[string]string{"team.yaml": teamLabelPolicy, "exception.yaml": exception})
	ts := startServer(t, Options{Sources: []PolicySource{src}})
	c := ts.client(t)
	tests := []struct {
		name        string
		give        []byte
		wantAllowed bool
		wantResults []verdictv1.Result
	}{
		{"exempt namespace", pod(t, "p", "exempt", "nginx", nil), true, []verdictv1.Result{verdictv1.Result_RESULT_SKIP}},
		{"other namespace", pod(t, "p", "other", "nginx", nil), false, []verdictv1.Result{verdictv1.Result_RESULT_FAIL}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{Object: tt.give})
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			var results []verdictv1.Result
			for _, r := range got.GetResults() {
				results = append(results, r.GetResult())
			}
			if got.GetAllowed() != tt.wantAllowed || !cmp.Equal(tt.wantResults, results) {
				t.Errorf("Evaluate(Pod in %s) = allowed %v, results %v; want %v, %v", tt.name, got.GetAllowed(), results, tt.wantAllowed, tt.wantResults)
			}
		})
	}
	list, _ := listPolicies(t, c)
	// Sorted by kind: ClusterPolicy before PolicyException.
	want := []listed{{Name: "require-team-label", Ready: true}, {Name: "team-exempt", Ready: true}}
	if diff := cmp.Diff(want, list, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(listed{}, "Hash")); diff != "" {
		t.Errorf("ListPolicies mismatch (-want +got):\n%s", diff)
	}
	for _, l := range list {
		if len(l.Hash) != 64 {
			t.Errorf("ListPolicies: %s has content hash %q, want a SHA-256", l.Name, l.Hash)
		}
	}
}

func TestMutateAndGenerateIntents(t *testing.T) {
	mutate := `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: add-owner
spec:
  rules:
  - name: owner
    match:
      any:
      - resources:
          kinds: [ConfigMap]
    mutate:
      patchStrategicMerge:
        metadata:
          labels:
            owner: platform
`
	generate := `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: default-config
spec:
  rules:
  - name: config
    match:
      any:
      - resources:
          kinds: [Namespace]
    generate:
      apiVersion: v1
      kind: ConfigMap
      name: defaults
      namespace: "{{ request.object.metadata.name }}"
      synchronize: true
      data:
        data:
          team: none
`
	ts := startServer(t, Options{})
	c := ts.client(t)
	inline := &verdictv1.EvaluateRequest_InlinePolicies{InlinePolicies: &verdictv1.InlinePolicies{Documents: [][]byte{[]byte(mutate), []byte(generate)}}}

	cm, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{
		Object:   mustJSON(t, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "default"}}),
		Policies: inline,
	})
	if err != nil {
		t.Fatalf("Evaluate(ConfigMap): %v", err)
	}
	var patch []map[string]any
	if err := json.Unmarshal(cm.GetJsonPatch(), &patch); err != nil {
		t.Fatalf("Evaluate(ConfigMap).JsonPatch = %q: %v", cm.GetJsonPatch(), err)
	}
	wantPatch := []map[string]any{{"op": "add", "path": "/metadata/labels", "value": map[string]any{"owner": "platform"}}}
	if diff := cmp.Diff(wantPatch, patch); diff != "" {
		t.Errorf("Evaluate(ConfigMap).JsonPatch mismatch (-want +got):\n%s", diff)
	}

	ns, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{
		Object:   mustJSON(t, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "team-a"}}),
		Policies: inline,
	})
	if err != nil {
		t.Fatalf("Evaluate(Namespace): %v", err)
	}
	if len(ns.GetGenerates()) != 1 {
		t.Fatalf("Evaluate(Namespace).Generates = %v, want one intent", ns.GetGenerates())
	}
	g := ns.GetGenerates()[0]
	var obj struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name, Namespace string
		} `json:"metadata"`
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(g.GetResource(), &obj); err != nil {
		t.Fatal(err)
	}
	type intent struct {
		Policy, Rule          string
		Action                verdictv1.GenerateAction
		Synchronize           bool
		Kind, Namespace, Name string
		Data                  map[string]string
	}
	got := intent{g.GetPolicy(), g.GetRule(), g.GetAction(), g.GetSynchronize(), obj.Kind, obj.Metadata.Namespace, obj.Metadata.Name, obj.Data}
	want := intent{"default-config", "config", verdictv1.GenerateAction_GENERATE_ACTION_CREATE, true, "ConfigMap", "team-a", "defaults", map[string]string{"team": "none"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Evaluate(Namespace) generate intent mismatch (-want +got):\n%s", diff)
	}
}
