package ivpol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	policiesv1 "github.com/kyverno/api/api/policies.kyverno.io/v1"
	"k8s.io/apiserver/pkg/cel/lazy"

	"github.com/verdict-policy/verdict/engine/internal/imageref"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// Verifier checks images in registries: the host's (engine/eval adapts
// its ImageVerifier), so that this package does no I/O.
type Verifier interface {
	// ImageDigest resolves image to its manifest digest.
	ImageDigest(ctx context.Context, image string) (string, error)
	// VerifyAttestor checks the signatures of c.Image against c.Cosign
	// or c.Notary (their expressions resolved) or, with c.PredicateType
	// set, its in-toto attestations of that type, whose statements it
	// returns. An error means "not verified", but for one wrapping
	// ErrAttestorUnsupported.
	VerifyAttestor(ctx context.Context, c AttestorCheck) ([]map[string]any, error)
}

// AttestorCheck is one attestor applied to one image.
type AttestorCheck struct {
	Image string
	// Cosign or Notary is the attestor's configuration, expressions
	// resolved (key.data, certificate values, notary certs).
	Cosign *policiesv1.Cosign
	Notary *policiesv1.Notary
	// PredicateType is the in-toto type of a cosign attestation check,
	// ReferrerType the artifact type of a notary attestation check (the
	// OCI referrers of the image); both are "" for signatures.
	PredicateType, ReferrerType string
	// Policy is the policy's Hash, for the verifier's cache.
	Policy string
}

// MaxVerifierCalls bounds the calls one evaluation of a policy makes to
// the Verifier (a digest, a signature or attestation check each): an
// expression that calls the image functions over a long list fails with
// ErrTooManyVerifierCalls instead of reaching the registry without end.
const MaxVerifierCalls = 256

// ErrTooManyVerifierCalls is (wrapped) the error of the call past
// MaxVerifierCalls.
var ErrTooManyVerifierCalls = fmt.Errorf("more than %d image verification calls in one evaluation (ivpol.MaxVerifierCalls)", MaxVerifierCalls)

// ErrAttestorUnsupported is (wrapped) the error of an attestor this engine
// cannot verify with: the evaluation is an error, not an unverified
// image.
var ErrAttestorUnsupported = errors.New("attestor not supported")

// Verifications are the images the ImageValidatingPolicies of one request
// verified, for validationConfigurations.required (Kyverno's
// ImageVerificationResults): create one per request.
type Verifications struct {
	status map[string]bool // image: verified (false: attempted, not verified)
}

// NewVerifications returns an empty record.
func NewVerifications() *Verifications { return &Verifications{status: map[string]bool{}} }

func (v *Verifications) record(image string, verified bool) {
	if v == nil {
		return
	}
	v.status[image] = v.status[image] || verified
}

// Rule names of results, as Kyverno's ivpol engine names them: the
// policy's name for pass, fail and the error of a validation's value,
// else one of these.
const (
	// RuleEvaluation is the error of an evaluation that could not finish
	// (an expression, the images, the registry).
	RuleEvaluation = "evaluation"
	// RuleMatch is the error of matchConstraints.
	RuleMatch = "match"
	// RuleException is the skip of a resource a PolicyException exempts.
	RuleException = "exception"
	// RuleMutateDigest is the error of mutateDigest.
	RuleMutateDigest = "mutateDigest"
)

// Outcome is the result of a policy on a resource, and the images it
// matched (for EnforceRequired).
type Outcome struct {
	// Result has Kyverno's rule name (the policy's name, or RuleEvaluation,
	// RuleMatch, RuleException), status and message.
	Result vpol.Result
	// Path is, for an error, the field of the policy that failed ("" when
	// none did: the registry, the request).
	Path string
	// Images are the images matchImageReferences selected.
	Images []string
}

func (p *Policy) outcome(status vpol.Status, msg string, props map[string]string, images []string) *Outcome {
	return &Outcome{Result: vpol.Result{Rule: p.Name, Status: status, Message: msg, Properties: props}, Images: images}
}

