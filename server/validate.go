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
// the store would, without serving them or caching them.
func (s *Server) ValidatePolicies(_ context.Context, req *verdictv1.ValidatePoliciesRequest) (*verdictv1.ValidatePoliciesResponse, error) {
	docs := req.GetDocuments()
	if len(docs) > maxValidateDocuments {
		return nil, toStatus(fieldError("documents", "%d documents: at most %d per call", len(docs), maxValidateDocuments))
	}
	resp := &verdictv1.ValidatePoliciesResponse{Documents: make([]*verdictv1.PolicyValidation, 0, len(docs))}
	for i, d := range docs {
		resp.Documents = append(resp.Documents, validateDocument(fmt.Sprintf("documents[%d]", i), d))
	}
	return resp, nil
}

// validateDocument splits a document into its objects and compiles each
// Kyverno policy or exception among them.
func validateDocument(source string, data []byte) *verdictv1.PolicyValidation {
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
	objs, err := kyverno.SplitDocuments(source, data)
	if err != nil {
		addErr(err, engine.CodeDecode)
		return out
	}
	for _, o := range objs {
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
