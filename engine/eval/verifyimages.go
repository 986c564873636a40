package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/verdict-policy/verdict/engine/condition"
	"github.com/verdict-policy/verdict/engine/ivpol"
	"github.com/verdict-policy/verdict/engine/mutate"
	"github.com/verdict-policy/verdict/engine/policy"
)

// ImageVerifier checks cosign signatures and attestations of images. It
// needs a registry, so the host implements it (host/imageverify); the
// engine only decides what to check and what the answers mean.
type ImageVerifier interface {
	// VerifyImage checks the signatures of Check.Image against one public
	// key or, with Check.PredicateType set, fetches and verifies the
	// attestations of that type. An error means "not verified"; an error
	// wrapping *net.OpError means the registry could not be reached (an
	// error result rather than a fail, as in Kyverno).
	VerifyImage(ctx context.Context, check ImageCheck) (*ImageVerified, error)
	// ImageDigest resolves an image reference to its manifest digest.
	ImageDigest(ctx context.Context, image string) (string, error)
}

// ImageCheck is one attestor entry applied to one image.
type ImageCheck struct {
	// Image is the full reference (registry/path:tag or @digest).
	Image string
	// PublicKey is a PEM public key; SignatureAlgorithm its hash
	// (sha256 when empty).
	PublicKey          string
	SignatureAlgorithm string
	// Identities make a keyless check, without PublicKey: the certificate
	// of a signature must chain to Roots (PEM certificates; empty:
	// Sigstore's public Fulcio roots) and name one of the identities.
	Identities []ImageIdentity
	Roots      string
	// NotaryCerts make a notary check, without PublicKey nor Identities:
	// a notary signature of the image must chain to these PEM
	// certificates (NotaryTSACerts: the timestamping authorities'). With
	// ReferrerType set, the check is of the image's OCI referrers of that
	// artifact type instead: the first whose notary signature verifies
	// gives its data (JSON) as the one statement, {"predicateType": type,
	// "predicate": data}.
	NotaryCerts, NotaryTSACerts, ReferrerType string
	// Repository stores the signatures when they are not next to the image.
	Repository string
	// IgnoreTlog and IgnoreSCT skip the transparency log and SCT checks;
	// RekorURL and RekorPubKey name the log otherwise.
	IgnoreTlog, IgnoreSCT bool
	RekorURL, RekorPubKey string
	// Annotations must be present in the signature payload.
	Annotations map[string]string
	// PredicateType, when set, asks for the attestations of that type.
	PredicateType string
	// Policy is the policy's Hash: a verifier that caches results keys them
	// by it, so a changed policy verifies again.
	Policy string
}

// ImageIdentity is a signer a keyless check accepts: the issuer and
// subject of its certificate, as strings or regular expressions.
type ImageIdentity struct {
	Issuer, Subject, IssuerRegExp, SubjectRegExp string
}

// ImageVerified is what a successful check found.
type ImageVerified struct {
	// Digest is the image's manifest digest.
	Digest string
	// Statements are the in-toto statements of the attestations, with
	// "type" set to their predicateType (as Kyverno decodes them).
	Statements []map[string]any
}

// ErrNoImageVerifier is the error of verifyImages rules when the engine
// has no ImageVerifier.
var ErrNoImageVerifier = errors.New("image verification is not configured")

type noImageVerifier struct{}

func (noImageVerifier) VerifyImage(context.Context, ImageCheck) (*ImageVerified, error) {
	return nil, ErrNoImageVerifier
}
func (noImageVerifier) ImageDigest(context.Context, string) (string, error) {
	return "", ErrNoImageVerifier
}

// Image verification statuses, as Kyverno records them in the
// kyverno.io/verify-images annotations.
const (
	imagePass = "pass"
	imageFail = "fail"
	imageSkip = "skip"
)

const (
	annotationImageVerify       = "kyverno.io/verify-images"
	annotationImageVerifyScoped = "kyverno.io/verify-images-scoped"
)

// imageMeta is Kyverno's ImageVerificationMetadata.
type imageMeta struct {
	Data     map[string]string
	Policies map[string]map[string]map[string]string
}

func (m *imageMeta) addData(image, status string) {
	if m.Data == nil {
		m.Data = map[string]string{}
	}
	m.Data[image] = status
}

