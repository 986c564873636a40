package policy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/jmespath"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/variables"
)

// ImageRules is a compiled verifyImages rule: its image verifications and
// the imageExtractors that find images in custom kinds.
type ImageRules struct {
	Verifications []*ImageVerification
	// Extractors are rule.imageExtractors by kind; a kind without an entry
	// uses the standard container lists of Pods and pod controllers.
	Extractors map[string][]ImageExtractor
}

// ImageVerification is one entry of verifyImages, after Kyverno's Convert
// (the deprecated image/key fields become imageReferences/attestors).
type ImageVerification struct {
	// ImageReferences and SkipImageReferences are wildcard patterns matched
	// against the full image reference (registry/path:tag or @digest).
	ImageReferences     []string
	SkipImageReferences []string
	Attestors           []AttestorSet
	Attestations        []Attestation
	// Repository is where signatures are stored, when not next to the image.
	Repository *variables.Template
	// MutateDigest, VerifyDigest and Required default to true.
	MutateDigest, VerifyDigest, Required bool
}

// AttestorSet is a set of attestors of which Count (default: all) must
// verify.
type AttestorSet struct {
	Count   int
	Entries []Attestor
}

// Required is the number of entries that must verify.
func (s AttestorSet) Required() int {
	if s.Count > 0 && s.Count <= len(s.Entries) {
		return s.Count
	}
	return len(s.Entries)
}

// Attestor is a key-based attestor: one PEM public key (Kyverno splits a
// keys.publicKeys holding several PEM blocks into several entries).
type Attestor struct {
	PublicKey          *variables.Template
	SignatureAlgorithm string // sha224, sha256 (default), sha384, sha512
	// IgnoreTlog and IgnoreSCT come from keys.rekor.ignoreTlog and
	// keys.ctlog.ignoreSCT; RekorURL defaults to the public Rekor.
	IgnoreTlog  bool
	IgnoreSCT   bool
	RekorURL    string
	RekorPubKey string
	Repository  string
	Annotations map[string]string
	// Nested is a nested attestor set (attestor: {...}).
	Nested *AttestorSet
}

// Attestation is an in-toto attestation to fetch and check.
type Attestation struct {
	Name string
	// Type is type, or predicateType when type is empty.
	Type       string
	Attestors  []AttestorSet
	Conditions []Conditions
}

// ImageExtractor finds images in a custom kind (rule.imageExtractors).
type ImageExtractor struct {
	Fields   []string
	Key      string
	Value    string
	Name     string
	JMESPath *jmespath.Query
}

// rawImageVerification mirrors Kyverno's ImageVerification for the fields
// this engine supports or must recognise to reject.
type rawImageVerification struct {
	Type                string            `json:"type"`
	Image               string            `json:"image"`
	ImageReferences     []string          `json:"imageReferences"`
	SkipImageReferences []string          `json:"skipImageReferences"`
	Key                 string            `json:"key"`
	Issuer              string            `json:"issuer"`
	Roots               string            `json:"roots"`
	Subject             string            `json:"subject"`
	Annotations         map[string]string `json:"annotations"`
	Repository          string            `json:"repository"`
	Attestors           []rawAttestorSet  `json:"attestors"`
	Attestations        []rawAttestation  `json:"attestations"`
	MutateDigest        *bool             `json:"mutateDigest"`
	VerifyDigest        *bool             `json:"verifyDigest"`
	Required            *bool             `json:"required"`
	Validation          map[string]any    `json:"validate"`
	CosignOCI11         bool              `json:"cosignOCI11"`
	UseCache            *bool             `json:"useCache"`
	Credentials         map[string]any    `json:"imageRegistryCredentials"`
}

type rawAttestorSet struct {
	Count   int           `json:"count"`
	Entries []rawAttestor `json:"entries"`
}

type rawAttestor struct {
	Keys         *rawKeys          `json:"keys"`
	Certificates map[string]any    `json:"certificates"`
	Keyless      map[string]any    `json:"keyless"`
	Attestor     *rawAttestorSet   `json:"attestor"`
	Annotations  map[string]string `json:"annotations"`
	Repository   string            `json:"repository"`
}

