package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/dpol"
	"github.com/verdict-policy/verdict/engine/gpol"
	"github.com/verdict-policy/verdict/engine/ivpol"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vpol"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// inlinePolicies are the compiled inline policies of a request and the
// PolicyExceptions sent with them.
type inlinePolicies struct {
	policies      []*policy.Policy
	exceptions    []*policy.Exception
	celExceptions []*vpol.Exception
}

// inline compiles the inline policy documents of a request, each through
// the inline cache under the identity "inline" and the hash of its bytes.
// A document may hold kyverno.io ClusterPolicies, Policies and
// PolicyExceptions, and policies.kyverno.io ValidatingPolicies,
// MutatingPolicies, GeneratingPolicies, DeletingPolicies,
// ImageValidatingPolicies (each kind and its namespaced kind) and
// PolicyExceptions, in any mix. Before anything is compiled, the
// documents' bytes and rules (the validations of a ValidatingPolicy or an
// ImageValidatingPolicy, the mutations of a MutatingPolicy, the
// generations of a GeneratingPolicy, the conditions of a DeletingPolicy)
// are checked against the request limits (s.limits).
func (s *Store) inline(ctx context.Context, docs [][]byte) (*inlinePolicies, error) {
	const field = "inline_policies.documents"
	size := 0
	for _, d := range docs {
		size += len(d)
	}
	if size > s.limits.bytes {
		return nil, &limitError{field: field, description: fmt.Sprintf(
			"%d bytes of inline policies; the server compiles at most %d bytes of policies per request", size, s.limits.bytes)}
	}
	// A document not cached is decoded first, to count its rules.
	got := make([]*compiled, len(docs))
	todo := make([]*inlineDocument, len(docs))
	keys := make([]cacheKey, len(docs))
	rules := 0
	for i, d := range docs {
		sum := sha256.Sum256(d)
		keys[i] = cacheKey{identity: "inline", hash: hex.EncodeToString(sum[:])}
		if v, ok := s.inlineCache.peek(keys[i]); ok {
			got[i] = v
			rules += v.rules
			continue
		}
		todo[i] = decodeInline(fmt.Sprintf("%s[%d]", field, i), d)
		rules += todo[i].rules
	}
	if rules > s.limits.rules {
		return nil, &limitError{field: field, description: fmt.Sprintf(
			"%d rules in the inline policies; the server compiles at most %d rules per request", rules, s.limits.rules)}
	}
	out := &inlinePolicies{}
	var violations []*verdictv1.FieldViolation
	for i := range docs {
		v := got[i]
		if p := todo[i]; p != nil {
			var err error
			if v, err = s.inlineCache.get(ctx, keys[i], p.compile); err != nil {
				return nil, err
			}
		}
		docField := fmt.Sprintf("%s[%d]", field, i)
		var lim *limitError
		if errors.As(v.err, &lim) {
			return nil, &limitError{field: docField, description: lim.description}
		}
		if v.err != nil {
			for _, e := range policyErrors(v.err) {
				f := docField
				if e.Path != "" {
					f += "." + e.Path
				}
				violations = append(violations, &verdictv1.FieldViolation{Field: f, Description: e.Message, Reason: string(e.Code)})
			}
			continue
		}
		out.policies = append(out.policies, v.policies...)
		out.exceptions = append(out.exceptions, v.exceptions...)
		out.celExceptions = append(out.celExceptions, v.celExceptions...)
	}
	if len(violations) > 0 {
		return nil, &verdictv1.ValidationError{Violations: violations}
	}
	return out, nil
}

// inlineDocument is an inline document decoded: its objects in order,
// each one kind, and the rules of its policies as written (a
// ValidatingPolicy's validations, a MutatingPolicy's mutations, and so
// on: see inline).
type inlineDocument struct {
	objects []inlineObject
	rules   int
	err     error
}

// inlineObject is one decoded object of an inline document; one field is
// set.
type inlineObject struct {
	policy       *kyverno.Document
	validating   *vpol.Document
	mutating     *mpol.Document
	generating   *gpol.Document
	deleting     *dpol.Document
	imageValid   *ivpol.Document
	exception    *kyverno.PolicyException
	celException *vpol.ExceptionDocument
}

