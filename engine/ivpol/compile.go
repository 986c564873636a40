package ivpol

import (
	"fmt"

	"github.com/gobwas/glob"
	"github.com/google/cel-go/cel"
	policiesv1 "github.com/kyverno/api/api/policies.kyverno.io/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// Policy is a compiled ImageValidatingPolicy or
// NamespacedImageValidatingPolicy. It is immutable and safe for
// concurrent use.
type Policy struct {
	doc *Document
	ref kyvernocel.PolicyRef

	// Kind, Name and Namespace (of a namespaced policy) identify it.
	Kind, Name, Namespace string
	// Hash is the SHA-256 of the policy's kind, name, namespace,
	// annotations and spec, hex encoded (vpol.Hash).
	Hash string
	// Mode is spec.evaluation.mode: vpol.ModeKubernetes (default) or
	// vpol.ModeJSON.
	Mode string
	// Admission and Background are spec.evaluation.admission.enabled and
	// spec.evaluation.background.enabled (default true).
	Admission, Background bool
	// Actions are spec.validationActions (default [Deny]).
	Actions []string
	// FailurePolicyIgnore is spec.failurePolicy: Ignore (default Fail).
	FailurePolicyIgnore bool
	// MutateDigest, VerifyDigest and Required are
	// spec.validationConfigurations (defaults true, true, true).
	MutateDigest, VerifyDigest, Required bool

	imageRefs    []imageRef
	attestations map[string]policiesv1.Attestation
	variants     []*variant
}

// variant is the policy as written, or one of its autogen variants for
// pod controllers (autogen.go), which Kyverno evaluates as a policy of its
// own with the policy's name.
type variant struct {
	// autogen is "" for the policy as written, or the autogen
	// configuration (vpol.AutogenDefaults, vpol.AutogenCronJobs).
	autogen string
	prefix  string // of the paths of its fields

	constraints     *admissionregistrationv1.MatchResources
	match           *vpol.Matcher
	matchConditions []cel.Program
	extractors      []*expr // spec.images, in order
	variables       []*expr
	attestors       []*attestor
	validations     []*validation
	auditAnnots     vpol.AuditAnnotations
}

type expr struct {
	name string
	prog cel.Program
}

type validation struct {
	prog        cel.Program
	message     string
	messageExpr cel.Program
}

// imageRef is one of spec.matchImageReferences: a glob or a bool
// expression of `ref`.
type imageRef struct {
	glob glob.Glob
	prog cel.Program
}

// attestor is one of spec.attestors, with its expressions compiled.
type attestor struct {
	spec policiesv1.Attestor
	// key, cert, certChain, notaryCerts, notaryTSACerts and trustedRoot
	// are the expressions of the fields that have one.
	key, cert, certChain, notaryCerts, notaryTSACerts, trustedRoot cel.Program
}

// MatchConstraints returns the spec.matchConstraints of the policy and of
// its autogen variants (none in JSON mode). Callers must not modify them.
func (p *Policy) MatchConstraints() []*admissionregistrationv1.MatchResources {
	var out []*admissionregistrationv1.MatchResources
	for _, v := range p.variants {
		if v.match != nil && v.constraints != nil {
			out = append(out, v.constraints)
		}
	}
	return out
}

// Document returns the policy as written. Callers must not modify it.
func (p *Policy) Document() *Document { return p.doc }

// Compile checks doc and compiles it as Kyverno's ivpol compiler does:
// match conditions, matchImageReferences (globs and bool expressions of
// `ref`), spec.images (each a list of strings), variables, the attestors'
// expressions (strings), validations and audit annotations, in the
// policy's image CEL environment (kyvernocel.NewImageEnv). It returns
// every problem found, as engine.Errors sorted by path (Code
// engine.CodeInvalidPolicy).
func Compile(doc *Document) (*Policy, error) {
	var c compiler
	return vpol.Compiled(c.policy(doc), &c.Problems, doc.Kind, doc.Metadata.Name)
}

type compiler struct {
	vpol.Problems
}

func (c *compiler) policy(doc *Document) *Policy {
	spec := &doc.Spec
	vc := spec.ValidationConfigurations
	p := &Policy{
		doc:          doc,
		Mode:         string(spec.EvaluationMode()),
		Admission:    spec.AdmissionEnabled(),
		Background:   spec.BackgroundEnabled(),
		MutateDigest: vc.MutateDigest == nil || *vc.MutateDigest,
		VerifyDigest: vc.VerifyDigest == nil || *vc.VerifyDigest,
		Required:     vc.Required == nil || *vc.Required,
	}
	p.Kind, p.Name, p.Namespace, p.Hash = doc.Identity()
	p.ref = kyvernocel.PolicyRef{Kind: p.Kind, Namespace: p.Namespace, Name: p.Name}
	c.Identity(doc.Kind, &doc.Metadata, doc.Namespaced())
	switch p.Mode {
	case vpol.ModeKubernetes:
		c.MatchConstraints(spec.MatchConstraints)
	case vpol.ModeJSON:
	default:
		c.Errs = append(c.Errs, engine.Errorf(engine.CodeUnsupported, "spec.evaluation.mode", fmt.Sprintf("evaluation mode %q is not supported (want Kubernetes or JSON)", p.Mode)))
	}
	p.Actions = c.Actions(spec.ValidationActions())
	p.FailurePolicyIgnore = c.FailurePolicy(spec.FailurePolicy)

	env, err := kyvernocel.NewImageEnv(p.Namespace)
	if err != nil {
		c.Wrap("spec", err)
		return p
	}
	c.imageReferences(p, spec.MatchImageReferences)
	p.attestations = map[string]policiesv1.Attestation{}
	for i, a := range spec.Attestations {
		path := fmt.Sprintf("spec.attestations[%d]", i)
		switch {
		case a.Name == "":
			c.Invalid(path+".name", "an attestation needs a name")
		case a.InToto == nil && a.Referrer == nil:
			c.Invalid(path, "attestation %q needs intoto or referrer", a.Name)
		case a.InToto != nil && a.Referrer != nil:
			c.Invalid(path, "attestation %q has both intoto and referrer", a.Name)
		case a.InToto != nil && a.InToto.Type == "":
			c.Invalid(path+".intoto.type", "an in-toto attestation needs a type")
		case a.Referrer != nil && a.Referrer.Type == "":
			c.Invalid(path+".referrer.type", "a referrer attestation needs a type")
		}
		p.attestations[a.Name] = a
	}
	p.variants = append(p.variants, c.variant(env, p, spec, "", ""))
	if len(c.Errs) > 0 {
		return p // the variants would repeat the policy's problems
	}
	gen, err := autogen(spec)
	if err != nil {
		c.Wrap("spec.autogen", err)
	}
	for _, g := range gen {
		p.variants = append(p.variants, c.variant(env, p, g.spec, g.config, "autogen["+g.config+"]."))
	}
	return p
}

// variant compiles one spec (the policy's, or an autogen variant's) as
// Kyverno's ivpol compiler does: match conditions, spec.images,
// variables (each registered with its type for the expressions after
// it), attestors, validations and audit annotations.
func (c *compiler) variant(env *kyvernocel.Env, p *Policy, spec *policiesv1.ImageValidatingPolicySpec, config, prefix string) *variant {
	v := &variant{autogen: config, prefix: prefix, constraints: spec.MatchConstraints}
	if p.Mode == vpol.ModeKubernetes {
		v.match = vpol.CompileMatcher(spec.MatchConstraints)
	}
	for i, m := range spec.MatchConditions {
		path := fmt.Sprintf(prefix+"spec.matchConditions[%d]", i)
		if m.Name == "" {
			c.Invalid(path+".name", "a match condition needs a name")
		}
		v.matchConditions = append(v.matchConditions, c.expression(env, m.Expression, path+".expression", cel.BoolType))
	}
	seen := map[string]bool{}
	for i, x := range spec.ImageExtractors {
		path := fmt.Sprintf(prefix+"spec.images[%d]", i)
		if x.Name == "" {
			c.Invalid(path+".name", "an image extractor needs a name")
		} else if seen[x.Name] {
			c.Invalid(path+".name", "duplicate image extractor name %q", x.Name)
		}
		seen[x.Name] = true
		prog := c.expression(env, x.Expression, path+".expression", cel.ListType(cel.StringType), cel.DynType, cel.ListType(cel.DynType))
		v.extractors = append(v.extractors, &expr{name: x.Name, prog: prog})
	}
	for i, vr := range spec.Variables {
		path := fmt.Sprintf(prefix+"spec.variables[%d]", i)
		if vr.Name == "" {
			c.Invalid(path+".name", "a variable needs a name")
		}
		var prog cel.Program
		t := cel.DynType
		if vr.Expression == "" {
			c.Invalid(path+".expression", "an expression is required")
		} else {
			var cerr *engine.Error
			if prog, t, cerr = vpol.CompileExpression(env, vr.Expression, path+".expression"); cerr != nil {
				c.Errs = append(c.Errs, cerr)
			}
		}
		env.RegisterVariable(vr.Name, t)
		v.variables = append(v.variables, &expr{name: vr.Name, prog: prog})
	}
	c.compileAttestors(env, v, spec.Attestors)
	for i, val := range spec.Validations {
		path := fmt.Sprintf(prefix+"spec.validations[%d]", i)
		cv := &validation{message: val.Message, prog: c.expression(env, val.Expression, path+".expression", cel.BoolType)}
		if val.MessageExpression != "" {
			cv.messageExpr = c.expression(env, val.MessageExpression, path+".messageExpression", cel.StringType)
		}
		v.validations = append(v.validations, cv)
	}
	for i, a := range spec.AuditAnnotations {
		path := fmt.Sprintf(prefix+"spec.auditAnnotations[%d]", i)
		if a.Key == "" {
			c.Invalid(path+".key", "an audit annotation needs a key")
		}
		v.auditAnnots.Add(a.Key, c.expression(env, a.ValueExpression, path+".valueExpression", cel.StringType, cel.NullType))
	}
	return v
}

// imageReferences compiles spec.matchImageReferences as Kyverno does: a
// glob (github.com/gobwas/glob, as Kyverno) or a bool expression of `ref`
// in the image library's environment.
func (c *compiler) imageReferences(p *Policy, refs []policiesv1.MatchImageReference) {
	for i, r := range refs {
		path := fmt.Sprintf("spec.matchImageReferences[%d]", i)
		switch {
		case r.Glob != "":
			g, err := glob.Compile(r.Glob)
			if err != nil {
				c.Invalid(path+".glob", "%v", err)
				continue
			}
			p.imageRefs = append(p.imageRefs, imageRef{glob: g})
		case r.Expression != "":
			env, err := imageRefEnv()
			if err != nil {
				c.Invalid(path+".expression", "%v", err)
				continue
			}
			ast, iss := env.Compile(r.Expression)
			if iss.Err() != nil {
				c.Invalid(path+".expression", "%v", iss.Err())
				continue
			}
			if !ast.OutputType().IsExactType(cel.BoolType) {
				c.Invalid(path+".expression", "output is expected to be of type bool")
				continue
			}
			prog, err := env.Program(ast, cel.CostLimit(kyvernocel.CostLimit))
			if err != nil {
				c.Invalid(path+".expression", "%v", err)
				continue
			}
			p.imageRefs = append(p.imageRefs, imageRef{prog: prog})
		default:
			c.Invalid(path, "either glob or expression must be set")
		}
	}
}

// compileAttestors checks each attestor names a way to verify (a cosign
// key, keyless identities or certificate; notary certificates) and
// compiles the expressions of its fields (each a string).
func (c *compiler) compileAttestors(env *kyvernocel.Env, v *variant, list []policiesv1.Attestor) {
	seen := map[string]bool{}
	for i, a := range list {
		path := fmt.Sprintf(v.prefix+"spec.attestors[%d]", i)
		at := &attestor{spec: a}
		if a.Name == "" {
			c.Invalid(path+".name", "an attestor needs a name")
		} else if seen[a.Name] {
			c.Invalid(path+".name", "duplicate attestor name %q", a.Name)
		}
		seen[a.Name] = true
		str := func(text, field string) cel.Program {
			if text == "" {
				return nil
			}
			return c.expression(env, text, path+field, cel.StringType, cel.DynType)
		}
		switch {
		case a.Cosign != nil && a.Notary != nil:
			c.Invalid(path, "attestor %q has both cosign and notary", a.Name)
		case a.Cosign != nil:
			co := a.Cosign
			hasKey := co.Key != nil && (co.Key.Data != "" || co.Key.KMS != "" || co.Key.Expression != "")
			hasKeyless := co.Keyless != nil && len(co.Keyless.Identities) > 0
			hasCert := co.Certificate != nil && co.Certificate.Certificate != nil
			if !hasKey && !hasKeyless && !hasCert {
				c.Invalid(path+".cosign", "cosign attestor %q needs a key (data, kms or expression), keyless identities or a certificate", a.Name)
			}
			if co.Keyless != nil {
				for j, id := range co.Keyless.Identities {
					if id.Subject == "" && id.SubjectRegExp == "" && id.SubjectExpression == "" {
						c.Invalid(fmt.Sprintf("%s.cosign.keyless.identities[%d]", path, j), "a keyless identity needs a subject or subjectRegExp")
					}
					if id.Issuer == "" && id.IssuerRegExp == "" {
						c.Invalid(fmt.Sprintf("%s.cosign.keyless.identities[%d]", path, j), "a keyless identity needs an issuer or issuerRegExp")
					}
				}
			}
			if co.Key != nil {
				at.key = str(co.Key.Expression, ".cosign.key.expression")
			}
			if co.Certificate != nil {
				if co.Certificate.Certificate != nil {
					at.cert = str(co.Certificate.Certificate.Expression, ".cosign.certificate.cert.expression")
				}
				if co.Certificate.CertificateChain != nil {
					at.certChain = str(co.Certificate.CertificateChain.Expression, ".cosign.certificate.certChain.expression")
				}
			}
			if co.TrustedRoot != nil {
				at.trustedRoot = str(co.TrustedRoot.Expression, ".cosign.trustedRoot.expression")
			}
		case a.Notary != nil:
			if a.Notary.Certs == nil || (a.Notary.Certs.Value == "" && a.Notary.Certs.Expression == "") {
				c.Invalid(path+".notary.certs", "notary attestor %q needs certificates", a.Name)
			} else {
				at.notaryCerts = str(a.Notary.Certs.Expression, ".notary.certs.expression")
			}
			if a.Notary.TSACerts != nil {
				at.notaryTSACerts = str(a.Notary.TSACerts.Expression, ".notary.tsaCerts.expression")
			}
		default:
			c.Invalid(path, "attestor %q needs cosign or notary", a.Name)
		}
		v.attestors = append(v.attestors, at)
	}
}

func (c *compiler) expression(env *kyvernocel.Env, text, path string, want ...*cel.Type) cel.Program {
	if text == "" {
		c.Invalid(path, "an expression is required")
		return nil
	}
	prog, _, err := vpol.CompileExpression(env, text, path, want...)
	if err != nil {
		c.Errs = append(c.Errs, err)
	}
	return prog
}