// evaluationError is Kyverno's "failed to evaluate policy" error, with the
// field that failed.
func evaluationError(path string, err error) *Outcome {
	return &Outcome{Result: vpol.Result{Rule: RuleEvaluation, Status: vpol.StatusError, Message: "failed to evaluate policy: " + err.Error()}, Path: path}
}

// Evaluate runs the policy on a request as Kyverno's ivpol engine does:
// matchConstraints (Kubernetes mode), match conditions (failurePolicy
// Ignore turns their errors into no match), PolicyExceptions, the images
// (the default extractors of pods, pod controllers and cron jobs, then
// spec.images) filtered by matchImageReferences, verifyDigest, the image
// data of each (its digest, through v), then the validations with the
// image verification functions answered by v. It returns nil when the
// policy does not apply. verifs collects the verifications of the
// request (nil: none kept).
func (p *Policy) Evaluate(ctx context.Context, in *vpol.Input, exceptions []*vpol.Exception, v Verifier, verifs *Verifications) *Outcome {
	// Kyverno evaluates each variant as a policy of its own and keeps the
	// last response of the name: the policy's, or that of the variant of
	// the resource's controller.
	var out *Outcome
	for _, vr := range p.variants {
		if o := p.evaluate(ctx, vr, in, exceptions, v, verifs); o != nil {
			out = o
		}
	}
	return out
}

func (p *Policy) evaluate(ctx context.Context, vr *variant, in *vpol.Input, exceptions []*vpol.Exception, v Verifier, verifs *Verifications) *Outcome {
	act, ok, res := p.prepare(ctx, vr, in, exceptions)
	if !ok {
		return res
	}
	vars := kyvernocel.NewVariables()
	act.Variables = vars
	for _, e := range vr.variables {
		prog := e.prog
		vars.Append(e.name, func(*lazy.MapValue) ref.Val {
			out, _, err := prog.ContextEval(ctx, act)
			if out != nil {
				return out
			}
			if err != nil {
				return types.WrapErr(err)
			}
			return nil
		})
	}
	images, all, path, err := p.images(ctx, vr, in, act)
	if err != nil {
		return evaluationError(path, err)
	}
	if p.VerifyDigest {
		for _, img := range all {
			if !strings.Contains(img, "@") {
				return p.outcome(vpol.StatusFail, fmt.Sprintf("image %s does not have a digest", img), nil, all)
			}
		}
	}
	f := &functions{ctx: ctx, p: p, v: v, verifs: verifs, payloads: map[string]any{}}
	// Kyverno loads the data of every image before the validations.
	for _, img := range all {
		if err := f.digest(img); err != nil {
			return evaluationError("", err)
		}
	}
	act.Images = images
	names := make(map[string]string, len(p.attestations))
	for n := range p.attestations {
		names[n] = n
	}
	act.Attestations = names
	attestors := lazy.NewMapValue(cel.DynType)
	for _, a := range vr.attestors {
		a := a
		attestors.Append(a.spec.Name, func(*lazy.MapValue) ref.Val {
			r, err := a.resolve(ctx, act)
			if err != nil {
				return types.WrapErr(err)
			}
			return types.DefaultTypeAdapter.NativeToValue(r)
		})
	}
	act.Attestors = attestors
	act.ImageFunctions = f

	for i, val := range vr.validations {
		path := fmt.Sprintf(vr.prefix+"spec.validations[%d].expression", i)
		out, _, err := val.prog.ContextEval(ctx, act)
		if err != nil {
			return evaluationError(path, err)
		}
		b, ok := out.Value().(bool)
		if !ok {
			o := p.outcome(vpol.StatusError, fmt.Sprintf("error: %s is not a bool", out.Type().TypeName()), nil, all)
			o.Path = path
			return o
		}
		if b {
			continue
		}
		msg := val.message
		if val.messageExpr != nil {
			if mo, _, err := val.messageExpr.ContextEval(ctx, act); err != nil {
				msg = fmt.Sprintf("failed to evaluate message expression: %s", err)
			} else if s, ok := mo.Value().(string); ok {
				msg = s
			} else {
				msg = fmt.Sprintf("failed to convert message expression to string: %s", mo.Type().TypeName())
			}
		}
		if msg == "" {
			msg = fmt.Sprintf("CEL expression validation failed at index %d", i)
		}
		props, path, err := vr.auditAnnotations(ctx, act)
		if err != nil {
			return evaluationError(path, err)
		}
		return p.outcome(vpol.StatusFail, msg, props, all)
	}
	props, path, err := vr.auditAnnotations(ctx, act)
	if err != nil {
		return evaluationError(path, err)
	}
	return p.outcome(vpol.StatusPass, "success", props, all)
}

