package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/ivpol"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/vap"
	"github.com/verdict-policy/verdict/engine/vpol"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// maxValidateDocuments bounds the documents of one ValidatePolicies call
// (the message size limit bounds their bytes).
const maxValidateDocuments = 256

// CodeLimitExceeded: a document or policy sent to ValidatePolicies is
// larger than the server compiles for one request
// (Options.MaxRequestPolicyBytes, MaxRequestPolicyRules). It is the
// document's error, so that /policyvalidate refuses the policy.
const CodeLimitExceeded engine.Code = "limit_exceeded"

// ValidatePolicies compiles each document's policies and exceptions (of
// kyverno.io and of policies.kyverno.io: ValidatingPolicies,
// MutatingPolicies, PolicyExceptions) and ValidatingAdmissionPolicies
// and their bindings, as
// the store would, without serving them or caching them. Compiling is
// work like an evaluation: the call takes one of the evaluation slots
// (Options.MaxEvaluations) and waits in line for it until its deadline.
// A document of more than MaxRequestPolicyBytes, or a policy of more than
// MaxRequestPolicyRules rules, is not compiled: it gets a
// CodeLimitExceeded error. One policy is compiled at a time and dropped,
// so a call holds the memory of one compilation at most.
func (s *Server) ValidatePolicies(ctx context.Context, req *verdictv1.ValidatePoliciesRequest) (*verdictv1.ValidatePoliciesResponse, error) {
	docs := req.GetDocuments()
	if len(docs) > maxValidateDocuments {
		return nil, toStatus(fieldError("documents", "%d documents: at most %d per call", len(docs), maxValidateDocuments))
	}
	if s.slots != nil {
		var sl *slot
		var err error
		if ctx, sl, err = s.slots.acquire(ctx); err != nil {
			return nil, toStatus(err)
		}
		defer sl.done()
	}
	limits := requestLimits{bytes: s.opts.MaxRequestPolicyBytes, rules: s.opts.MaxRequestPolicyRules}
	resp := &verdictv1.ValidatePoliciesResponse{Documents: make([]*verdictv1.PolicyValidation, 0, len(docs))}
	for i, d := range docs {
		if err := ctx.Err(); err != nil {
			return nil, toStatus(err)
		}
		resp.Documents = append(resp.Documents, validateDocument(fmt.Sprintf("documents[%d]", i), d, limits))
	}
	return resp, nil
}

// validateDocument splits a document into its objects and compiles each
// Kyverno policy or exception among them, within limits.
func validateDocument(source string, data []byte, limits requestLimits) *verdictv1.PolicyValidation {
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
	if len(data) > limits.bytes {
		out.Errors = append(out.Errors, &verdictv1.PolicyError{Code: string(CodeLimitExceeded),
			Message: fmt.Sprintf("%s: %d bytes; the server compiles at most %d bytes of policies per request", source, len(data), limits.bytes)})
		return out
	}
	objs, err := kyverno.SplitDocuments(source, data)
	if err != nil {
		addErr(err, engine.CodeDecode)
		return out
	}
	for _, o := range objs {
		apiVersion, _ := o.Value["apiVersion"].(string)
		kind, _ := o.Value["kind"].(string)
		meta, _ := o.Value["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		namespace, _ := meta["namespace"].(string)
		group, _, _ := strings.Cut(apiVersion, "/")
		celKind := vpol.IsPolicy(apiVersion, kind) || vpol.IsException(apiVersion, kind) || mpol.Policies.IsPolicy(apiVersion, kind) || ivpol.Policies.IsPolicy(apiVersion, kind)
		vapKind := vap.IsPolicy(apiVersion, kind) || vap.IsBinding(apiVersion, kind)
		genOrDelCompile, genOrDelKind := generatingOrDeleting(apiVersion, kind) // gpol.go
		celKind = celKind || genOrDelKind
		if group != "kyverno.io" && !celKind && !vapKind {
			out.Errors = append(out.Errors, &verdictv1.PolicyError{Code: string(engine.CodeDecode), Path: "apiVersion",
				Message: fmt.Sprintf("%s %s is not a kyverno.io, policies.kyverno.io or ValidatingAdmissionPolicy kind", apiVersion, kind)})
			continue
		}
		ref := kind + "/" + name
		if namespace != "" && kind != kyverno.KindClusterPolicy && kind != vpol.KindValidatingPolicy && kind != mpol.KindMutatingPolicy && kind != ivpol.KindImageValidatingPolicy && !vapKind && !clusterWide(kind) {
			ref = kind + "/" + namespace + "/" + name
		}
		out.Policies = append(out.Policies, ref)
		// The rules of a ValidatingPolicy or ValidatingAdmissionPolicy
		// are its validations, those of a MutatingPolicy its mutations.
		spec, _ := o.Value["spec"].(map[string]any)
		rulesField := "spec.rules"
		switch {
		case vpol.IsPolicy(apiVersion, kind) || vap.IsPolicy(apiVersion, kind) || ivpol.Policies.IsPolicy(apiVersion, kind):
			rulesField = "spec.validations"
		case mpol.Policies.IsPolicy(apiVersion, kind):
			rulesField = "spec.mutations"
		}
		if rules, _ := spec[strings.TrimPrefix(rulesField, "spec.")].([]any); len(rules) > limits.rules {
			out.Errors = append(out.Errors, &verdictv1.PolicyError{Code: string(CodeLimitExceeded), Path: rulesField,
				Message: fmt.Sprintf("%s has %d rules; the server compiles at most %d rules per request", ref, len(rules), limits.rules)})
			continue
		}
		raw, err := json.Marshal(o.Value)
		if err != nil {
			addErr(err, engine.CodeDecode)
			continue
		}
		switch {
		case vpol.IsPolicy(apiVersion, kind):
			_, err = compileValidating(source, raw)
		case mpol.Policies.IsPolicy(apiVersion, kind):
			_, err = compileMutating(source, raw)
		case ivpol.Policies.IsPolicy(apiVersion, kind):
			_, err = compileImageValidating(source, raw)
		case genOrDelKind:
			_, err = genOrDelCompile(source, raw)
		case vpol.IsException(apiVersion, kind):
			_, err = compileCELException(source, raw)
		case vap.IsPolicy(apiVersion, kind):
			_, err = compileVAP(source, raw)
		case vap.IsBinding(apiVersion, kind):
			_, err = compileBinding(source, raw)
		case kind == kyverno.KindClusterPolicy || kind == kyverno.KindPolicy:
			_, err = compileDocuments(source, raw)
		case kind == kindPolicyException:
			_, err = compileException(source, raw)
		default:
			out.Errors = append(out.Errors, &verdictv1.PolicyError{Code: string(engine.CodeUnsupported), Path: "kind",
				Message: kind + " policies are not supported yet"})
		}
		if err != nil {
			addErr(err, engine.CodeInvalidPolicy)
		}
	}
	return out
}
