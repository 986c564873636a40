package kubeevents

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// The expected events below are written from Kyverno 1.19's pkg/event
// (events.go: NewPolicyFailEvent, NewResourceViolationEvent,
// buildPolicyEventMessage), pkg/webhooks/utils/event.go (admission) and
// pkg/controllers/report/utils/events.go (background scans).

var (
	pod       = &verdictv1.ObjectReference{ApiVersion: "v1", Kind: "Pod", Namespace: "team-a", Name: "web", Uid: "u-1"}
	podRef    = corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: "team-a", Name: "web", UID: "u-1"}
	ns        = &verdictv1.ObjectReference{ApiVersion: "v1", Kind: "Namespace", Name: "team-b"}
	nsRef     = corev1.ObjectReference{APIVersion: "v1", Kind: "Namespace", Name: "team-b"}
	cpolRef   = corev1.ObjectReference{APIVersion: "kyverno.io/v1", Kind: "ClusterPolicy", Name: "require-labels"}
	polRef    = corev1.ObjectReference{APIVersion: "kyverno.io/v1", Kind: "Policy", Namespace: "team-a", Name: "local"}
	vpolRef   = corev1.ObjectReference{APIVersion: "policies.kyverno.io/v1beta1", Kind: "ValidatingPolicy", Name: "check"}
	cpolV     = &verdictv1.PolicyVersion{Kind: "ClusterPolicy", Name: "require-labels", Background: true}
	polV      = &verdictv1.PolicyVersion{Kind: "Policy", Namespace: "team-a", Name: "local", Background: true}
	vpolV     = &verdictv1.PolicyVersion{Kind: "ValidatingPolicy", Name: "check", Background: true}
	noBgV     = &verdictv1.PolicyVersion{Kind: "ClusterPolicy", Name: "admission-only", Background: false}
	failTeam  = &verdictv1.RuleResult{Policy: "require-labels", Rule: "require-team", Result: verdictv1.Result_RESULT_FAIL, Message: "validation error: label team is required. rule require-team failed at path /metadata/labels/team/"}
	passApp   = &verdictv1.RuleResult{Policy: "require-labels", Rule: "require-app", Result: verdictv1.Result_RESULT_PASS, Message: "validation rule 'require-app' passed."}
	enfTeam   = &verdictv1.RuleResult{Policy: "require-labels", Rule: "require-team", Result: verdictv1.Result_RESULT_FAIL, Message: "label team is required", Enforce: true}
	polErr    = &verdictv1.RuleResult{Policy: "local", PolicyNamespace: "team-a", Rule: "ctx", Result: verdictv1.Result_RESULT_ERROR, Message: "failed to load context"}
	polPass   = &verdictv1.RuleResult{Policy: "local", PolicyNamespace: "team-a", Rule: "ok", Result: verdictv1.Result_RESULT_PASS}
	vpolFail  = &verdictv1.RuleResult{Policy: "check", Result: verdictv1.Result_RESULT_FAIL, Message: "replicas must be at most 5"}
	vpolWarn  = &verdictv1.RuleResult{Policy: "check", Result: verdictv1.Result_RESULT_WARN, Message: "not scored"}
	skipRule  = &verdictv1.RuleResult{Policy: "require-labels", Rule: "skipped", Result: verdictv1.Result_RESULT_SKIP, Message: "preconditions not met"}
	noBgFail  = &verdictv1.RuleResult{Policy: "admission-only", Rule: "r", Result: verdictv1.Result_RESULT_FAIL, Message: "m"}
	admission = verdictv1.ReportSource_REPORT_SOURCE_ADMISSION
	scan      = verdictv1.ReportSource_REPORT_SOURCE_BACKGROUND
)

func ptr(r corev1.ObjectReference) *corev1.ObjectReference { return &r }

