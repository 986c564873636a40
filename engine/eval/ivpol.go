package eval

import (
	"context"
	"strings"

	"github.com/verdict-policy/verdict/engine/ivpol"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// imageValidatingPolicy appends the result of an ImageValidatingPolicy or
// NamespacedImageValidatingPolicy (engine/ivpol), its image verification
// functions answered by the engine's ImageVerifier, as Kyverno's ivpol
// engine reports it: type ImageVerify, rule the policy's name (or
// "evaluation", "match"; "exception", of type Validation). Enforce is set
// when spec.validationActions holds Deny. A passing result waits for
// enforceRequired, once every policy of the request has verified what it
// verifies.
func (ev *evaluation) imageValidatingPolicy(p *policy.Policy, out []RuleResult) []RuleResult {
	if ev.ivVerifs == nil {
		ev.ivVerifs = ivpol.NewVerifications()
	}
	o := p.ImageValidating.Evaluate(ev.ctx, ev.vpolInput(), ev.req.CELExceptions, ivVerifier{ev.e.images}, ev.ivVerifs)
	if o == nil {
		return out
	}
	if o.Result.Status == vpol.StatusPass {
		ev.ivPending = append(ev.ivPending, ivPending{p: p, o: o, index: len(out)})
	}
	return append(out, ev.ivResult(p, o))
}

// ivPending is a passing ImageValidatingPolicy whose
// validationConfigurations.required is settled after every policy ran.
type ivPending struct {
	p     *policy.Policy
	o     *ivpol.Outcome
	index int // in Response.Results
}

// enforceRequired settles validationConfigurations.required of the
// passing ImageValidatingPolicies with the verifications of every policy
// of the request, as Kyverno does after evaluating them all.
func (ev *evaluation) enforceRequired(resp *Response) {
	for _, pd := range ev.ivPending {
		pd.p.ImageValidating.EnforceRequired(pd.o, ev.ivVerifs)
		if pd.o.Result.Status != vpol.StatusPass && pd.index < len(resp.Results) {
			resp.Results[pd.index] = ev.ivResult(pd.p, pd.o)
		}
	}
	ev.ivPending = nil
}

func (ev *evaluation) ivResult(p *policy.Policy, o *ivpol.Outcome) RuleResult {
	r := o.Result
	res := celResult(p, &r, RuleImageVerify, o.Path)
	res.Enforce = p.Action == policy.Enforce
	if r.Rule == ivpol.RuleException {
		res.Type = RuleValidation
	}
	if !p.Scored && res.Status == StatusFail {
		res.Status = StatusWarn
	}
	return res
}

// imageDigests applies validationConfigurations.mutateDigest of the
// ImageValidatingPolicies to obj (admission only, not in Kyverno's CLI,
// which does not run it): each matched image without a digest gets its
// digest. A policy whose digests do not all resolve gives an error result
// (rule "mutateDigest", Kyverno's "failed to update digest"); the images
// that resolved keep their digest. It returns the object after them and
// whether it changed.
func (ev *evaluation) imageDigests(policies []*policy.Policy, obj map[string]any, resp *Response) (map[string]any, bool) {
	if ev.e.kyvernoCLI {
		return obj, false
	}
	changed := false
	seen := map[string]bool{}
	for _, p := range policies {
		if p.ImageValidating == nil || !ev.admits(p) || ev.ctx.Err() != nil {
			continue
		}
		ops, err := p.ImageValidating.DigestPatches(ev.ctx, ev.vpolInput(), ev.req.CELExceptions, ivVerifier{ev.e.images})
		if err != nil {
			res := RuleResult{
				Policy: p.Name(), Rule: ivpol.RuleMutateDigest, Type: RuleImageVerify, Status: StatusError,
				Message: "failed to update digest: " + err.Error(), Enforce: p.Action == policy.Enforce,
				Scored: p.Scored, Category: p.Category, Severity: p.Severity,
			}
			if p.Namespaced() {
				res.PolicyNamespace = p.Namespace()
			}
			resp.Results = append(resp.Results, res)
		}
		for _, op := range ops {
			path, _ := op["path"].(string)
			if seen[path] {
				continue
			}
			seen[path] = true
			value, _ := op["value"].(string)
			if next, ok := setPointer(obj, strings.Split(strings.TrimPrefix(path, "/"), "/"), value).(map[string]any); ok {
				obj, changed = next, true
			}
		}
		if changed {
			ev.setObject(obj)
		}
	}
	return obj, changed
}

// ivVerifier is the engine's ImageVerifier as ImageValidatingPolicies call
// it: a cosign attestor becomes an ImageCheck.
type ivVerifier struct{ v ImageVerifier }

func (a ivVerifier) ImageDigest(ctx context.Context, image string) (string, error) {
	return a.v.ImageDigest(ctx, image)
}

func (a ivVerifier) VerifyAttestor(ctx context.Context, c ivpol.AttestorCheck) ([]map[string]any, error) {
	if n := c.Notary; n != nil {
		check := ImageCheck{Image: c.Image, Policy: c.Policy, ReferrerType: c.ReferrerType}
		if n.Certs != nil {
			check.NotaryCerts = n.Certs.Value
		}
		if n.TSACerts != nil {
			check.NotaryTSACerts = n.TSACerts.Value
		}
		v, err := a.v.VerifyImage(ctx, check)
		if err != nil {
			return nil, err
		}
		return v.Statements, nil
	}
	co := c.Cosign
	check := ImageCheck{Image: c.Image, PredicateType: c.PredicateType, Policy: c.Policy, Annotations: co.Annotations}
	if co.Key != nil {
		check.PublicKey, check.SignatureAlgorithm = co.Key.Data, co.Key.HashAlgorithm
	}
	if co.Source != nil {
		check.Repository = co.Source.Repository
	}
	if co.CTLog != nil {
		check.IgnoreTlog, check.IgnoreSCT = co.CTLog.InsecureIgnoreTlog, co.CTLog.InsecureIgnoreSCT
		check.RekorURL, check.RekorPubKey = co.CTLog.URL, co.CTLog.RekorPubKey
	}
	if co.Keyless != nil && check.PublicKey == "" {
		check.Roots = co.Keyless.Roots
		for _, id := range co.Keyless.Identities {
			check.Identities = append(check.Identities, ImageIdentity{Issuer: id.Issuer, Subject: id.Subject, IssuerRegExp: id.IssuerRegExp, SubjectRegExp: id.SubjectRegExp})
		}
	}
	if check.PublicKey == "" && len(check.Identities) == 0 {
		return nil, ErrKeylessUnsupported
	}
	v, err := a.v.VerifyImage(ctx, check)
	if err != nil {
		return nil, err
	}
	return v.Statements, nil
}
