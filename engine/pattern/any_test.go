package pattern

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// runAsNonRoot is the anyPattern example of Kyverno's validate docs.
const runAsNonRoot = `[
	{"spec": {"securityContext": {"runAsNonRoot": true},
		"containers": [{"=(securityContext)": {"=(runAsNonRoot)": true}}],
		"=(initContainers)": [{"=(securityContext)": {"=(runAsNonRoot)": true}}]}},
	{"spec": {"containers": [{"securityContext": {"runAsNonRoot": true}}],
		"=(initContainers)": [{"securityContext": {"runAsNonRoot": true}}]}}
]`

// flux is the negated anyPattern example of Kyverno's validate docs.
const flux = `[
	{"metadata": {"=(annotations)": {"X(fluxcd.io/*)": "*?"}}},
	{"metadata": {"=(annotations)": {"X(flux.weave.works/*)": "*?"}}}
]`

func compileAll(t *testing.T, s string) []*Pattern {
	t.Helper()
	var ps []*Pattern
	for _, raw := range decode(t, s).([]any) {
		p, err := Compile(raw)
		if err != nil {
			t.Fatalf("Compile(%v) = %v", raw, err)
		}
		ps = append(ps, p)
	}
	return ps
}

// TestValidateAny pins Kyverno's combined anyPattern outcome and the rule
// message, as printed by the reference kyverno CLI for a rule named "check".
func TestValidateAny(t *testing.T) {
	tests := []struct {
		name         string
		givePatterns string
		giveResource string
		giveMessage  string
		wantStatus   Status
		wantIndex    int
		wantMessage  string
	}{
		{
			name:         "first pattern passes",
			givePatterns: runAsNonRoot,
			giveResource: `{"spec": {"securityContext": {"runAsNonRoot": true}, "containers": [{"name": "a"}]}}`,
			wantStatus:   Pass,
			wantIndex:    0,
			wantMessage:  "validation rule 'check' anyPattern[0] passed.",
		},
		{
			name:         "second pattern passes",
			givePatterns: runAsNonRoot,
			giveResource: `{"spec": {"containers": [{"name": "a", "securityContext": {"runAsNonRoot": true}}]}}`,
			wantStatus:   Pass,
			wantIndex:    1,
			wantMessage:  "validation rule 'check' anyPattern[1] passed.",
		},
		{
			name:         "both fail",
			givePatterns: runAsNonRoot,
			giveResource: `{"spec": {"containers": [{"name": "a"}]}}`,
			wantStatus:   Fail,
			wantIndex:    -1,
			wantMessage:  "validation error: rule check[0] failed at path /spec/securityContext/ rule check[1] failed at path /spec/containers/0/securityContext/",
		},
		{
			name:         "both fail with message",
			givePatterns: runAsNonRoot,
			giveResource: `{"spec": {"containers": [{"name": "a"}]}}`,
			giveMessage:  "Running as root is not allowed",
			wantStatus:   Fail,
			wantIndex:    -1,
			wantMessage:  "validation error: Running as root is not allowed. rule check[0] failed at path /spec/securityContext/ rule check[1] failed at path /spec/containers/0/securityContext/",
		},
		{
			name:         "both fail with message ending in a period",
			givePatterns: runAsNonRoot,
			giveResource: `{"spec": {"containers": [{"name": "a"}]}}`,
			giveMessage:  "Running as root is not allowed.",
			wantStatus:   Fail,
			wantIndex:    -1,
			wantMessage:  "validation error: Running as root is not allowed. rule check[0] failed at path /spec/securityContext/ rule check[1] failed at path /spec/containers/0/securityContext/",
		},
		{
			name:         "all skipped skips",
			givePatterns: `[{"spec": {"(x)": "1", "y": "2"}}, {"spec": {"(z)": "1"}}]`,
			giveResource: `{"spec": {"x": "0"}}`,
			wantStatus:   Skip,
			wantIndex:    -1,
			wantMessage:  "rule check[0] skipped: conditional anchor mismatch: resource value '0' does not match '1' at path /spec/x/ rule check[1] skipped: conditional anchor mismatch: conditional anchor key doesn't exist in the resource",
		},
		{
			name:         "skip and fail fails with the failures only",
			givePatterns: `[{"spec": {"(x)": "1", "y": "2"}}, {"spec": {"z": "1"}}]`,
			giveResource: `{"spec": {"x": "0"}}`,
			wantStatus:   Fail,
			wantIndex:    -1,
			wantMessage:  "validation error: rule check[1] failed at path /spec/z/",
		},
		{
			name:         "an error counts as a failure",
			givePatterns: `[{"spec": {"^(a)": [{"b": "1"}], "c": "1"}}, {"spec": {"c": "2"}}]`,
			giveResource: `{"spec": {"c": "3"}}`,
			wantStatus:   Fail,
			wantIndex:    -1,
			wantMessage:  "validation error: rule check[0] failed: resource value '3' does not match '1' at path /spec/c/ rule check[1] failed at path /spec/c/",
		},
		{
			name:         "negated docs example with both annotations",
			givePatterns: flux,
			giveResource: `{"metadata": {"annotations": {"fluxcd.io/a": "1", "flux.weave.works/b": "2"}}}`,
			wantStatus:   Fail,
			wantIndex:    -1,
			wantMessage:  "validation error: rule check[0] failed at path /metadata/annotations/fluxcd.io/a/ rule check[1] failed at path /metadata/annotations/flux.weave.works/b/",
		},
		{
			name:         "negated docs example with one annotation",
			givePatterns: flux,
			giveResource: `{"metadata": {"annotations": {"fluxcd.io/a": "1"}}}`,
			wantStatus:   Pass,
			wantIndex:    1,
			wantMessage:  "validation rule 'check' anyPattern[1] passed.",
		},
		{
			name:         "empty list passes with the message as written",
			givePatterns: `[]`,
			giveResource: `{"data": {}}`,
			giveMessage:  "hello",
			wantStatus:   Pass,
			wantIndex:    -1,
			wantMessage:  "hello",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ValidateAny(compileAll(t, tt.givePatterns), decode(t, tt.giveResource))
			if got.Status != tt.wantStatus || got.Index != tt.wantIndex {
				t.Errorf("ValidateAny(%s) = %v at %d, want %v at %d", tt.giveResource, got.Status, got.Index, tt.wantStatus, tt.wantIndex)
			}
			if msg := got.RuleMessage("check", tt.giveMessage); msg != tt.wantMessage {
				t.Errorf("ValidateAny(%s).RuleMessage = %q, want %q", tt.giveResource, msg, tt.wantMessage)
			}
		})
	}
}