func TestFromEvaluation(t *testing.T) {
	tests := []struct {
		name string
		ev   *verdictv1.ResourceEvaluation
		want []Info
	}{
		{
			name: "audit failure at admission: every rule of the failed policy on the resource, the failed rule on the policy",
			ev: &verdictv1.ResourceEvaluation{Resource: pod, Source: admission, Operation: verdictv1.Operation_OPERATION_CREATE,
				Policies: []*verdictv1.PolicyVersion{cpolV}, Results: []*verdictv1.RuleResult{failTeam, passApp}},
			want: []Info{
				{Regarding: cpolRef, Related: ptr(podRef), Reason: "PolicyViolation", Source: "kyverno-admission", Action: "Resource Passed",
					Message: "Pod team-a/web: [require-team] fail; validation error: label team is required. rule require-team failed at path /metadata/labels/team/"},
				{Regarding: podRef, Reason: "PolicyViolation", Source: "kyverno-admission", Action: "Resource Passed",
					Message: "policy require-labels/require-team fail: validation error: label team is required. rule require-team failed at path /metadata/labels/team/"},
				{Regarding: podRef, Reason: "PolicyViolation", Source: "kyverno-admission", Action: "Resource Passed",
					Message: "policy require-labels/require-app pass: validation rule 'require-app' passed."},
			},
		},
		{
			name: "a policy that only passed or skipped has no event",
			ev: &verdictv1.ResourceEvaluation{Resource: pod, Source: admission, Operation: verdictv1.Operation_OPERATION_CREATE,
				Policies: []*verdictv1.PolicyVersion{cpolV}, Results: []*verdictv1.RuleResult{passApp, skipRule}},
		},
		{
			name: "blocked request: the Enforce policy's failed rule on the policy, (blocked), nothing on the resource",
			ev: &verdictv1.ResourceEvaluation{Resource: pod, Source: admission, Operation: verdictv1.Operation_OPERATION_CREATE, Denied: true,
				Policies: []*verdictv1.PolicyVersion{cpolV, polV}, Results: []*verdictv1.RuleResult{enfTeam, polErr, polPass}},
			want: []Info{
				{Regarding: cpolRef, Related: ptr(podRef), Reason: "PolicyViolation", Source: "kyverno-admission", Action: "Resource Blocked",
					Message: "Pod team-a/web: [require-team] fail (blocked); label team is required"},
			},
		},
		{
			name: "error of a namespaced Policy at admission, cluster-scoped resource",
			ev: &verdictv1.ResourceEvaluation{Resource: ns, Source: admission, Operation: verdictv1.Operation_OPERATION_UPDATE,
				Policies: []*verdictv1.PolicyVersion{polV}, Results: []*verdictv1.RuleResult{polErr}},
			want: []Info{
				{Regarding: polRef, Related: ptr(nsRef), Reason: "PolicyViolation", Source: "kyverno-admission", Action: "Resource Passed",
					Message: "Namespace team-b: [ctx] error; failed to load context"},
				{Regarding: nsRef, Reason: "PolicyViolation", Source: "kyverno-admission", Action: "Resource Passed",
					Message: "policy local/ctx error: failed to load context"},
			},
		},
		{
			name: "ValidatingPolicy at admission: no rule name",
			ev: &verdictv1.ResourceEvaluation{Resource: pod, Source: admission, Operation: verdictv1.Operation_OPERATION_CREATE,
				Policies: []*verdictv1.PolicyVersion{vpolV}, Results: []*verdictv1.RuleResult{vpolFail}},
			want: []Info{
				{Regarding: vpolRef, Related: ptr(podRef), Reason: "PolicyViolation", Source: "kyverno-admission", Action: "Resource Passed",
					Message: "Pod team-a/web: fail; replicas must be at most 5"},
				{Regarding: podRef, Reason: "PolicyViolation", Source: "kyverno-admission", Action: "Resource Passed",
					Message: "policy check/ fail: replicas must be at most 5"},
			},
		},
		{
			name: "background scan: fail and warn, on the resource and the policy; pass, skip and background: false have none",
			ev: &verdictv1.ResourceEvaluation{Resource: pod, Source: scan,
				Policies: []*verdictv1.PolicyVersion{cpolV, vpolV, noBgV}, Results: []*verdictv1.RuleResult{failTeam, passApp, skipRule, vpolWarn, noBgFail}},
			want: []Info{
				{Regarding: podRef, Reason: "PolicyViolation", Source: "kyverno-scan", Action: "Resource Passed",
					Message: "policy require-labels/require-team fail: validation error: label team is required. rule require-team failed at path /metadata/labels/team/"},
				{Regarding: cpolRef, Related: ptr(podRef), Reason: "PolicyViolation", Source: "kyverno-scan", Action: "Resource Passed",
					Message: "Pod team-a/web: [require-team] fail; validation error: label team is required. rule require-team failed at path /metadata/labels/team/"},
				{Regarding: podRef, Reason: "PolicyViolation", Source: "kyverno-scan", Action: "Resource Passed",
					Message: "policy check/ warn: not scored"},
				{Regarding: vpolRef, Related: ptr(podRef), Reason: "PolicyViolation", Source: "kyverno-scan", Action: "Resource Passed",
					Message: "Pod team-a/web: warn; not scored"},
			},
		},
		{
			name: "a scanner's watch saw the resource deleted",
			ev:   &verdictv1.ResourceEvaluation{Resource: pod, Source: scan, Operation: verdictv1.Operation_OPERATION_DELETE},
		},
		{
			name: "a resource without a name",
			ev: &verdictv1.ResourceEvaluation{Resource: &verdictv1.ObjectReference{ApiVersion: "v1", Kind: "Pod", Namespace: "a"}, Source: admission,
				Policies: []*verdictv1.PolicyVersion{cpolV}, Results: []*verdictv1.RuleResult{failTeam}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FromEvaluation(tt.ev)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("FromEvaluation() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInfoType(t *testing.T) {
	tests := []struct {
		reason, want string
	}{
		{PolicyViolation, "Warning"},
		{PolicyError, "Warning"},
		{PolicyApplied, "Normal"},
		{PolicySkipped, "Normal"},
	}
	for _, tt := range tests {
		if got := (Info{Reason: tt.reason}).Type(); got != tt.want {
			t.Errorf("Info{Reason: %q}.Type() = %q, want %q", tt.reason, got, tt.want)
		}
	}
}

func TestFailedEvents(t *testing.T) {
	tests := []struct {
		name string
		got  Info
		want Info
	}{
		{
			name: "mutateExisting failure on the policy (NewBackgroundFailedEvent)",
			got:  BackgroundFailed("forbidden", "ClusterPolicy", "", "require-labels", "add-label", MutateExistingController, podRef),
			want: Info{Regarding: cpolRef, Related: &corev1.ObjectReference{Kind: "Pod", Namespace: "team-a", Name: "web"}, Source: "kyverno-mutate", Reason: "PolicyError", Action: "None",
				Message: "policy require-labels/add-label error: forbidden"},
		},
		{
			name: "GeneratingPolicy failure without a rule: kyverno.io/v1 as Kyverno writes it",
			got:  BackgroundFailed("quota exceeded", "GeneratingPolicy", "", "gen", "", GeneratePolicyController, nsRef),
			want: Info{Regarding: corev1.ObjectReference{APIVersion: "kyverno.io/v1", Kind: "GeneratingPolicy", Name: "gen"}, Related: &corev1.ObjectReference{Kind: "Namespace", Name: "team-b"},
				Source: "kyverno-generate", Reason: "PolicyError", Action: "None", Message: "policy gen error: quota exceeded"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSanitizeName: the cases of Kyverno's TestEventNameSanitization.
func TestSanitizeName(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"kyverno:migrate-resources", "kyverno-migrate-resources"},
		{"KyvernoMigrateResources", "kyvernomigrateresources"},
		{"kyverno:migrate/resources@1.0", "kyverno-migrate-resources-1.0"},
		{"-kyverno-migrate", "a-kyverno-migrate"},
		{"kyverno-migrate-", "kyverno-migrate-z"},
		{"kyverno.migrate.resources", "kyverno.migrate.resources"},
	}
	for _, tt := range tests {
		if got := sanitizeName(tt.in); got != tt.want {
			t.Errorf("sanitizeName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEvent(t *testing.T) {
	now := time.Unix(1700000000, 5)
	long := strings.Repeat("x", 2000)
	tests := []struct {
		name string
		in   Info
		want func(*corev1.Event)
	}{
		{
			name: "on a namespaced resource",
			in:   Info{Regarding: podRef, Reason: PolicyViolation, Source: PolicyController, Action: ResourcePassed, Message: "policy p/r fail: m"},
			want: func(e *corev1.Event) {
				e.Name, e.Namespace = "web.17979cfe362a0005", "team-a"
				e.InvolvedObject = podRef
				e.Reason, e.Type, e.Action, e.Message = "PolicyViolation", "Warning", "Resource Passed", "policy p/r fail: m"
				e.ReportingController, e.ReportingInstance = "kyverno-scan", "kyverno-scan-host-1"
				e.Source = corev1.EventSource{Component: "kyverno-scan", Host: "host-1"}
			},
		},
		{
			name: "on a ClusterPolicy: namespace default, the message cut at 1024",
			in:   Info{Regarding: cpolRef, Related: ptr(podRef), Reason: PolicyViolation, Source: AdmissionController, Action: ResourceBlocked, Message: long},
			want: func(e *corev1.Event) {
				e.Name, e.Namespace = "require-labels.17979cfe362a0005", "default"
				e.InvolvedObject, e.Related = cpolRef, ptr(podRef)
				e.Reason, e.Type, e.Action, e.Message = "PolicyViolation", "Warning", "Resource Blocked", strings.Repeat("x", 1021)+"..."
				e.ReportingController, e.ReportingInstance = "kyverno-admission", "kyverno-admission-host-1"
				e.Source = corev1.EventSource{Component: "kyverno-admission", Host: "host-1"}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := &corev1.Event{Count: 1}
			want.FirstTimestamp.Time, want.LastTimestamp.Time = now, now
			tt.want(want)
			if diff := cmp.Diff(want, Event(tt.in, "host-1", now)); diff != "" {
				t.Errorf("Event() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