func (m *imageMeta) add(p *policy.Policy, rule, image, status string) {
	m.addData(image, status)
	if m.Policies == nil {
		m.Policies = map[string]map[string]map[string]string{}
	}
	key := p.Namespace() + "/" + p.Name()
	if m.Policies[key] == nil {
		m.Policies[key] = map[string]map[string]string{}
	}
	if m.Policies[key][rule] == nil {
		m.Policies[key][rule] = map[string]string{}
	}
	m.Policies[key][rule][image] = status
}

// imageRef is an image found in a resource, with where it was found.
type imageRef struct {
	pointer                     string
	registry, path, tag, digest string
	info                        map[string]any
}

// String is Kyverno's ImageInfo.String: the digest form when there is one.
func (i imageRef) String() string {
	image := i.path
	if i.registry != "" {
		image = i.registry + "/" + i.path
	}
	if i.digest != "" {
		return image + "@" + i.digest
	}
	return image + ":" + i.tag
}

func newImageRef(pointer, image string) (imageRef, error) {
	info, err := imageInfo(image)
	if err != nil {
		return imageRef{}, err
	}
	r := imageRef{pointer: pointer, info: info}
	r.registry, _ = info["registry"].(string)
	r.path, _ = info["path"].(string)
	r.tag, _ = info["tag"].(string)
	r.digest, _ = info["digest"].(string)
	return r, nil
}

// imageExtractor is Kyverno's imageExtractor: fields lead from the object
// to the entries ("*" iterates), value names the image field.
type imageExtractor struct {
	fields []string
	value  string
	x      *policy.ImageExtractor
}

func standardExtractors(kind string) []imageExtractor {
	var prefix []string
	switch kind {
	case "Pod":
		prefix = []string{"spec"}
	case "CronJob":
		prefix = []string{"spec", "jobTemplate", "spec", "template", "spec"}
	default:
		prefix = []string{"spec", "template", "spec"}
	}
	out := make([]imageExtractor, 0, 3)
	for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
		f := append(append(append([]string{}, prefix...), list), "*")
		out = append(out, imageExtractor{fields: f, value: "image"})
	}
	return out
}

