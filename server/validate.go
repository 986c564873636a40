package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyverno"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// maxValidateDocuments bounds the documents of one ValidatePolicies call
// (the message size limit bounds their bytes).
const maxValidateDocuments = 256

// ValidatePolicies compiles each document's policies and exceptions, as
// the store would, without serving them or caching them. Compiling is
// work like an evaluation: the call takes one of the evaluation slots
// (Options.MaxEvaluations) and waits in line for it until its deadline,
// and its documents are bounded as inline policies are
// (MaxRequestPolicyBytes, MaxRequestPolicyRules).
func (s *Server) ValidatePolicies(ctx context.Context, req *verdictv1.ValidatePoliciesRequest) (*verdictv1.ValidatePoliciesResponse, error) {
	docs := req.GetDocuments()
	if len(docs) > maxValidateDocuments {
		return nil, toStatus(fieldError("documents", "%d documents: at most %d per call", len(docs), maxValidateDocuments))
	}
	size := 0
	for _, d := range docs {
		size += len(d)
	}
	if size > s.opts.MaxRequestPolicyBytes {
		return nil, toStatus(&limitError{field: "documents", description: fmt.Sprintf(
			"%d bytes of policies; the server compiles at most %d bytes of policies per request", size, s.opts.MaxRequestPolicyBytes)})
	}
	if s.slots != nil {
		var sl *slot
		var err error
		if ctx, sl, err = s.slots.acquire(ctx); err != nil {
			return nil, toStatus(err)
		}
		defer sl.done()
	}
	split := make([]splitDocument, len(docs))
	rules := 0
	for i, d := range docs {
		split[i].source = fmt.Sprintf("documents[%d]", i)
		split[i].objs, split[i].err = kyverno.SplitDocuments(split[i].source, d)
		for _, o := range split[i].objs {
			apiVersion, _ := o.Value["apiVersion"].(string)
			if group, _, _ := strings.Cut(apiVersion, "/"); group != "kyverno.io" {
				continue
			}
			spec, _ := o.Value["spec"].(map[string]any)
			rs, _ := spec["rules"].([]any)
			rules += len(rs)
		}
	}
	if rules > s.opts.MaxRequestPolicyRules {
		return nil, toStatus(&limitError{field: "documents", description: fmt.Sprintf(
			"%d rules in the policies; the server compiles at most %d rules per request", rules, s.opts.MaxRequestPolicyRules)})
	}
	resp := &verdictv1.ValidatePoliciesResponse{Documents: make([]*verdictv1.PolicyValidation, 0, len(docs))}
	for _, d := range split {
		if err := ctx.Err(); err != nil {
			return nil, toStatus(err)
		}
		resp.Documents = append(resp.Documents, validateDocument(d))
	}
	return resp, nil
}

// splitDocument is a document of a ValidatePolicies call split into its
// objects, or why it could not be.
type splitDocument struct {
	source string
	objs   []kyverno.Object
	err    error
}

// validateDocument compiles each Kyverno policy or exception among the
// objects of a document.
func validateDocument(d splitDocument) *verdictv1.PolicyValidation {
	source := d.source
	out := &verdictv1.PolicyValidation{}
	addErr := func(err error, code engine.Code) {
		if es := policyErrors(err); len(es) > 0 {
			for _, e := range es {
				out.Errors = append(out.Errors, &verdictv1.PolicyError{Code: string(e.Code), Path: e.Path, Message: e.Message})
			}
			return
		}
		out.Errors = append(out.Errors, &verdictv1.PolicyError{Code: string(code), Message: err.Error()})
	}
	if d.err != nil {
		addErr(d.err, engine.CodeDecode)
		return out
	}
	for _, o := range d.objs {
		raw, err := json.Marshal(o.Value)
		if err != nil {
			addErr(err, engine.CodeDecode)
			continue
		}
		apiVersion, _ := o.Value["apiVersion"].(string)
		kind, _ := o.Value["kind"].(string)
		meta, _ := o.Value["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		namespace, _ := meta["namespace"].(string)
		group, _, _ := strings.Cut(apiVersion, "/")
		if group != "kyverno.io" {
			out.Errors = append(out.Errors, &verdictv1.PolicyError{Code: string(engine.CodeDecode), Path: "apiVersion",
				Message: fmt.Sprintf("%s %s is not a kyverno.io policy", apiVersion, kind)})
			continue
		}
		ref := kind + "/" + name
		if namespace != "" && kind != kyverno.KindClusterPolicy {
			ref = kind + "/" + namespace + "/" + name
		}
		out.Policies = append(out.Policies, ref)
		switch kind {
		case kyverno.KindClusterPolicy, kyverno.KindPolicy:
			if _, err := compileDocuments(source, raw); err != nil {
				addErr(err, engine.CodeInvalidPolicy)
			}
		case kindPolicyException:
			if _, err := compileException(source, raw); err != nil {
				addErr(err, engine.CodeInvalidPolicy)
			}
		default:
			out.Errors = append(out.Errors, &verdictv1.PolicyError{Code: string(engine.CodeUnsupported), Path: "kind",
				Message: kind + " policies are not supported yet"})
		}
	}
	return out
}
