package webhookproxy_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"google.golang.org/grpc"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/engine/cases"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/server"
	"github.com/verdict-policy/verdict/webhookproxy"
)

// inlineDecider sends the case's policies inline with every request: the
// proxy asks for the server's policies, the case brings its own.
type inlineDecider struct {
	c    *client.Client
	docs [][]byte
}

func (d inlineDecider) Evaluate(ctx context.Context, req *verdictv1.EvaluateRequest, opts ...grpc.CallOption) (*verdictv1.EvaluateResponse, error) {
	if d.docs != nil {
		req.Policies = &verdictv1.EvaluateRequest_InlinePolicies{InlinePolicies: &verdictv1.InlinePolicies{Documents: d.docs}}
	}
	return d.c.Evaluate(ctx, req, opts...)
}

func (d inlineDecider) ValidatePolicies(ctx context.Context, req *verdictv1.ValidatePoliciesRequest, opts ...grpc.CallOption) (*verdictv1.ValidatePoliciesResponse, error) {
	return d.c.ValidatePolicies(ctx, req, opts...)
}

// TestCases replays the engine's case corpus (engine/cases) as
// AdmissionReviews through the proxy to a real decision server: the
// answer of /validate must allow or deny as Kyverno's webhook does for the
// case's results (with their messages), the patch of /mutate must give
// the case's patched object, and a case of an invalid policy must be
// refused by /policyvalidate. Background scans and replays of existing
// triggers are not admission requests; the cases listed in
// testdata/cases-exceptions.yaml, with the reason, are those an
// AdmissionReview cannot express; one of them that passes is an error.
func TestCases(t *testing.T) {
	var empty cases.Case
	shared := startDecisionServerWith(t, server.Options{Lookup: empty.Lookup(), CELData: empty.Sources()})
	notAdmission := func(c *cases.Case) bool {
		r := c.Request
		return r != nil && (r.Background || r.GenerateExisting || r.MutateExisting)
	}
	cases.Runner{Exceptions: "testdata/cases-exceptions.yaml", Skip: notAdmission}.Run(t, func(t *testing.T, tc cases.Case) cases.Outcome {
		docs, err := tc.Documents()
		if err != nil {
			t.Fatalf("case %s: %v", tc.Note, err)
		}
		celKinds, err := tc.CELKinds()
		if err != nil {
			t.Fatalf("case %s: %v", tc.Note, err)
		}
		switch {
		case tc.WantError != nil:
			return validateCase(t, shared, tc, docs)
		case celKinds:
			// The case's policies are the server's own.
			return reviewCase(t, inlineDecider{c: startCaseServer(t, tc, docs)}, tc)
		case tc.HasData():
			return reviewCase(t, inlineDecider{c: startCaseServer(t, tc, nil), docs: docs}, tc)
		}
		return reviewCase(t, inlineDecider{c: shared, docs: docs}, tc)
	})
}

// startCaseServer starts a server with the case's data, its exceptions
// and the policies docs, one per file in order.
func startCaseServer(t *testing.T, tc cases.Case, docs [][]byte) *client.Client {
	t.Helper()
	var files []string
	for _, d := range docs {
		files = append(files, string(d))
	}
	for _, ex := range []string{tc.Exceptions, tc.CELExceptions} {
		if ex != "" {
			files = append(files, ex)
		}
	}
	return startDecisionServerWith(t, server.Options{Lookup: tc.Lookup(), CELData: tc.Sources()}, files...)
}

// serveReview sends an AdmissionReview to path of h and decodes the answer.
func serveReview(t *testing.T, h http.Handler, path string, ar *admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
	t.Helper()
	body, err := json.Marshal(ar)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("POST %s = %d %s", path, rec.Code, rec.Body)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	return out.Response
}

// validateCase sends each policy document of an invalid case to
// /policyvalidate: the first refused one must name the case's error path.
func validateCase(t *testing.T, c *client.Client, tc cases.Case, docs [][]byte) cases.Outcome {
	t.Helper()
	h := newCaseHandler(t, inlineDecider{c: c}, tc)
	for _, d := range docs {
		var tm struct {
			Kind     string
			Metadata struct{ Name, Namespace string }
		}
		if err := json.Unmarshal(d, &tm); err != nil {
			t.Fatal(err)
		}
		ar := &admissionv1.AdmissionReview{Request: &admissionv1.AdmissionRequest{
			UID: "policy", Operation: admissionv1.Create, Name: tm.Metadata.Name, Namespace: tm.Metadata.Namespace,
		}}
		ar.APIVersion, ar.Kind = "admission.k8s.io/v1", "AdmissionReview"
		ar.Request.Kind.Kind = tm.Kind
		ar.Request.Object.Raw = d
		resp := serveReview(t, h, "/policyvalidate", ar)
		if resp.Allowed {
			continue
		}
		// "KIND NAME is invalid:\nPATH: MESSAGE": the first problem.
		msg := resp.Result.Message
		_, first, _ := strings.Cut(msg, "\n")
		path, _, _ := strings.Cut(first, ": ")
		if !strings.HasPrefix(path, "spec") && !strings.HasPrefix(path, "metadata") && path != "apiVersion" && path != "kind" {
			path = "" // a problem without path
		}
		// The refusal names the path of the problem, not its code.
		return cases.Outcome{Error: &cases.Error{Code: tc.WantError.Code, Path: path}}
	}
	return cases.Outcome{NoResults: true}
}