// EnforceRequired turns a passing outcome into a fail when
// validationConfigurations.required holds and one of its images was not
// verified by a policy of the request, as Kyverno does once every policy
// of the request has run.
func (p *Policy) EnforceRequired(o *Outcome, verifs *Verifications) {
	if o == nil || !p.Required || o.Result.Status != vpol.StatusPass || verifs == nil {
		return
	}
	for _, img := range o.Images {
		verified, attempted := verifs.status[img]
		if verified {
			continue
		}
		o.Result.Status = vpol.StatusFail
		if attempted {
			o.Result.Message = fmt.Sprintf("image %s failed signature or attestation verification", img)
		} else {
			o.Result.Message = fmt.Sprintf("image %s is not verified: no policy performed a signature or attestation check on it", img)
		}
		return
	}
}

// prepare matches the request and builds the activation: ok is false
// when the policy does not apply (res nil) or an exception or error
// decided (res set).
func (p *Policy) prepare(ctx context.Context, vr *variant, in *vpol.Input, exceptions []*vpol.Exception) (*kyvernocel.Activation, bool, *Outcome) {
	act := in.Activation(ctx)
	act.SetPolicy(&p.ref)
	if p.Mode == vpol.ModeJSON {
		act.Object, act.OldObject, act.Request, act.NamespaceObject = in.JSON(), nil, nil, nil
	} else {
		ok, err := vr.match.Matches(in)
		if err != nil {
			return nil, false, &Outcome{Result: vpol.Result{Rule: RuleMatch, Status: vpol.StatusError, Message: "failed to execute matching: " + err.Error()}, Path: vr.prefix + "spec.matchConstraints"}
		}
		if !ok {
			return nil, false, nil
		}
	}
	ok, err := vpol.MatchConditions(ctx, act, vr.matchConditions, p.FailurePolicyIgnore)
	if err != nil {
		return nil, false, evaluationError(vr.prefix+"spec.matchConditions", err)
	}
	if !ok {
		return nil, false, nil
	}
	var matched []*vpol.Exception
	for _, e := range exceptions {
		if !e.AppliesTo(p.Kind, p.Name) || e.Expired(in.Now()) {
			continue
		}
		ok, err := e.Matches(ctx, act)
		if err != nil {
			return nil, false, evaluationError("", fmt.Errorf("exception %s: %w", e.Key, err))
		}
		if ok {
			matched = append(matched, e)
		}
	}
	if len(matched) > 0 {
		// Kyverno's ivpol engine skips, whatever the exceptions'
		// reportResult.
		keys := make([]string, len(matched))
		for i, e := range matched {
			keys[i] = e.Key
		}
		return nil, false, &Outcome{Result: vpol.Result{Rule: RuleException, Status: vpol.StatusSkip, Message: "rule is skipped due to policy exception: " + strings.Join(keys, ", "), Exceptions: keys}}
	}
	return act, true, nil
}

// The default image extractors, by resource (Kyverno's
// getImageExtractorsFromGVR): the path of the pod spec in the object.
var podSpecPaths = map[string][]string{
	"/v1/pods":             {"spec"},
	"batch/v1/jobs":        {"spec", "template", "spec"},
	"apps/v1/deployments":  {"spec", "template", "spec"},
	"apps/v1/statefulsets": {"spec", "template", "spec"},
	"apps/v1/daemonsets":   {"spec", "template", "spec"},
	"apps/v1/replicasets":  {"spec", "template", "spec"},
	"batch/v1/cronjobs":    {"spec", "jobTemplate", "spec", "template", "spec"},
}

var containerLists = []string{"containers", "initContainers", "ephemeralContainers"}