func TestValidateAnyStopsAtFirstPass(t *testing.T) {
	ps := compileAll(t, `[{"a": "1"}, {"a": "2"}, {"a": "3"}]`)
	got := ValidateAny(ps, decode(t, `{"a": "2"}`))
	want := AnyResult{
		Status: Pass,
		Index:  1,
		Results: []Result{
			{Status: Fail, Path: "/a/", Message: "resource value '2' does not match '1' at path /a/"},
			{Status: Pass},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ValidateAny mismatch (-want +got):\n%s", diff)
	}
}

// TestResultRuleMessage pins the rule messages of validate.pattern rules as
// the reference kyverno CLI prints them.
func TestResultRuleMessage(t *testing.T) {
	tests := []struct {
		name        string
		give        Result
		giveMessage string
		want        string
	}{
		{
			name: "pass",
			give: Result{Status: Pass},
			want: "validation rule 'check' passed.",
		},
		{
			name:        "pass ignores the message",
			give:        Result{Status: Pass},
			giveMessage: "must be one",
			want:        "validation rule 'check' passed.",
		},
		{
			name: "fail",
			give: Result{Status: Fail, Path: "/data/x/", Message: "detail"},
			want: "validation error: rule check failed at path /data/x/",
		},
		{
			name:        "fail with message",
			give:        Result{Status: Fail, Path: "/data/x/", Message: "detail"},
			giveMessage: "must be one",
			want:        "validation error: must be one. rule check failed at path /data/x/",
		},
		{
			name:        "fail with message ending in a period",
			give:        Result{Status: Fail, Path: "/data/x/", Message: "detail"},
			giveMessage: "must be one.",
			want:        "validation error: must be one. rule check failed at path /data/x/",
		},
		{
			name: "skip is the detail",
			give: Result{Status: Skip, Message: "conditional anchor mismatch: resource value 'foo' does not match 'nginx' at path /spec/containers/0/name/"},
			want: "conditional anchor mismatch: resource value 'foo' does not match 'nginx' at path /spec/containers/0/name/",
		},
		{
			name: "error",
			give: Result{Status: Error, Message: "resource value '3' does not match '2' at path /spec/replicas/"},
			want: "validation error: rule check execution error: resource value '3' does not match '2' at path /spec/replicas/",
		},
		{
			name:        "error with message",
			give:        Result{Status: Error, Message: "resource value '3' does not match '2' at path /spec/replicas/"},
			giveMessage: "msg",
			want:        "validation error: msg. rule check execution error: resource value '3' does not match '2' at path /spec/replicas/",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.give.RuleMessage("check", tt.giveMessage); got != tt.want {
				t.Errorf("%+v.RuleMessage(check, %q) = %q, want %q", tt.give, tt.giveMessage, got, tt.want)
			}
		})
	}
}

func TestStatusString(t *testing.T) {
	tests := []struct {
		give Status
		want string
	}{
		{Pass, "pass"},
		{Fail, "fail"},
		{Skip, "skip"},
		{Error, "error"},
		{Status(9), "Status(9)"},
	}
	for _, tt := range tests {
		if got := tt.give.String(); got != tt.want {
			t.Errorf("Status(%d).String() = %q, want %q", int(tt.give), got, tt.want)
		}
	}
}

// TestPassMessage checks the message, also past the cache's bound.
func TestPassMessage(t *testing.T) {
	for i := range maxPassMessages + 10 {
		rule := "rule-" + strconv.Itoa(i)
		want := "validation rule '" + rule + "' passed."
		for range 2 {
			if got := PassMessage(rule); got != want {
				t.Fatalf("PassMessage(%q) = %q, want %q", rule, got, want)
			}
		}
	}
	if n := passMessages.Len(); n < maxPassMessages {
		t.Errorf("passMessages.Len() = %d, want at least %d", n, maxPassMessages)
	}
}