// newCaseHandler is a proxy of d for the case: the labels of its
// namespace come from the case.
func newCaseHandler(t *testing.T, d webhookproxy.Decider, tc cases.Case) http.Handler {
	t.Helper()
	ns := map[string]map[string]string{}
	if md, _ := tc.Resource["metadata"].(map[string]any); md != nil {
		if name, _ := md["namespace"].(string); name != "" {
			ns[name] = tc.NamespaceLabels()
		}
	}
	h, err := webhookproxy.New(d, webhookproxy.Options{Namespaces: webhookproxy.MapNamespaceLabels(ns)})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// reviewCase sends the case as an AdmissionReview to /mutate (when it
// expects a patch) and /validate.
func reviewCase(t *testing.T, d webhookproxy.Decider, tc cases.Case) cases.Outcome {
	t.Helper()
	h := newCaseHandler(t, d, tc)
	ar := caseReview(t, tc)
	// A review carries neither rule results nor generate intents and
	// mutate targets.
	out := cases.Outcome{NoResults: true, NoIntents: true}
	if tc.WantPatched != nil || tc.WantPatch != nil || tc.WantNoPatch {
		resp := serveReview(t, h, "/mutate", ar)
		if len(resp.Patch) > 0 {
			out.Patch = resp.Patch
			p, err := jsonpatch.DecodePatch(resp.Patch)
			if err != nil {
				t.Fatalf("patch %s: %v", resp.Patch, err)
			}
			patched, err := p.Apply(ar.Request.Object.Raw)
			if err != nil {
				t.Fatalf("apply %s: %v", resp.Patch, err)
			}
			if err := json.Unmarshal(patched, &out.Patched); err != nil {
				t.Fatal(err)
			}
		}
	}
	resp := serveReview(t, h, "/validate", ar)
	out.Admission = &cases.Admission{Allowed: resp.Allowed}
	if resp.Result != nil {
		out.Admission.Message = resp.Result.Message
	}
	return out
}

// caseReview is the AdmissionReview of a case's request.
func caseReview(t *testing.T, tc cases.Case) *admissionv1.AdmissionReview {
	t.Helper()
	r := tc.Request
	if r == nil {
		r = &cases.Request{}
	}
	req := &admissionv1.AdmissionRequest{UID: "case", Operation: admissionv1.Create}
	if r.Operation != "" {
		req.Operation = admissionv1.Operation(r.Operation)
	}
	obj := tc.Resource
	if obj == nil {
		obj = r.OldObject
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	md, _ := obj["metadata"].(map[string]any)
	req.Name, _ = md["name"].(string)
	req.Namespace, _ = md["namespace"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		t.Fatalf("case %s: apiVersion %q: %v", tc.Note, apiVersion, err)
	}
	gvr, _ := meta.UnsafeGuessKindToResource(gv.WithKind(kind))
	if tc.ResourcePlural != "" {
		gvr.Resource = tc.ResourcePlural
	}
	if tc.ResourceGroup != "" || tc.ResourceVersion != "" {
		gvr.Group, gvr.Version = tc.ResourceGroup, tc.ResourceVersion
	}
	req.SubResource = tc.Subresource
	req.Kind = metav1.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: kind}
	req.Resource.Group, req.Resource.Version, req.Resource.Resource = gvr.Group, gvr.Version, gvr.Resource
	req.UserInfo.Username, req.UserInfo.UID, req.UserInfo.Groups = r.UserInfo.Username, r.UserInfo.UID, r.UserInfo.Groups
	for k, v := range r.UserInfo.Extra {
		if req.UserInfo.Extra == nil {
			req.UserInfo.Extra = map[string]authenticationv1.ExtraValue{}
		}
		req.UserInfo.Extra[k] = v
	}
	if tc.Resource != nil {
		req.Object.Raw = mustMarshal(t, tc.Resource)
	}
	if r.OldObject != nil {
		req.OldObject.Raw = mustMarshal(t, r.OldObject)
	}
	ar := &admissionv1.AdmissionReview{Request: req}
	ar.APIVersion, ar.Kind = "admission.k8s.io/v1", "AdmissionReview"
	return ar
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