// podSpec returns the pod spec of the request's object and its JSON
// pointer, for the resources of the default extractors.
func podSpec(in *vpol.Input, obj any) (map[string]any, string, bool) {
	g, v, r := in.Resource()
	path, ok := podSpecPaths[g+"/"+v+"/"+r]
	if !ok {
		return nil, "", false
	}
	cur, _ := obj.(map[string]any)
	for _, k := range path {
		cur, _ = cur[k].(map[string]any)
	}
	return cur, "/" + strings.Join(path, "/"), true
}

// images extracts the images: by extractor name, those
// matchImageReferences selects (every extractor has a list, maybe
// empty), and all of them in order.
func (p *Policy) images(ctx context.Context, vr *variant, in *vpol.Input, act *kyvernocel.Activation) (map[string][]string, []string, string, error) {
	byName := map[string][]string{}
	var all []string
	add := func(name string, imgs []string) error {
		list := []string{}
		for _, img := range imgs {
			ok, err := p.matchImage(img)
			if err != nil {
				return err
			}
			if ok {
				list = append(list, img)
				all = append(all, img)
			}
		}
		byName[name] = list
		return nil
	}
	if p.Mode != vpol.ModeJSON {
		obj := act.Object
		if obj == nil {
			obj = act.OldObject
		}
		if spec, _, ok := podSpec(in, obj); ok {
			for _, l := range containerLists {
				var imgs []string
				cs, _ := spec[l].([]any)
				for _, c := range cs {
					if m, ok := c.(map[string]any); ok {
						if s, ok := m["image"].(string); ok {
							imgs = append(imgs, s)
						}
					}
				}
				if err := add(l, imgs); err != nil {
					return nil, nil, "spec.matchImageReferences", err
				}
			}
		}
	}
	for i, x := range vr.extractors {
		path := fmt.Sprintf(vr.prefix+"spec.images[%d].expression", i)
		out, _, err := x.prog.ContextEval(ctx, act)
		if err != nil {
			return nil, nil, path, err
		}
		native, err := out.ConvertToNative(reflect.TypeFor[[]string]())
		if err != nil {
			return nil, nil, path, fmt.Errorf("the images of %q must be a list of strings: %w", x.name, err)
		}
		if err := add(x.name, native.([]string)); err != nil {
			return nil, nil, "spec.matchImageReferences", err
		}
	}
	return byName, all, "", nil
}

// auditAnnotations evaluates the variant's audit annotations; a failure
// comes with the path of its valueExpression.
func (vr *variant) auditAnnotations(ctx context.Context, act *kyvernocel.Activation) (map[string]string, string, error) {
	props, i, err := vr.auditAnnots.Eval(ctx, act, vpol.KeySingleQuoted)
	if err != nil {
		return nil, fmt.Sprintf(vr.prefix+"spec.auditAnnotations[%d].valueExpression", i), err
	}
	return props, "", nil
}

// resolve returns the attestor with the values of its expressions, as a
// JSON map (the value of attestors.<name>).
func (a *attestor) resolve(ctx context.Context, act *kyvernocel.Activation) (map[string]any, error) {
	at := a.spec
	str := func(prog cel.Program, field string) (string, error) {
		out, _, err := prog.ContextEval(ctx, act)
		if err != nil {
			return "", fmt.Errorf("failed to evaluate %s of attestor %s: %w", field, at.Name, err)
		}
		s, ok := out.Value().(string)
		if !ok {
			return "", fmt.Errorf("%s of attestor %s is not a string", field, at.Name)
		}
		return s, nil
	}
	// set replaces *field with a copy whose Value is what prog gives, when
	// the field has an expression (prog set).
	set := func(field **policiesv1.StringOrExpression, prog cel.Program, name string) error {
		if prog == nil {
			return nil
		}
		v := **field
		var err error
		if v.Value, err = str(prog, name); err != nil {
			return err
		}
		*field = &v
		return nil
	}
	var err error
	if at.Cosign != nil {
		co := *at.Cosign
		at.Cosign = &co
		if a.key != nil {
			k := *co.Key
			if k.Data, err = str(a.key, "cosign.key.expression"); err != nil {
				return nil, err
			}
			co.Key = &k
		}
		if a.cert != nil || a.certChain != nil {
			cert := *co.Certificate
			if err := set(&cert.Certificate, a.cert, "cosign.certificate.cert.expression"); err != nil {
				return nil, err
			}
			if err := set(&cert.CertificateChain, a.certChain, "cosign.certificate.certChain.expression"); err != nil {
				return nil, err
			}
			co.Certificate = &cert
		}
		if err := set(&co.TrustedRoot, a.trustedRoot, "cosign.trustedRoot.expression"); err != nil {
			return nil, err
		}
	}
	if at.Notary != nil && (a.notaryCerts != nil || a.notaryTSACerts != nil) {
		n := *at.Notary
		at.Notary = &n
		if err := set(&n.Certs, a.notaryCerts, "notary.certs.expression"); err != nil {
			return nil, err
		}
		if err := set(&n.TSACerts, a.notaryTSACerts, "notary.tsaCerts.expression"); err != nil {
			return nil, err
		}
	}
	b, err := json.Marshal(at)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	err = json.Unmarshal(b, &m)
	return m, err
}

