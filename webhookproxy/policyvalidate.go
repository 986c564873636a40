package webhookproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// policyValidatePath is the path of a ValidatingWebhookConfiguration on
// kyverno.io ClusterPolicies, Policies and PolicyExceptions (CREATE and
// UPDATE): an invalid policy is refused at kubectl apply, as Kyverno's
// policy validation webhook refuses it, instead of being stored and then
// ignored by the decision servers.
const policyValidatePath = "/policyvalidate"

// PolicyValidator compiles policy documents without serving them. A
// Decider that implements it (client.Client does) gets the
// /policyvalidate path.
type PolicyValidator interface {
	ValidatePolicies(ctx context.Context, req *verdictv1.ValidatePoliciesRequest, opts ...grpc.CallOption) (*verdictv1.ValidatePoliciesResponse, error)
}

// validatePolicy answers a review of a policy object: allowed when the
// decision server compiles it, denied with every problem otherwise. When
// the server cannot be asked, Options.FailOpen decides.
func (h *Handler) validatePolicy(w http.ResponseWriter, r *http.Request, pv PolicyValidator) {
	start := time.Now()
	defer h.metrics.kyverno.http(r.Method, policyValidatePath, start)
	label := policyValidatePath[1:]
	ar, code, err := h.decode(w, r)
	if err != nil {
		h.metrics.requests.WithLabelValues(label, "bad_request").Inc()
		http.Error(w, err.Error(), code)
		return
	}
	req := ar.Request
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	if req.Operation == admissionv1.Create || req.Operation == admissionv1.Update {
		if len(req.Object.Raw) == 0 {
			h.metrics.requests.WithLabelValues(label, "bad_request").Inc()
			http.Error(w, "admission review: request.object missing", http.StatusBadRequest)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), h.timeout(r))
		defer cancel()
		out, err := pv.ValidatePolicies(ctx, &verdictv1.ValidatePoliciesRequest{Documents: [][]byte{req.Object.Raw}})
		switch {
		case err != nil:
			h.metrics.failures.WithLabelValues(label, failMode(h.opts.FailOpen)).Inc()
			h.opts.Logger.Warn("no policy validation", "uid", req.UID, "fail_open", h.opts.FailOpen, "error", err)
			resp = failureResponse(req, h.opts.FailOpen, fmt.Errorf("decision server: %w", err))
		case len(out.GetDocuments()) == 1 && len(out.GetDocuments()[0].GetErrors()) > 0:
			resp.Allowed = false
			resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusBadRequest,
				Reason: metav1.StatusReasonBadRequest, Message: policyErrorMessage(req, out.GetDocuments()[0])}
		}
	}
	outcome := "allowed"
	if !resp.Allowed {
		outcome = "denied"
	}
	h.metrics.requests.WithLabelValues(label, outcome).Inc()
	h.metrics.duration.WithLabelValues(label).Observe(time.Since(start).Seconds())
	h.metrics.kyverno.admission(Validate, req, resp.Allowed, start)
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(&admissionv1.AdmissionReview{TypeMeta: ar.TypeMeta, Response: resp}); err != nil {
		h.opts.Logger.Info("write admission response", "error", err)
	}
}

// policyErrorMessage lists the problems of a refused policy, one per
// line: "ClusterPolicy who-created is invalid:\nspec.rules[0]: ...".
func policyErrorMessage(req *admissionv1.AdmissionRequest, v *verdictv1.PolicyValidation) string {
	what := req.Kind.Kind + " " + req.Name
	if ps := v.GetPolicies(); len(ps) == 1 {
		// "ClusterPolicy/name", "Policy/namespace/name"
		kind, name, _ := strings.Cut(ps[0], "/")
		what = kind + " " + name
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is invalid:", what)
	for _, e := range v.GetErrors() {
		b.WriteString("\n")
		if e.GetPath() != "" {
			b.WriteString(e.GetPath())
			b.WriteString(": ")
		}
		b.WriteString(e.GetMessage())
	}
	return b.String()
}
