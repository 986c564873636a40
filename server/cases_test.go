package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/verdict-policy/verdict/engine/cases"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// TestCases replays the engine's case corpus (engine/cases) through a
// real decision server over gRPC: each case's policies sent inline, its
// data served by the server's Lookup and CEL sources, its
// PolicyExceptions read from a policy folder. The cases listed in
// testdata/cases-exceptions.yaml, with the reason, are those the API
// cannot express; one of them that passes is an error.
func TestCases(t *testing.T) {
	// Cases without data of their own share a server with the Lookup and
	// CEL sources of an empty case.
	var empty cases.Case
	shared := startServer(t, Options{Lookup: empty.Lookup(), CELData: empty.Sources()}).client(t)
	cases.Runner{Exceptions: "testdata/cases-exceptions.yaml"}.Run(t, func(t *testing.T, tc cases.Case) cases.Outcome {
		docs, err := tc.Documents()
		if err != nil {
			t.Fatalf("case %s: %v", tc.Note, err)
		}
		celKinds, err := tc.CELKinds()
		if err != nil {
			t.Fatalf("case %s: %v", tc.Note, err)
		}
		switch {
		case celKinds && tc.WantError != nil:
			// Inline policies are of the kyverno.io kinds; the server
			// checks the others with ValidatePolicies.
			return validateCase(t, shared, docs)
		case celKinds:
			// The case's policies are the server's own.
			return evaluateCase(t, startCaseServer(t, tc, docs), tc, nil)
		case tc.HasData():
			return evaluateCase(t, startCaseServer(t, tc, nil), tc, docs)
		}
		return evaluateCase(t, shared, tc, docs)
	})
}

// validateCase checks the case's policies with ValidatePolicies: the first
// problem is the outcome's error.
func validateCase(t *testing.T, c verdictv1.DecisionServiceClient, docs [][]byte) cases.Outcome {
	t.Helper()
	resp, err := c.ValidatePolicies(context.Background(), &verdictv1.ValidatePoliciesRequest{Documents: docs})
	if err != nil {
		t.Fatalf("ValidatePolicies: %v", err)
	}
	for _, d := range resp.GetDocuments() {
		for _, e := range d.GetErrors() {
			return cases.Outcome{Error: &cases.Error{Code: e.GetCode(), Path: e.GetPath()}}
		}
	}
	return cases.Outcome{}
}

// startCaseServer starts a server with the case's data, its exceptions
// and the policies docs, one per file in order.
func startCaseServer(t *testing.T, tc cases.Case, docs [][]byte) verdictv1.DecisionServiceClient {
	t.Helper()
	files := map[string]string{}
	for i, d := range docs {
		files[fmt.Sprintf("policy-%03d.json", i)] = string(d)
	}
	if tc.Exceptions != "" {
		files["exceptions.yaml"] = tc.Exceptions
	}
	if tc.CELExceptions != "" {
		files["cel-exceptions.yaml"] = tc.CELExceptions
	}
	opts := Options{Lookup: tc.Lookup(), CELData: tc.Sources()}
	if len(files) > 0 {
		_, src := policyFolder(t, files)
		opts.Sources = []PolicySource{src}
	}
	return startServer(t, opts).client(t)
}

// evaluateCase sends the case to c, with docs as inline policies (none:
// the server's policies), and reads the answer in the corpus's terms.
func evaluateCase(t *testing.T, c verdictv1.DecisionServiceClient, tc cases.Case, docs [][]byte) cases.Outcome {
	t.Helper()
	req, err := caseRequest(tc, docs)
	if err != nil {
		t.Fatalf("request of case %s: %v", tc.Note, err)
	}
	resp, err := c.Evaluate(context.Background(), req)
	if err != nil {
		return cases.Outcome{Error: caseError(err)}
	}
	out := cases.Outcome{NoPaths: true}
	for _, r := range resp.GetResults() {
		out.Results = append(out.Results, cases.Result{
			Policy: r.GetPolicy(), Rule: r.GetRule(), Result: strings.ToLower(strings.TrimPrefix(r.GetResult().String(), "RESULT_")),
			Message: r.GetMessage(), Enforce: r.GetEnforce(), Properties: r.GetProperties(),
		})
	}
	if p := resp.GetJsonPatch(); len(p) > 0 {
		out.Patch = p
		out.Patched = applyPatch(t, req.GetObject(), p)
	}
	for _, g := range resp.GetGenerates() {
		var obj map[string]any
		if err := json.Unmarshal(g.GetResource(), &obj); err != nil {
			t.Fatalf("generate intent %s: %v", g.GetRule(), err)
		}
		action := strings.ToLower(strings.TrimPrefix(g.GetAction().String(), "GENERATE_ACTION_"))
		out.Generated = append(out.Generated, cases.Generated{Rule: g.GetRule(), Action: action, Object: obj, Source: g.GetCloneSource()})
	}
	for _, tp := range resp.GetTargetPatches() {
		out.Targets = append(out.Targets, applyPatch(t, tp.GetTarget(), tp.GetJsonPatch()))
	}
	return out
}