// decodeInline splits an inline document into its objects and decodes
// each with the decoder of its kind. An object of another kind is what
// kyverno.DecodePolicies makes of it: ignored when it is not a Kubernetes
// object or of an unknown group and version, an unsupported-kind error
// otherwise. Every object's problems are reported.
func decodeInline(source string, data []byte) *inlineDocument {
	d := &inlineDocument{}
	objs, err := kyverno.SplitDocuments(source, data)
	if err != nil {
		d.err = err
		return d
	}
	var errs []error
	for i, o := range objs {
		apiVersion, _ := o.Value["apiVersion"].(string)
		kind, _ := o.Value["kind"].(string)
		group, _, _ := strings.Cut(apiVersion, "/")
		var obj inlineObject
		var err error
		switch {
		case vpol.IsPolicy(apiVersion, kind):
			obj.validating, err = vpol.DecodePolicy(o.Value)
			if err == nil {
				d.rules += len(obj.validating.Spec.Validations)
			}
		case mpol.Policies.IsPolicy(apiVersion, kind):
			obj.mutating, err = mpol.Policies.DecodePolicy(o.Value)
			if err == nil {
				d.rules += len(obj.mutating.Spec.Mutations)
			}
		case gpol.Policies.IsPolicy(apiVersion, kind):
			obj.generating, err = gpol.Policies.DecodePolicy(o.Value)
			if err == nil {
				d.rules += len(obj.generating.Spec.Generation)
			}
		case dpol.Policies.IsPolicy(apiVersion, kind):
			obj.deleting, err = dpol.Policies.DecodePolicy(o.Value)
			if err == nil {
				d.rules += len(obj.deleting.Spec.Conditions)
			}
		case ivpol.Policies.IsPolicy(apiVersion, kind):
			obj.imageValid, err = ivpol.Policies.DecodePolicy(o.Value)
			if err == nil {
				d.rules += len(obj.imageValid.Spec.Validations)
			}
		case vpol.IsException(apiVersion, kind):
			obj.celException, err = vpol.DecodeException(o.Value)
		case group == "kyverno.io" && kind == kindPolicyException:
			var exs []*kyverno.PolicyException
			if exs, err = decodeInlineObject(source, o, kyverno.DecodeExceptions); err == nil && len(exs) == 1 {
				obj.exception = exs[0]
			}
		default:
			var ps []*kyverno.Document
			if ps, err = decodeInlineObject(source, o, kyverno.DecodePolicies); err == nil && len(ps) == 1 {
				obj.policy = ps[0]
				d.rules += len(obj.policy.Spec.Rules)
			}
		}
		if err != nil {
			if _, wrapped := errors.AsType[*kyverno.DocumentError](err); !wrapped {
				err = kyverno.NewDocumentError(source, i+1, o.Line, err)
			}
			errs = append(errs, err)
			continue
		}
		if obj != (inlineObject{}) {
			d.objects = append(d.objects, obj)
		}
	}
	d.err = errors.Join(errs...)
	return d
}

// decodeInlineObject decodes one object, as JSON, with a decoder of documents.
func decodeInlineObject[T any](source string, o kyverno.Object, decode func(string, []byte) ([]T, error)) ([]T, error) {
	raw, err := json.Marshal(o.Value)
	if err != nil {
		return nil, engine.Errorf(engine.CodeDecode, "", err.Error())
	}
	return decode(fmt.Sprintf("%s:%d", source, o.Line), raw)
}

// compilePolicy compiles the policy of o, of whichever kind it is.
func (o inlineObject) compilePolicy() (*policy.Policy, error) {
	switch {
	case o.validating != nil:
		return policy.CompileValidating(o.validating)
	case o.mutating != nil:
		return policy.CompileMutating(o.mutating)
	case o.generating != nil:
		return policy.CompileGenerating(o.generating)
	case o.deleting != nil:
		return policy.CompileDeleting(o.deleting)
	case o.imageValid != nil:
		return policy.CompileImageValidating(o.imageValid)
	}
	return policy.Compile(o.policy)
}

// compile compiles the decoded document: every object, every problem
// reported.
func (d *inlineDocument) compile() *compiled {
	c := &compiled{rules: d.rules, err: d.err}
	if d.err != nil {
		return c
	}
	var errs []error
	for _, o := range d.objects {
		var err error
		switch {
		case o.exception != nil:
			var e *policy.Exception
			if e, err = policy.CompileException(o.exception); err == nil {
				c.exceptions = append(c.exceptions, e)
			}
		case o.celException != nil:
			var e *vpol.Exception
			if e, err = vpol.CompileException(o.celException); err == nil {
				c.celExceptions = append(c.celExceptions, e)
			}
		default:
			var p *policy.Policy
			if p, err = o.compilePolicy(); err == nil {
				c.policies = append(c.policies, p)
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		c.policies, c.exceptions, c.celExceptions = nil, nil, nil
		c.err = errors.Join(errs...)
	}
	return c
}