type rawKeys struct {
	PublicKeys         string         `json:"publicKeys"`
	SignatureAlgorithm string         `json:"signatureAlgorithm"`
	KMS                string         `json:"kms"`
	Secret             map[string]any `json:"secret"`
	Rekor              *struct {
		URL         string `json:"url"`
		RekorPubKey string `json:"pubkey"`
		IgnoreTlog  bool   `json:"ignoreTlog"`
	} `json:"rekor"`
	CTLog *struct {
		IgnoreSCT bool `json:"ignoreSCT"`
	} `json:"ctlog"`
}

type rawAttestation struct {
	Name          string           `json:"name"`
	Type          string           `json:"type"`
	PredicateType string           `json:"predicateType"`
	Attestors     []rawAttestorSet `json:"attestors"`
	Conditions    []any            `json:"conditions"`
}

// verifyImages compiles rule.verifyImages and rule.imageExtractors. A
// feature this engine does not evaluate (keyless, certificates, KMS or
// secret keys, Notary, validate.deny, ...) sets unsupported.
func (c *compiler) verifyImages(raw []map[string]any, extractors map[string][]kyverno.ImageExtractor, path string) (out *ImageRules, unsupported string) {
	out = &ImageRules{}
	for i, m := range raw {
		ipath := fmt.Sprintf("%s.verifyImages[%d]", path, i)
		b, err := json.Marshal(m)
		if err != nil {
			c.add(err, engine.CodeDecode, ipath)
			continue
		}
		var r rawImageVerification
		if err := json.Unmarshal(b, &r); err != nil {
			c.add(err, engine.CodeDecode, ipath)
			continue
		}
		v, why := c.imageVerification(&r, ipath)
		if why != "" && unsupported == "" {
			unsupported = why
		}
		out.Verifications = append(out.Verifications, v)
	}
	for kind, list := range extractors {
		for i, e := range list {
			epath := fmt.Sprintf("%s.imageExtractors.%s[%d]", path, kind, i)
			var fields []string
			for _, f := range strings.Split(e.Path, "/") {
				if f = strings.TrimSpace(f); f != "" {
					fields = append(fields, f)
				}
			}
			value := e.Value
			if value == "" {
				if len(fields) == 0 {
					c.errorf(engine.CodeInvalidPolicy, epath+".path", "an image extractor needs a path")
					continue
				}
				value = fields[len(fields)-1]
				fields = fields[:len(fields)-1]
			}
			name := e.Name
			if name == "" {
				name = "custom"
			}
			x := ImageExtractor{Fields: fields, Key: e.Key, Value: value, Name: name}
			if e.JMESPath != "" {
				q, err := jmespath.Parse(e.JMESPath)
				c.add(prefixPath(err, epath+".jmesPath"), engine.CodeInvalidPolicy, epath+".jmesPath")
				x.JMESPath = q
			}
			if out.Extractors == nil {
				out.Extractors = map[string][]ImageExtractor{}
			}
			out.Extractors[kind] = append(out.Extractors[kind], x)
		}
	}
	return out, unsupported
}

func (c *compiler) imageVerification(r *rawImageVerification, path string) (*ImageVerification, string) {
	why := ""
	note := func(s string) {
		if why == "" {
			why = s
		}
	}
	switch r.Type {
	case "", "Cosign":
	default:
		note(fmt.Sprintf("verifyImages type %s is not supported yet", r.Type))
	}
	if r.Issuer != "" {
		note("verifyImages keyless attestors are not supported yet")
	}
	if len(r.Validation) > 0 {
		note("verifyImages validate is not supported yet")
	}
	if r.CosignOCI11 {
		note("verifyImages cosignOCI11 is not supported yet")
	}
	v := &ImageVerification{
		ImageReferences:     r.ImageReferences,
		SkipImageReferences: r.SkipImageReferences,
		MutateDigest:        boolOr(r.MutateDigest, true),
		VerifyDigest:        boolOr(r.VerifyDigest, true),
		Required:            boolOr(r.Required, true),
	}
	if r.Repository != "" {
		v.Repository = c.template(r.Repository, path+".repository")
	}
	// Kyverno's Convert: image and key are the old spelling of
	// imageReferences and a one-key attestor.
	if r.Image != "" {
		v.ImageReferences = append(v.ImageReferences, r.Image)
	}
	var legacy []rawAttestorSet
	if r.Key != "" || len(r.Annotations) > 0 {
		a := rawAttestor{Annotations: r.Annotations}
		if r.Key != "" {
			a.Keys = &rawKeys{PublicKeys: r.Key}
		}
		legacy = []rawAttestorSet{{Entries: []rawAttestor{a}}}
	}
	attestors := r.Attestors
	if len(legacy) > 0 && len(r.Attestations) == 0 {
		attestors = append(attestors, legacy...)
	}
	v.Attestors = c.attestorSets(attestors, path, note)
	for i, a := range r.Attestations {
		apath := fmt.Sprintf("%s.attestations[%d]", path, i)
		att := Attestation{Name: a.Name, Type: a.Type}
		if att.Type == "" {
			att.Type = a.PredicateType
		}
		sets := a.Attestors
		if len(legacy) > 0 {
			sets = append(sets, legacy...)
		}
		att.Attestors = c.attestorSets(sets, apath, note)
		for j, cond := range a.Conditions {
			if cs := c.conditions(cond, fmt.Sprintf("%s.conditions[%d]", apath, j)); cs != nil {
				att.Conditions = append(att.Conditions, *cs)
			}
		}
		v.Attestations = append(v.Attestations, att)
	}
	return v, why
}