// caseRequest is the EvaluateRequest of a case, with docs as inline
// policies (none: the server's policies).
func caseRequest(tc cases.Case, docs [][]byte) (*verdictv1.EvaluateRequest, error) {
	req := &verdictv1.EvaluateRequest{}
	if docs != nil {
		req.Policies = &verdictv1.EvaluateRequest_InlinePolicies{InlinePolicies: &verdictv1.InlinePolicies{Documents: docs}}
	}
	var err error
	resource := tc.Resource
	if resource == nil && tc.WantError != nil {
		// A case of a compile error may have no resource; the API wants
		// one.
		resource = map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "placeholder"}}
	}
	if resource != nil {
		if req.Object, err = json.Marshal(resource); err != nil {
			return nil, err
		}
	}
	if tc.ResourcePlural != "" {
		req.Resource = &verdictv1.GroupVersionResource{Group: tc.ResourceGroup, Version: tc.ResourceVersion, Resource: tc.ResourcePlural}
	}
	req.Subresource = tc.Subresource
	meta, _ := tc.Resource["metadata"].(map[string]any)
	req.Namespace, _ = meta["namespace"].(string)
	req.NamespaceLabels = tc.NamespaceLabels()
	r := tc.Request
	if r == nil {
		return req, nil
	}
	if r.Operation != "" {
		req.Operation = verdictv1.Operation(verdictv1.Operation_value["OPERATION_"+r.Operation])
	}
	if r.OldObject != nil {
		if req.OldObject, err = json.Marshal(r.OldObject); err != nil {
			return nil, err
		}
		if req.Namespace == "" {
			meta, _ := r.OldObject["metadata"].(map[string]any)
			req.Namespace, _ = meta["namespace"].(string)
		}
	}
	u := r.UserInfo
	req.UserInfo = &verdictv1.UserInfo{Username: u.Username, Uid: u.UID, Groups: u.Groups, Roles: r.Roles, ClusterRoles: r.ClusterRoles}
	for k, v := range u.Extra {
		if req.UserInfo.Extra == nil {
			req.UserInfo.Extra = map[string]*verdictv1.ExtraValue{}
		}
		req.UserInfo.Extra[k] = &verdictv1.ExtraValue{Values: v}
	}
	if r.Background {
		req.Mode = verdictv1.Mode_MODE_BACKGROUND
	}
	req.GenerateExisting, req.MutateExisting = r.GenerateExisting, r.MutateExisting
	for k, v := range r.Variables {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if req.Variables == nil {
			req.Variables = map[string][]byte{}
		}
		req.Variables[k] = b
	}
	return req, nil
}

// caseError reads the engine error of an INVALID_ARGUMENT answer: the
// first field violation, whose reason is the engine's code and whose
// field is the path in the policy after inline_policies.documents[i].
func caseError(err error) *cases.Error {
	st := status.Convert(err)
	if st.Code() == codes.InvalidArgument {
		for _, d := range st.Details() {
			if br, ok := d.(*errdetails.BadRequest); ok && len(br.GetFieldViolations()) > 0 {
				v := br.GetFieldViolations()[0]
				field := v.GetField()
				if i := strings.Index(field, "]."); strings.HasPrefix(field, "inline_policies.documents[") && i >= 0 {
					field = field[i+2:]
				} else if strings.HasPrefix(field, "inline_policies.documents[") {
					field = ""
				}
				return &cases.Error{Code: v.GetReason(), Path: field}
			}
		}
	}
	return &cases.Error{Code: "status " + st.Code().String(), Path: st.Message()}
}

// applyPatch applies a JSON Patch to the JSON object doc.
func applyPatch(t *testing.T, doc, patch []byte) map[string]any {
	t.Helper()
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatalf("patch %s: %v", patch, err)
	}
	out, err := p.Apply(doc)
	if err != nil {
		t.Fatalf("apply %s: %v", patch, err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
