package kubeevents

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// Reasons of Kyverno's events (pkg/event/reason.go), the values of
// --omit-events.
const (
	PolicyViolation = "PolicyViolation"
	PolicyApplied   = "PolicyApplied"
	PolicyError     = "PolicyError"
	PolicySkipped   = "PolicySkipped"
)

// Reasons are the reasons --omit-events takes, in Kyverno's order.
var Reasons = []string{PolicyViolation, PolicyApplied, PolicyError, PolicySkipped}

// DefaultOmit are the reasons omitted by default: those of Kyverno 1.19's
// Helm chart (features.omitEvents.eventTypes), which is how Kyverno is
// installed.
var DefaultOmit = []string{PolicyApplied, PolicySkipped}

// Sources of Kyverno's events (pkg/event/source.go): an event's
// reportingController, and with the host name its reportingInstance.
const (
	// AdmissionController: events of admission requests.
	AdmissionController = "kyverno-admission"
	// PolicyController: events of background scans.
	PolicyController = "kyverno-scan"
	// GeneratePolicyController: events of generate rules.
	GeneratePolicyController = "kyverno-generate"
	// MutateExistingController: events of mutateExisting rules.
	MutateExistingController = "kyverno-mutate"
)

// Actions of Kyverno's events (pkg/event/action.go).
const (
	ResourceBlocked = "Resource Blocked"
	ResourcePassed  = "Resource Passed"
	None            = "None"
)

// Info is one event to emit, as Kyverno's event.Info: the object it is
// on (Regarding), the object it is about (Related), its reason, message,
// action and source (the reporting controller). The type is Warning but
// for PolicyApplied and PolicySkipped (Normal), as Kyverno's emitEvent.
type Info struct {
	Regarding corev1.ObjectReference
	Related   *corev1.ObjectReference
	Reason    string
	Message   string
	Action    string
	Source    string
}

// Type is the event's type, as Kyverno's emitEvent chooses it.
func (i Info) Type() string {
	if i.Reason == PolicyApplied || i.Reason == PolicySkipped {
		return corev1.EventTypeNormal
	}
	return corev1.EventTypeWarning
}

// policyAPIVersions are the apiVersions of the policies' kinds, as
// Kyverno's events name them.
var policyAPIVersions = map[string]string{
	"ClusterPolicy":                   "kyverno.io/v1",
	"Policy":                          "kyverno.io/v1",
	"ValidatingPolicy":                "policies.kyverno.io/v1beta1",
	"NamespacedValidatingPolicy":      "policies.kyverno.io/v1beta1",
	"MutatingPolicy":                  "policies.kyverno.io/v1beta1",
	"NamespacedMutatingPolicy":        "policies.kyverno.io/v1beta1",
	"ImageValidatingPolicy":           "policies.kyverno.io/v1beta1",
	"NamespacedImageValidatingPolicy": "policies.kyverno.io/v1beta1",
	"GeneratingPolicy":                "policies.kyverno.io/v1beta1",
	"NamespacedGeneratingPolicy":      "policies.kyverno.io/v1beta1",
	"ValidatingAdmissionPolicy":       "admissionregistration.k8s.io/v1",
}

// PolicyRef is the reference of a policy in its events. The policies'
// UIDs are not known to the writer, so it has none.
func PolicyRef(kind, namespace, name string) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: policyAPIVersions[kind], Kind: kind, Namespace: namespace, Name: name}
}

// ResourceRef is the reference of an evaluated resource.
func ResourceRef(r *verdictv1.ObjectReference) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: r.GetApiVersion(), Kind: r.GetKind(), Namespace: r.GetNamespace(), Name: r.GetName(), UID: types.UID(r.GetUid())}
}

// Rule is a rule's result, as the events read it.
type Rule struct {
	Name, Status, Message string
}

// PolicyFail is Kyverno's event.NewPolicyFailEvent: on the policy, about
// the resource.
func PolicyFail(source, reason string, policy, resource corev1.ObjectReference, rule Rule, blocked bool) Info {
	action := ResourcePassed
	if blocked {
		action = ResourceBlocked
	}
	var b strings.Builder
	if resource.Namespace != "" {
		fmt.Fprintf(&b, "%s %s/%s", resource.Kind, resource.Namespace, resource.Name)
	} else {
		fmt.Fprintf(&b, "%s %s", resource.Kind, resource.Name)
	}
	if rule.Name != "" {
		fmt.Fprintf(&b, ": [%s] %s", rule.Name, rule.Status)
	} else {
		fmt.Fprintf(&b, ": %s", rule.Status)
	}
	if blocked {
		b.WriteString(" (blocked)")
	}
	if rule.Message != "" {
		fmt.Fprintf(&b, "; %s", rule.Message)
	}
	related := resource
	return Info{Regarding: policy, Related: &related, Reason: reason, Source: source, Message: b.String(), Action: action}
}

// ResourceViolation is Kyverno's event.NewResourceViolationEvent: on the
// resource, naming the policy (by name) and the rule.
func ResourceViolation(source, reason, policyName string, resource corev1.ObjectReference, rule Rule) Info {
	return Info{
		Regarding: resource,
		Reason:    reason,
		Source:    source,
		Message:   fmt.Sprintf("policy %s/%s %s: %s", policyName, rule.Name, rule.Status, rule.Message),
		Action:    ResourcePassed,
	}
}