// attestorSets compiles the attestors of the entry at path, noting why
// each set cannot be verified ("" when it can).
func (c *compiler) attestorSets(sets []rawAttestorSet, path string, note func(string)) []AttestorSet {
	var out []AttestorSet
	for i, s := range sets {
		set, w := c.attestorSet(s, fmt.Sprintf("%s.attestors[%d]", path, i))
		note(w)
		out = append(out, set)
	}
	return out
}

func (c *compiler) attestorSet(s rawAttestorSet, path string) (AttestorSet, string) {
	out := AttestorSet{Count: s.Count}
	why := ""
	if s.Count < 0 {
		c.errorf(engine.CodeInvalidPolicy, path+".count", "count must not be negative")
	}
	for i, e := range s.Entries {
		epath := fmt.Sprintf("%s.entries[%d]", path, i)
		switch {
		case e.Attestor != nil:
			nested, w := c.attestorSet(*e.Attestor, epath+".attestor")
			if why == "" {
				why = w
			}
			out.Entries = append(out.Entries, Attestor{Nested: &nested, Repository: e.Repository, Annotations: e.Annotations})
		case e.Keys != nil:
			k := e.Keys
			if k.KMS != "" || len(k.Secret) > 0 {
				if why == "" {
					why = "verifyImages keys.kms and keys.secret are not supported yet"
				}
			}
			base := Attestor{SignatureAlgorithm: k.SignatureAlgorithm, RekorURL: "https://rekor.sigstore.dev", Repository: e.Repository, Annotations: e.Annotations}
			if k.Rekor != nil {
				base.RekorURL, base.RekorPubKey, base.IgnoreTlog = k.Rekor.URL, k.Rekor.RekorPubKey, k.Rekor.IgnoreTlog
			}
			if k.CTLog != nil {
				base.IgnoreSCT = k.CTLog.IgnoreSCT
			}
			// Kyverno's ExpandStaticKeys: several PEM blocks are several
			// entries of the set.
			for _, key := range splitPEM(k.PublicKeys) {
				a := base
				a.PublicKey = c.template(key, epath+".keys.publicKeys")
				out.Entries = append(out.Entries, a)
			}
		case e.Certificates != nil:
			why = "verifyImages certificates attestors are not supported yet"
		case e.Keyless != nil:
			why = "verifyImages keyless attestors are not supported yet"
		default:
			out.Entries = append(out.Entries, Attestor{Repository: e.Repository, Annotations: e.Annotations})
		}
	}
	return out, why
}

// splitPEM splits keys holding several PEM blocks; a text that is not PEM
// (a variable) stays whole.
func splitPEM(keys string) []string {
	const end = "-----END PUBLIC KEY-----"
	if strings.Count(keys, end) < 2 {
		return []string{keys}
	}
	var out []string
	for _, part := range strings.SplitAfter(keys, end) {
		if strings.TrimSpace(part) != "" {
			out = append(out, strings.TrimSpace(part))
		}
	}
	return out
}