// functions answers the image verification functions of one evaluation
// (Kyverno's ivfuncs).
type functions struct {
	ctx      context.Context
	p        *Policy
	v        Verifier
	verifs   *Verifications
	payloads map[string]any // image + "\x00" + attestation: verified payload
	calls    int            // to v, at most MaxVerifierCalls
}

// call counts one call to the Verifier.
func (f *functions) call() error {
	if f.calls >= MaxVerifierCalls {
		return ErrTooManyVerifierCalls
	}
	f.calls++
	return nil
}

var _ kyvernocel.ImageFunctions = (*functions)(nil)

func attestorsOf(list []any) ([]policiesv1.Attestor, error) {
	out := make([]policiesv1.Attestor, 0, len(list))
	for _, e := range list {
		b, err := json.Marshal(e)
		if err != nil {
			return nil, err
		}
		var a policiesv1.Attestor
		if err := json.Unmarshal(b, &a); err != nil || a.Name == "" {
			return nil, fmt.Errorf("not an attestor (use attestors.<name>): %s", b)
		}
		out = append(out, a)
	}
	return out, nil
}

func (f *functions) digest(image string) error {
	if f.v == nil {
		return kyvernocel.ErrNoImageFunctions
	}
	if err := f.call(); err != nil {
		return err
	}
	if _, err := f.v.ImageDigest(f.ctx, image); err != nil {
		return fmt.Errorf("failed to get imagedata: %w", err)
	}
	return nil
}

func (f *functions) VerifyImageSignatures(image string, list []any) (int64, error) {
	return f.verify(image, nil, list)
}

func (f *functions) VerifyAttestationSignatures(image, attestation string, list []any) (int64, error) {
	a, ok := f.p.attestations[attestation]
	if !ok {
		return 0, fmt.Errorf("attestation not found in policy: %s", attestation)
	}
	return f.verify(image, &a, list)
}

func (f *functions) verify(image string, att *policiesv1.Attestation, list []any) (int64, error) {
	attestors, err := attestorsOf(list)
	if err != nil {
		return 0, err
	}
	if ok, err := f.p.matchImage(image); err != nil || !ok {
		return 0, err
	}
	if err := f.digest(image); err != nil {
		return 0, err
	}
	var count int64
	for _, a := range attestors {
		if a.Notary != nil && att != nil && att.Referrer == nil {
			return 0, errors.New("notary verifier only supports oci 1.1 referrers as attestations")
		}
		if a.Cosign == nil && a.Notary == nil {
			continue
		}
		c := AttestorCheck{Image: image, Cosign: a.Cosign, Notary: a.Notary, Policy: f.p.Hash}
		switch {
		case att == nil:
		case a.Notary != nil:
			c.ReferrerType = att.Referrer.Type
		case att.InToto == nil:
			return 0, fmt.Errorf("attestation %s: cosign verifies in-toto attestations only", att.Name)
		default:
			c.PredicateType = att.InToto.Type
		}
		if err := f.call(); err != nil {
			return 0, err
		}
		sts, err := f.v.VerifyAttestor(f.ctx, c)
		if errors.Is(err, ErrAttestorUnsupported) {
			return 0, fmt.Errorf("attestor %s: %w", a.Name, err)
		}
		if err != nil {
			continue
		}
		count++
		if att != nil {
			want := c.PredicateType + c.ReferrerType // one of them is set
			for _, st := range sts {
				if st["predicateType"] == want {
					f.payloads[image+"\x00"+att.Name] = st["predicate"]
					break
				}
			}
		}
	}
	if len(attestors) > 0 {
		f.verifs.record(image, count > 0)
	}
	return count, nil
}