// BackgroundFailed is Kyverno's event.NewBackgroundFailedEvent: on the
// policy of a generate or mutateExisting rule that failed (apiVersion
// kyverno.io/v1 whatever its kind, as Kyverno writes it), about the
// trigger or target (its kind, namespace and name: Kyverno's
// ResourceSpec).
func BackgroundFailed(err, policyKind, policyNamespace, policyName, rule, source string, resource corev1.ObjectReference) Info {
	msg := fmt.Sprintf("policy %s/%s error: %v", policyName, rule, err)
	if rule == "" {
		msg = fmt.Sprintf("policy %s error: %v", policyName, err)
	}
	return Info{
		Regarding: corev1.ObjectReference{APIVersion: "kyverno.io/v1", Kind: policyKind, Namespace: policyNamespace, Name: policyName},
		Related:   &corev1.ObjectReference{Kind: resource.Kind, Namespace: resource.Namespace, Name: resource.Name},
		Source:    source, Reason: PolicyError, Message: msg, Action: None,
	}
}

// policyResponse is the results of one policy in an evaluation: Kyverno's
// engine response.
type policyResponse struct {
	ref        corev1.ObjectReference
	background bool
	enforce    bool
	rules      []Rule
}

func (p *policyResponse) has(statuses ...string) bool {
	for _, r := range p.rules {
		for _, s := range statuses {
			if r.Status == s {
				return true
			}
		}
	}
	return false
}

// responses groups the results of an evaluation by policy, in the order
// of their first result.
func responses(ev *verdictv1.ResourceEvaluation) []*policyResponse {
	kinds := map[[2]string]*verdictv1.PolicyVersion{}
	for _, p := range ev.GetPolicies() {
		kinds[[2]string{p.GetNamespace(), p.GetName()}] = p
	}
	var out []*policyResponse
	by := map[[2]string]*policyResponse{}
	for _, r := range ev.GetResults() {
		k := [2]string{r.GetPolicyNamespace(), r.GetPolicy()}
		pr := by[k]
		if pr == nil {
			pv := kinds[k]
			if pv == nil {
				continue // not a result of a listed policy: the writer rejects it
			}
			pr = &policyResponse{ref: PolicyRef(pv.GetKind(), pv.GetNamespace(), pv.GetName()), background: pv.GetBackground()}
			by[k] = pr
			out = append(out, pr)
		}
		pr.enforce = pr.enforce || r.GetEnforce()
		pr.rules = append(pr.rules, Rule{Name: r.GetRule(), Status: r.GetResult().Name(), Message: r.GetMessage()})
	}
	return out
}

// FromEvaluation returns the events Kyverno emits for an evaluation:
//
//   - an admission request that was allowed (pkg/webhooks/utils,
//     GenerateEvents(responses, false)): for each policy with a fail or
//     error result, an event on the policy for each such rule, and an
//     event on the resource for each of its rules;
//   - a denied admission request (GenerateEvents(enforceResponses,
//     true)): for each Enforce policy with a fail or error result, an
//     event on the policy for each such rule, "(blocked)", and none on the
//     resource;
//   - a background evaluation (pkg/controllers/report/utils,
//     generateFailEvents): for each rule that neither passed nor was
//     skipped (fail, error, warn) of a policy with background: true, an
//     event on the resource and one on the policy.
//
// A DELETE of a scanner's watch, and a resource without a name, have
// none. Kyverno's PolicyApplied events (with generateSuccessEvents, off
// by default) and PolicySkipped events (which name the PolicyExceptions,
// not carried in an evaluation) are not built.
func FromEvaluation(ev *verdictv1.ResourceEvaluation) []Info {
	res := ev.GetResource()
	if res.GetName() == "" || ev.GetResource() == nil {
		return nil
	}
	resource := ResourceRef(res)
	var out []Info
	if ev.GetSource() == verdictv1.ReportSource_REPORT_SOURCE_BACKGROUND {
		if ev.GetOperation() == verdictv1.Operation_OPERATION_DELETE {
			return nil
		}
		for _, p := range responses(ev) {
			if !p.background {
				continue
			}
			for _, r := range p.rules {
				if r.Status == "pass" || r.Status == "skip" {
					continue
				}
				out = append(out,
					ResourceViolation(PolicyController, PolicyViolation, p.ref.Name, resource, r),
					PolicyFail(PolicyController, PolicyViolation, p.ref, resource, r, false))
			}
		}
		return out
	}
	blocked := ev.GetDenied()
	for _, p := range responses(ev) {
		if blocked && !p.enforce {
			continue // only the Enforce policies' responses, when denied
		}
		if !p.has("fail", "error") {
			continue
		}
		for _, r := range p.rules {
			if r.Status == "fail" || r.Status == "error" {
				out = append(out, PolicyFail(AdmissionController, PolicyViolation, p.ref, resource, r, blocked))
			}
			if !blocked {
				out = append(out, ResourceViolation(AdmissionController, PolicyViolation, p.ref.Name, resource, r))
			}
		}
	}
	return out
}