// extractImages returns the images of obj in Kyverno's extractor order.
func (ev *evaluation) extractImages(obj map[string]any, rules *policy.ImageRules) ([]imageRef, error) {
	kind, _ := obj["kind"].(string)
	var extractors []imageExtractor
	if xs, ok := rules.Extractors[kind]; ok {
		for i := range xs {
			extractors = append(extractors, imageExtractor{fields: xs[i].Fields, value: xs[i].Value, x: &xs[i]})
		}
	} else {
		extractors = standardExtractors(kind)
	}
	var out []imageRef
	for _, x := range extractors {
		if err := ev.extract(obj, nil, x.fields, x, &out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (ev *evaluation) extract(obj any, path, fields []string, x imageExtractor, out *[]imageRef) error {
	if obj == nil {
		return nil
	}
	if len(fields) > 0 && fields[0] == "*" {
		switch t := obj.(type) {
		case []any:
			for i, v := range t {
				if err := ev.extract(v, append(path, strconv.Itoa(i)), fields[1:], x, out); err != nil {
					return err
				}
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(t)) {
				if err := ev.extract(t[k], append(path, k), fields[1:], x, out); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("invalid type")
		}
		return nil
	}
	m, ok := obj.(map[string]any)
	if !ok {
		return fmt.Errorf("invalid image config")
	}
	if len(fields) > 0 {
		return ev.extract(m[fields[0]], append(path, fields[0]), fields[1:], x, out)
	}
	value, ok := m[x.value].(string)
	if !ok || strings.TrimSpace(value) == "" {
		return nil
	}
	if x.x != nil && x.x.JMESPath != nil {
		res, err := ev.e.interp.Search(x.x.JMESPath, value)
		if err != nil {
			return fmt.Errorf("failed to apply jmespath: %w", err)
		}
		s, ok := res.(string)
		if !ok {
			return fmt.Errorf("jmespath must produce a string, but produced %v", res)
		}
		value = s
	}
	ref, err := newImageRef("/"+strings.Join(path, "/")+"/"+x.value, value)
	if err != nil {
		return fmt.Errorf("invalid image '%s' (%w)", value, err)
	}
	*out = append(*out, ref)
	return nil
}

// matchingImages is Kyverno's GetMatchingImages: an image appears once
// per verification whose imageReferences match it.
func (ev *evaluation) matchingImages(images []imageRef, rules *policy.ImageRules) []imageRef {
	var out []imageRef
	for _, img := range images {
		s := img.String()
		for _, v := range rules.Verifications {
			if ev.matchAny(v.ImageReferences, s) {
				out = append(out, img)
			}
		}
	}
	return out
}

// verifyImagesPhase is Kyverno's VerifyAndPatchImages, run after the
// mutate phase on the mutated object: every verifyImages rule verifies the
// matching images, replaces tags by digests (mutateDigest), and records
// what it verified in the kyverno.io/verify-images annotations that the
// validate phase reads (Kyverno's CLI patches them in the same way).
func (ev *evaluation) verifyImagesPhase(policies []*policy.Policy, resp *Response) {
	orig := ev.req.Object
	if len(orig) == 0 || ev.req.GenerateExisting || ev.req.MutateExisting || ev.req.Mode == Background {
		return
	}
	obj := orig
	if resp.Patched != nil {
		obj = resp.Patched
	}
	changed := false
	for _, p := range policies {
		if ev.ctx.Err() != nil {
			return
		}
		if !hasRuleType(p, policy.VerifyImages) || !ev.admits(p) {
			continue
		}
		var meta imageMeta
		applied := 0
		for _, r := range p.Rules {
			if r.Type != policy.VerifyImages || !ev.matches(r, &ev.res) {
				continue
			}
			results, patched := ev.verifyImagesRule(p, r, obj, &meta)
			if err := ev.budget.Err(); err != nil {
				results, patched = []*outcome{stopped(err)}, nil
			}
			for _, o := range results {
				resp.Results = append(resp.Results, ev.ruleResult(p, r, o))
				if o.status == StatusPass || o.status == StatusFail {
					applied++
				}
			}
			if patched != nil {
				obj, changed = patched, true
				ev.setObject(obj)
			}
			if p.ApplyOne && applied > 0 {
				break
			}
		}
		if meta.Data != nil {
			obj, changed = withImageMeta(obj, meta), true
			ev.setObject(obj)
		}
	}
	if next, ok := ev.imageDigests(policies, obj, resp); ok { // ivpol.go
		obj, changed = next, true
	}
	if changed {
		resp.Patched = obj
		if patch, err := mutate.MarshalPatch(mutate.Diff(orig, obj)); err == nil {
			resp.Patch = patch
		}
	}
}

// withImageMeta returns obj with the verify-images annotations.
func withImageMeta(obj map[string]any, meta imageMeta) map[string]any {
	data, _ := json.Marshal(meta.Data)
	scoped, _ := json.Marshal(struct {
		Version  int                                     `json:"version"`
		Policies map[string]map[string]map[string]string `json:"policies"`
	}{1, meta.Policies})
	out := shallowCopy(obj)
	md := shallowCopy(asMap(out["metadata"]))
	ann := shallowCopy(asMap(md["annotations"]))
	ann[annotationImageVerify] = string(data)
	ann[annotationImageVerifyScoped] = string(scoped)
	md["annotations"] = ann
	out["metadata"] = md
	return out
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func shallowCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// setPointer returns a copy of obj with the string at the JSON pointer
// replaced; containers on the way are copied.
func setPointer(v any, parts []string, value string) any {
	if len(parts) == 0 {
		return value
	}
	switch t := v.(type) {
	case map[string]any:
		cp := shallowCopy(t)
		cp[parts[0]] = setPointer(t[parts[0]], parts[1:], value)
		return cp
	case []any:
		i, err := strconv.Atoi(parts[0])
		if err != nil || i < 0 || i >= len(t) {
			return v
		}
		cp := append([]any(nil), t...)
		cp[i] = setPointer(t[i], parts[1:], value)
		return cp
	}
	return v
}

// verifyImagesRule runs one verifyImages rule on obj: one result per
// matching image and verification, and the object with digests (nil when
// unchanged).
func (ev *evaluation) verifyImagesRule(p *policy.Policy, r *policy.Rule, obj map[string]any, meta *imageMeta) ([]*outcome, map[string]any) {
	rules := r.Images
	if rules == nil {
		return []*outcome{errorf("%s", r.Unsupported)}, nil
	}
	all, err := ev.extractImages(obj, rules)
	if err != nil {
		return []*outcome{ruleError("failed to extract images", err)}, nil
	}
	images := ev.matchingImages(all, rules)
	if len(images) == 0 {
		return nil, nil
	}
	if r.Unsupported != "" {
		return []*outcome{errorf("%s", r.Unsupported)}, nil
	}
	s := ev.newScope(p, r)
	if o := s.unmet(r.Context, r.Preconditions); o != nil {
		return []*outcome{o}, nil
	}
	if exs := ev.exceptions(p, r, s); len(exs) > 0 {
		return []*outcome{exceptionSkip(exs)}, nil
	}
	iv := &imageVerification{ev: ev, p: p, r: r, s: s, meta: meta}
	var outs []*outcome
	var patched map[string]any
	for _, v := range rules.Verifications {
		for _, img := range images {
			if ev.budget.Poll() != nil {
				return nil, nil // verifyImagesPhase reports the stop
			}
			o, pointer, value := iv.verify(v, img)
			if o != nil {
				outs = append(outs, o)
			}
			if pointer != "" {
				base := obj
				if patched != nil {
					base = patched
				}
				patched, _ = setPointer(base, strings.Split(strings.TrimPrefix(pointer, "/"), "/"), value).(map[string]any)
			}
		}
	}
	return outs, patched
}

// imageVerification is the state of one verifyImages rule.
type imageVerification struct {
	ev   *evaluation
	p    *policy.Policy
	r    *policy.Rule
	s    *scope
	meta *imageMeta
}

// verify is Kyverno's imageVerifier.Verify for one image: the result, and
// the JSON pointer and new value of a digest mutation ("" when none).
func (iv *imageVerification) verify(v *policy.ImageVerification, img imageRef) (*outcome, string, string) {
	ctx := iv.ev.ctx
	image := img.String()
	o, digest := iv.verifyImage(v, img)
	pointer, value := "", ""
	if v.MutateDigest && img.digest == "" {
		if digest == "" {
			d, err := iv.ev.e.images.ImageDigest(ctx, image)
			if err != nil {
				return ruleError("failed to update digest", err), "", ""
			}
			digest = d
		}
		pointer, value = img.pointer, image+"@"+digest
		if o == nil {
			o = pass("mutated image digest")
		}
		img.digest = digest
		image = img.String()
	}
	if o != nil && (len(v.Attestors) > 0 || len(v.Attestations) > 0) {
		status := imageFail
		switch o.status {
		case StatusPass:
			status = imagePass
		case StatusSkip, StatusWarn:
			status = imageSkip
		}
		iv.meta.add(iv.p, iv.r.Name, image, status)
	}
	return o, pointer, value
}

func (iv *imageVerification) verifyImage(v *policy.ImageVerification, img imageRef) (*outcome, string) {
	if len(v.Attestors) == 0 && len(v.Attestations) == 0 {
		return nil, ""
	}
	image := img.String()
	skipMsg := fmt.Sprintf("skipping image reference image %s, policy %s ruleName %s", image, iv.p.Name(), iv.r.Name)
	if !iv.ev.matchAny(v.ImageReferences, image) {
		return skip(skipMsg), ""
	}
	if iv.ev.matchAny(v.SkipImageReferences, image) {
		iv.meta.addData(image, imageSkip)
		return skip(skipMsg), ""
	}
	s := iv.s.child()
	s.set("image", img.info)
	digest := ""
	if len(v.Attestors) > 0 {
		var err error
		for i, set := range v.Attestors {
			digest, err = iv.attestorSet(s, v, set, image, "", fmt.Sprintf(".attestors[%d]", i))
			if err != nil {
				var netErr *net.OpError
				if errors.As(err, &netErr) || errors.Is(err, ErrNoImageVerifier) {
					return ruleError(fmt.Sprintf("failed to verify image %s", image), err), ""
				}
				return fail(fmt.Sprintf("failed to verify image %s: %s", image, err)), ""
			}
		}
		if img.digest == "" {
			img.digest = digest
		}
		if len(v.Attestations) == 0 {
			return pass(fmt.Sprintf("verified image signatures for %s", image)), digest
		}
	}
	return iv.attestations(s, v, img)
}

// attestorSet verifies an attestor set: Required() of its entries must
// verify. It returns the digest of the last verification.
func (iv *imageVerification) attestorSet(s *scope, v *policy.ImageVerification, set policy.AttestorSet, image, predicate, path string) (string, error) {
	var errs []error
	verified := 0
	required := set.Required()
	for i, a := range set.Entries {
		apath := fmt.Sprintf("%s.entries[%d]", path, i)
		var digest string
		var err error
		if a.Nested != nil {
			digest, err = iv.attestorSet(s, v, *a.Nested, image, predicate, apath+".attestor")
		} else {
			var res *ImageVerified
			res, err = iv.check(s, v, a, image, predicate)
			if err != nil {
				err = fmt.Errorf("%s.keys: %w", apath, err)
			} else {
				digest = res.Digest
			}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		verified++
		if verified >= required {
			return digest, nil
		}
	}
	if len(errs) == 0 {
		return "", fmt.Errorf("%s: no attestor verified", path)
	}
	return "", errors.Join(errs...)
}

func (iv *imageVerification) check(s *scope, v *policy.ImageVerification, a policy.Attestor, image, predicate string) (*ImageVerified, error) {
	c := ImageCheck{
		Image:              image,
		SignatureAlgorithm: a.SignatureAlgorithm,
		IgnoreTlog:         a.IgnoreTlog,
		IgnoreSCT:          a.IgnoreSCT,
		RekorURL:           a.RekorURL,
		RekorPubKey:        a.RekorPubKey,
		Annotations:        a.Annotations,
		PredicateType:      predicate,
		Policy:             iv.p.Hash(),
		Repository:         a.Repository,
	}
	if a.PublicKey != nil {
		key, err := renderString(s, a.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("failed to substitute variables: %w", err)
		}
		c.PublicKey = key
	}
	if c.Repository == "" && v.Repository != nil {
		repo, err := renderString(s, v.Repository)
		if err != nil {
			return nil, fmt.Errorf("failed to substitute variables: %w", err)
		}
		c.Repository = repo
	}
	if c.PublicKey == "" {
		return nil, errors.New("a public key is required")
	}
	return iv.ev.e.images.VerifyImage(iv.ev.ctx, c)
}

// attestations is Kyverno's verifyAttestations.
func (iv *imageVerification) attestations(s *scope, v *policy.ImageVerification, img imageRef) (*outcome, string) {
	image := img.String()
	for i, att := range v.Attestations {
		path := fmt.Sprintf(".attestations[%d]", i)
		if att.Type == "" {
			return fail(path + ": missing type"), ""
		}
		sets := att.Attestors
		if len(sets) == 0 {
			sets = []policy.AttestorSet{{Entries: []policy.Attestor{{}}}}
		}
		for j, set := range sets {
			var errs []error
			verified, required := 0, set.Required()
			for k, a := range set.Entries {
				entryPath := fmt.Sprintf("%s.attestors[%d].entries[%d]", path, j, k)
				res, err := iv.check(s, v, a, image, att.Type)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				cs := s.child()
				if att.Name != "" {
					for _, st := range res.Statements {
						if pred, ok := st["predicate"].(map[string]any); ok {
							cs.set(att.Name, pred)
							break
						}
					}
				}
				if img.digest == "" {
					img.digest = res.Digest
					image = img.String()
				}
				if err := iv.checkStatements(cs, att, res.Statements, image); err != nil {
					errs = append(errs, fmt.Errorf("%s.keys: %w", entryPath, err))
					continue
				}
				verified++
				if verified >= required {
					break
				}
			}
			if verified < required {
				msg := "attestations verification failed"
				if len(errs) > 0 {
					msg = errors.Join(errs...).Error()
				}
				return fail(fmt.Sprintf("image attestations verification failed, verifiedCount: %d, requiredCount: %d, error: %s", verified, required, msg)), ""
			}
		}
	}
	return pass(fmt.Sprintf("verified image attestations for %s", image)), img.digest
}

// checkStatements is Kyverno's verifyAttestation: every statement of the
// attestation's type must satisfy its conditions, with the predicate's
// fields bound at the top level.
func (iv *imageVerification) checkStatements(s *scope, att policy.Attestation, statements []map[string]any, image string) error {
	var matching []map[string]any
	for _, st := range statements {
		if t, _ := st["type"].(string); t == att.Type {
			matching = append(matching, st)
		}
	}
	if matching == nil {
		return fmt.Errorf("attestions not found for predicate type %s", att.Type)
	}
	for _, st := range matching {
		if len(att.Conditions) == 0 {
			continue
		}
		pred, ok := st["predicate"].(map[string]any)
		if !ok {
			return fmt.Errorf("failed to check attestations: failed to extract predicate from statement: %v", st)
		}
		cs := s.child()
		for k, v := range pred {
			cs.set(k, v)
		}
		ok, msg, err := condition.EvalEach(att.Conditions, cs.condition)
		if err != nil {
			return fmt.Errorf("failed to check attestations: %w", err)
		}
		if !ok {
			return fmt.Errorf("attestation checks failed for %s and predicate %s: %s", image, att.Type, msg)
		}
	}
	return nil
}

// validateImagesRule is Kyverno's validate-phase check of a verifyImages
// rule (validate_image.go): verifyDigest requires a digest, required
// requires the image to have been verified by this rule.
func (ev *evaluation) validateImagesRule(p *policy.Policy, r *policy.Rule) *outcome {
	if ev.deleteRequest || r.Images == nil {
		return nil
	}
	obj, _ := ev.base["request"].(map[string]any)["object"].(map[string]any)
	if obj == nil {
		return nil
	}
	all, err := ev.extractImages(obj, r.Images)
	if err != nil || len(ev.matchingImages(all, r.Images)) == 0 {
		return nil
	}
	checks := false
	for _, v := range r.Images.Verifications {
		checks = checks || v.VerifyDigest || v.Required
	}
	if !checks {
		return nil
	}
	if r.Unsupported != "" {
		return nil // the verify phase reported the error
	}
	s := ev.newScope(p, r)
	if o := s.unmet(r.Context, r.Preconditions); o != nil {
		return o
	}
	if exs := ev.exceptions(p, r, s); len(exs) > 0 {
		return exceptionSkip(exs)
	}
	scoped := scopedImageMeta(obj)
	standard, _ := ev.extractImages(obj, &policy.ImageRules{})
	var skipped, passed []string
	for _, v := range r.Images.Verifications {
		for _, img := range standard {
			image := img.String()
			if !ev.matchAny(v.ImageReferences, image) {
				continue
			}
			if v.VerifyDigest && img.digest == "" {
				return fail(fmt.Sprintf("missing digest for %s", image))
			}
			if !v.Required {
				continue
			}
			status := imageFail
			if rules := scoped[p.Namespace()+"/"+p.Name()]; rules != nil {
				if st, ok := rules[r.Name][image]; ok {
					status = st
				}
			}
			switch status {
			case imageFail:
				return fail(fmt.Sprintf("unverified image %s", image))
			case imageSkip:
				skipped = append(skipped, image)
			case imagePass:
				passed = append(passed, image)
			}
		}
	}
	if len(passed) > 0 || len(skipped) == 0 {
		if len(skipped) > 0 {
			return pass(strings.Join(append([]string{"image verified, skipped images:"}, skipped...), " "))
		}
		return pass("image verified")
	}
	return skip(strings.Join(append([]string{"image skipped, skipped images:"}, skipped...), " "))
}

// scopedImageMeta reads the kyverno.io/verify-images-scoped annotation.
func scopedImageMeta(obj map[string]any) map[string]map[string]map[string]string {
	md := asMap(obj["metadata"])
	raw, _ := asMap(md["annotations"])[annotationImageVerifyScoped].(string)
	var scoped struct {
		Version  int                                     `json:"version"`
		Policies map[string]map[string]map[string]string `json:"policies"`
	}
	if raw == "" || json.Unmarshal([]byte(raw), &scoped) != nil || scoped.Version != 1 {
		return nil
	}
	return scoped.Policies
}

// ErrKeylessUnsupported is the error of an ImageValidatingPolicy's cosign
// attestor with neither a public key nor keyless identities: the
// ImageVerifier checks those two only.
var ErrKeylessUnsupported = fmt.Errorf("cosign attestors without a public key or keyless identities (certificate, KMS, TUF): %w", ivpol.ErrAttestorUnsupported)