func (f *functions) ExtractPayload(image, attestation string) (any, error) {
	a, ok := f.p.attestations[attestation]
	if !ok {
		return nil, fmt.Errorf("attestation not found in policy: %s", attestation)
	}
	if err := f.digest(image); err != nil {
		return nil, err
	}
	if pl, ok := f.payloads[image+"\x00"+attestation]; ok {
		return pl, nil
	}
	if a.InToto != nil {
		return nil, errors.New("failed to get payload: intoto attestation payload cannot be fetch before verifying intoto attestation")
	}
	return nil, fmt.Errorf("failed to get payload: referrer attestation %s of %s is not verified", attestation, image)
}

func (f *functions) GetImageData(image string) (any, error) {
	if f.v == nil {
		return nil, kyvernocel.ErrNoImageFunctions
	}
	if err := f.call(); err != nil {
		return nil, err
	}
	d, err := f.v.ImageDigest(f.ctx, image)
	if err != nil {
		return nil, fmt.Errorf("failed to get imagedata: %w", err)
	}
	return map[string]any{"image": image, "resolvedImage": image + "@" + d, "digest": d}, nil
}

// DigestPatches returns the JSON Patch operations of
// validationConfigurations.mutateDigest: each image of the pod spec's
// containers, initContainers and ephemeralContainers without a digest,
// named as Kyverno names it (docker.io/nginx:latest for nginx), that
// matchImageReferences selects is replaced by that name@digest. nil when the policy does not apply, mutateDigest is off or
// an exception exempts the resource; an image whose digest does not
// resolve is an error (the patches of the others are returned with it).
func (p *Policy) DigestPatches(ctx context.Context, in *vpol.Input, exceptions []*vpol.Exception, v Verifier) ([]map[string]any, error) {
	if !p.MutateDigest || p.Mode == vpol.ModeJSON {
		return nil, nil
	}
	var act *kyvernocel.Activation
	for _, vr := range p.variants {
		a, ok, res := p.prepare(ctx, vr, in, exceptions)
		if !ok {
			if res != nil && res.Result.Status == vpol.StatusError {
				return nil, errors.New(res.Result.Message)
			}
			continue
		}
		act = a
	}
	if act == nil {
		return nil, nil
	}
	spec, ptr, ok := podSpec(in, act.Object)
	if !ok {
		return nil, nil
	}
	var ops []map[string]any
	var errs []error
	for _, l := range containerLists {
		cs, _ := spec[l].([]any)
		for i, c := range cs {
			m, _ := c.(map[string]any)
			written, _ := m["image"].(string)
			if written == "" || strings.Contains(written, "@") {
				continue
			}
			// Kyverno pins the image as its ImageInfo names it
			// (docker.io/nginx:latest for nginx).
			img, err := imageref.String(written)
			if err != nil {
				errs = append(errs, fmt.Errorf("failed to resolve digest for image %s: %w", written, err))
				continue
			}
			if ok, err := p.matchImage(img); err != nil {
				return nil, err
			} else if !ok {
				continue
			}
			if v == nil {
				return nil, kyvernocel.ErrNoImageFunctions
			}
			d, err := v.ImageDigest(ctx, img)
			if err != nil {
				errs = append(errs, fmt.Errorf("failed to resolve digest for image %s: %w", img, err))
				continue
			}
			ops = append(ops, map[string]any{"op": "replace", "path": fmt.Sprintf("%s/%s/%d/image", ptr, l, i), "value": img + "@" + d})
		}
	}
	return ops, errors.Join(errs...)
}
