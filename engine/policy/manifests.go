package policy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/manifests"
)

// Manifests is a compiled validate.manifests rule: signed YAML manifests
// verified with public keys (engine/manifests).
type Manifests struct {
	Attestors []ManifestAttestorSet
	// Verifier holds annotationDomain and ignoreFields, their patterns
	// compiled.
	Verifier *manifests.Verifier
	// DryRun is dryRun.enable. Kyverno matches a dry-run of the signed
	// manifest when it may create the kind in the dry-run namespace; with
	// no cluster (its CLI, and Verdict) only the direct match is done, so
	// this changes nothing.
	DryRun bool
}

// ManifestAttestorSet is an attestor set of a validate.manifests rule.
type ManifestAttestorSet struct {
	// Count is attestors[].count; 0 means every entry.
	Count   int
	Entries []ManifestAttestor
}

// Required is how many entries must verify: count, or every entry when
// count is 0 (Kyverno's RequiredCount; a count above the number of
// entries is never met).
func (s ManifestAttestorSet) Required() int {
	if s.Count == 0 {
		return len(s.Entries)
	}
	return s.Count
}

// ManifestAttestor is an entry: one public key (Key nil when Kyverno could
// not load it, which is an error result) or a nested set, with the
// annotations the resource must carry.
type ManifestAttestor struct {
	Key         *manifests.Key
	Annotations map[string]string
	Nested      *ManifestAttestorSet
}

type rawManifests struct {
	Attestors        []rawAttestorSet         `json:"attestors"`
	AnnotationDomain string                   `json:"annotationDomain"`
	IgnoreFields     []manifests.FieldBinding `json:"ignoreFields"`
	DryRun           struct{ Enable bool }    `json:"dryRun"`
	Repository       string                   `json:"repository"`
}

// manifests compiles validate.manifests at path. A feature that needs the
// network (keyless, certificates, OCI repositories, KMS) sets unsupported.
func (c *compiler) manifests(raw any, path string) (*Manifests, string) {
	b, err := json.Marshal(raw)
	if err != nil {
		c.add(err, engine.CodeDecode, path)
		return nil, ""
	}
	var r rawManifests
	if err := json.Unmarshal(b, &r); err != nil {
		c.add(err, engine.CodeDecode, path)
		return nil, ""
	}
	why := ""
	note := func(s string) {
		if why == "" && s != "" {
			why = s
		}
	}
	if r.Repository != "" {
		note("validate.manifests repository (manifests in an OCI image) is not supported yet")
	}
	opts := manifests.Options{IgnoreFields: r.IgnoreFields}
	if r.AnnotationDomain != manifests.DefaultDomain {
		opts.Domain = r.AnnotationDomain
	}
	out := &Manifests{DryRun: r.DryRun.Enable, Verifier: manifests.New(opts)}
	for i, s := range r.Attestors {
		set, w := c.manifestAttestorSet(s, fmt.Sprintf("%s.attestors[%d]", path, i))
		note(w)
		out.Attestors = append(out.Attestors, set)
	}
	return out, why
}

func (c *compiler) manifestAttestorSet(s rawAttestorSet, path string) (ManifestAttestorSet, string) {
	out := ManifestAttestorSet{Count: s.Count}
	why := ""
	note := func(s string) {
		if why == "" && s != "" {
			why = s
		}
	}
	if s.Count < 0 {
		c.errorf(engine.CodeInvalidPolicy, path+".count", "count must not be negative")
	}
	for i, e := range s.Entries {
		epath := fmt.Sprintf("%s.entries[%d]", path, i)
		if e.Repository != "" {
			note("validate.manifests attestor repository (manifests in an OCI image) is not supported yet")
		}
		switch {
		case e.Attestor != nil:
			nested, w := c.manifestAttestorSet(*e.Attestor, epath+".attestor")
			note(w)
			out.Entries = append(out.Entries, ManifestAttestor{Nested: &nested, Annotations: e.Annotations})
		case e.Keys != nil:
			k := e.Keys
			if k.KMS != "" || len(k.Secret) > 0 {
				note("validate.manifests keys.kms and keys.secret are not supported yet")
			}
			for _, key := range manifestKeys(k.PublicKeys) {
				a := ManifestAttestor{Annotations: e.Annotations}
				switch {
				case strings.HasPrefix(key, "-----BEGIN PUBLIC KEY-----"):
					// Kyverno reports a key it cannot parse at evaluation.
					a.Key, _ = manifests.ParsePublicKey(key)
				case strings.HasPrefix(key, "-----BEGIN PGP PUBLIC KEY BLOCK-----"):
					note("validate.manifests PGP public keys are not supported yet")
				case strings.HasPrefix(strings.TrimSpace(key), "-----BEGIN PUBLIC KEY-----"):
					// Kyverno loads a key only when the text starts with
					// the PEM header; its ExpandStaticKeys leaves the line
					// break before each key after the first, which it then
					// cannot load: an error result ("failed to judge
					// signature type").
				default:
					note("validate.manifests keys that are not PEM public keys (secrets, KMS, files) are not supported yet")
				}
				out.Entries = append(out.Entries, a)
			}
		case e.Certificates != nil:
			note("validate.manifests certificates attestors are not supported yet")
		case e.Keyless != nil:
			note("validate.manifests keyless attestors are not supported yet")
		default:
			// Kyverno verifies an empty entry keyless, with Rekor.
			note("validate.manifests keyless attestors are not supported yet")
		}
	}
	return out, why
}

// manifestKeys is Kyverno's splitPEM as ExpandStaticKeys uses it for
// manifests: the text up to each END line, untrimmed; a text with one key
// or none stays whole.
func manifestKeys(keys string) []string {
	const end = "-----END PUBLIC KEY-----"
	if strings.Count(keys, end) < 2 {
		return []string{keys}
	}
	parts := strings.SplitAfter(keys, end)
	return parts[:len(parts)-1]
}
