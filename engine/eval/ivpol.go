package eval

import (
	"context"

	"github.com/verdict-policy/verdict/engine/ivpol"
	"github.com/verdict-policy/verdict/engine/policy"
)

// imageValidatingPolicy appends the result of an ImageValidatingPolicy or
// NamespacedImageValidatingPolicy (engine/ivpol), its image verification
// functions answered by the engine's ImageVerifier. Enforce is set when
// spec.validationActions holds Deny. validationConfigurations.required is
// checked against the images the ImageValidatingPolicies evaluated so far
// in the request verified.
func (ev *evaluation) imageValidatingPolicy(p *policy.Policy, out []RuleResult) []RuleResult {
	if ev.ivVerifs == nil {
		ev.ivVerifs = ivpol.NewVerifications()
	}
	ip := p.ImageValidating
	o := ip.Evaluate(ev.ctx, ev.vpolInput(), ev.req.CELExceptions, ivVerifier{ev.e.images}, ev.ivVerifs)
	if o == nil {
		return out
	}
	ip.EnforceRequired(o, ev.ivVerifs)
	r := o.Result
	res := RuleResult{
		Policy:     p.Name(),
		Rule:       r.Rule,
		Type:       RuleValidation,
		Status:     Status(r.Status),
		Message:    r.Message,
		Enforce:    p.Action == policy.Enforce,
		Scored:     p.Scored,
		Category:   p.Category,
		Severity:   p.Severity,
		Properties: r.Properties,
	}
	if p.Namespaced() {
		res.PolicyNamespace = p.Namespace()
	}
	if !p.Scored && res.Status == StatusFail {
		res.Status = StatusWarn
	}
	return append(out, res)
}

// ivVerifier is the engine's ImageVerifier as ImageValidatingPolicies call
// it: a cosign attestor becomes an ImageCheck.
type ivVerifier struct{ v ImageVerifier }

func (a ivVerifier) ImageDigest(ctx context.Context, image string) (string, error) {
	return a.v.ImageDigest(ctx, image)
}

func (a ivVerifier) VerifyCosign(ctx context.Context, c ivpol.CosignCheck) ([]map[string]any, error) {
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
	if check.PublicKey == "" {
		return nil, ErrKeylessUnsupported
	}
	v, err := a.v.VerifyImage(ctx, check)
	if err != nil {
		return nil, err
	}
	return v.Statements, nil
}
