package manifests

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"sigs.k8s.io/yaml"
)

// DefaultDomain is the annotation key domain of signed manifests.
const DefaultDomain = "cosign.sigstore.dev"

// DefaultMaxBytes is the default of Options.MaxBytes: how many bytes the
// message may hold once decompressed (the gzip layer, then the tar.gz
// archive's files together).
const DefaultMaxBytes = 8 << 20

// maxCandidates is the library's default maxResourceManifestNum: how many
// manifests found by value are compared with the resource.
const maxCandidates = 3

// ObjectRef selects resources; an empty field or "*" matches any value, a
// value ending with "*" a prefix (the library's MatchPattern).
type ObjectRef struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// FieldBinding is an ignoreFields entry: Fields (dotted paths, "*"
// matching any run of characters) are ignored for the resources Objects
// selects (all when empty).
type FieldBinding struct {
	Fields  []string    `json:"fields,omitempty"`
	Objects []ObjectRef `json:"objects,omitempty"`
}

// Options configures Check.
type Options struct {
	// Domain is the annotation key domain; empty is DefaultDomain.
	Domain string
	// IgnoreFields are the rule's ignoreFields, added to the defaults.
	IgnoreFields []FieldBinding
	// MaxBytes bounds the decompressed message; 0 is DefaultMaxBytes.
	MaxBytes int
}

// NotFoundError is a message or signature missing from the resource:
// Kyverno reports it as a failed verification, not an error.
type NotFoundError struct{ msg string }

func (e *NotFoundError) Error() string { return e.msg }

// UnsupportedError names what this package does not verify (it would
// need the network or a cluster).
type UnsupportedError struct{ Feature string }

func (e *UnsupportedError) Error() string { return e.Feature + " is not supported yet" }

// Difference is one field that differs between the signed manifest
// (before) and the resource (after).
type Difference struct {
	Key    string         `json:"key"`
	Values map[string]any `json:"values"`
}

// Diff is the library's DiffResult.
type Diff struct {
	Items []Difference `json:"items"`
}

// String is the diff as the library prints it (JSON).
func (d *Diff) String() string {
	if d == nil || len(d.Items) == 0 {
		return ""
	}
	b, err := json.Marshal(d)
	if err != nil {
		return ""
	}
	return string(b)
}

// Checked is a resource whose manifest was looked up and compared; Verify
// checks its signatures.
type Checked struct {
	err     error
	matched bool
	diff    *Diff
	message []byte   // the signed bytes (the tar.gz archive)
	sigs    []string // base64 signatures, in annotation order
}

// Verifier is Options made ready once (the expressions of the ignored
// fields compiled); it is safe for concurrent use.
type Verifier struct {
	opts     Options
	keys     annotationKeys
	compiled map[string]*regexp.Regexp
}

// New prepares opts.
func New(opts Options) *Verifier {
	domain := opts.Domain
	if domain == "" {
		domain = DefaultDomain
	}
	keys := annotationKeys{domain}
	return &Verifier{opts: opts, keys: keys, compiled: compileFields(opts, keys)}
}

// Check is New(opts).Check(obj, nil).
func Check(obj map[string]any, opts Options) *Checked {
	return New(opts).Check(obj, nil)
}

// Check finds the signed manifest of obj in its message annotation and
// compares it with obj. Its errors are returned by Verify, in the
// library's order (a missing manifest before a bad signature).
//
// The message is read before any signature is checked (the signed
// manifest is what the signatures cover), so its work is charged to b (nil:
// no limit): a step per 64 bytes of YAML parsed and per field of a
// manifest compared or searched. When b runs out or its context ends, the
// error is b's *engine.Error (engine.CodeBudgetExceeded or
// engine.CodeCanceled).
func (v *Verifier) Check(obj map[string]any, b *engine.Budget) *Checked {
	c := &Checked{}
	c.err = c.check(obj, v, b)
	return c
}

func (c *Checked) check(obj map[string]any, v *Verifier, b *engine.Budget) error {
	opts, keys := v.opts, v.keys
	// The library works on the object's JSON: numbers are float64.
	raw, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("error occurred during matching manifest: %w", err)
	}
	var o map[string]any
	if err := json.Unmarshal(raw, &o); err != nil {
		return fmt.Errorf("error occurred during matching manifest: %w", err)
	}
	ann := annotations(o)
	if _, ok := ann[keys.key("resourceBundleRef", 0)]; ok {
		return &UnsupportedError{"validate.manifests with manifests in an OCI image (annotation " + keys.key("resourceBundleRef", 0) + ")"}
	}
	ignore := ignoreFields(o, opts.IgnoreFields, keys)

	msg, ok := ann[keys.key("message", 0)]
	if !ok {
		return &NotFoundError{"YAML manifest not found for this resource: message not found"}
	}
	max := opts.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	gz, err := base64.StdEncoding.DecodeString(msg)
	if err != nil {
		return fmt.Errorf("YAML manifest not found for this resource: failed to decode base64 message in the annotation: %w", err)
	}
	signed, err := gunzip(gz, max)
	if err != nil {
		return err
	}
	docs, err := artifactYAMLs(signed, max, b)
	if err != nil {
		if berr := b.Err(); berr != nil {
			return berr
		}
		return fmt.Errorf("YAML manifest not found for this resource: failed to read YAMLs in the gzipped message: %w", err)
	}
	cands, err := findManifests(docs, o, ignore, v.compiled, b)
	if err != nil {
		return err
	}
	if len(cands) == 0 {
		return &NotFoundError{"YAML manifest not found for this resource: failed to find a YAML manifest in the gzipped message"}
	}
	var first *Diff
	for i, m := range cands {
		ok, d, err := directMatch(m, o, ignore, v.compiled, b)
		if err != nil {
			return err
		}
		if ok {
			c.matched = true
			break
		}
		if i == 0 {
			first = d
		}
	}
	if !c.matched {
		c.diff = first
	}

	// The signatures: signature, signature_1, ... with the message.
	c.message = signed
	for i := 0; ; i++ {
		sig, ok := ann[keys.key("signature", i)]
		if !ok {
			break
		}
		for _, base := range []string{"certificate", "bundle"} {
			if _, ok := ann[keys.key(base, i)]; ok {
				return &UnsupportedError{"validate.manifests signatures with a certificate or bundle annotation (" + keys.key(base, i) + ", checked against Rekor)"}
			}
		}
		c.sigs = append(c.sigs, sig)
		if i > len(ann) {
			break
		}
	}
	return nil
}

// Result is the verification of a resource with one key.
type Result struct {
	// Verified: the manifest matches and a signature verifies.
	Verified bool
	// Diff, when the manifest does not match, is what differs (for the
	// first candidate manifest).
	Diff *Diff
}

// Verify checks the signatures of the resource with key. The error is a
// *NotFoundError (message or signature missing), an *UnsupportedError, or
// a verification error.
func (c *Checked) Verify(key *Key) (*Result, error) {
	if c.err != nil {
		return nil, c.err
	}
	if len(c.sigs) == 0 {
		return nil, &NotFoundError{"failed to verify signature: signature not found"}
	}
	if key == nil || key.pub == nil {
		return nil, errors.New("failed to verify signature: failed to judge signature type from public key configuration")
	}
	var trials []string
	for j, sig := range c.sigs {
		err := key.verify(c.message, sig)
		if err == nil {
			return &Result{Verified: c.matched, Diff: c.diff}, nil
		}
		trials = append(trials, fmt.Sprintf("[publickey 1/1] [signature %d/%d] error: cosign.VerifyBlobCmd.Exec() returned an error: %s", j+1, len(c.sigs), err))
	}
	b, _ := json.Marshal(trials)
	return nil, fmt.Errorf("failed to verify signature: verification failed for %d signature. all trials: %s", len(c.sigs), b)
}

type annotationKeys struct{ domain string }

func (k annotationKeys) key(base string, i int) string {
	s := k.domain + "/" + base
	if i > 0 {
		s = fmt.Sprintf("%s_%d", s, i)
	}
	return s
}

func annotations(o map[string]any) map[string]string {
	meta, _ := o["metadata"].(map[string]any)
	in, _ := meta["annotations"].(map[string]any)
	out := make(map[string]string, len(in))
	for k, v := range in {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// gunzip is the library's GzipDecompress (the input itself when it is not
// gzip), bounded by max.
func gunzip(in []byte, max int) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(in))
	if err != nil {
		return in, nil
	}
	out, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return in, nil
	}
	if len(out) > max {
		return nil, fmt.Errorf("YAML manifest not found for this resource: the message decompresses to more than %d bytes (limit MaxBytes)", max)
	}
	return out, nil
}

// artifactYAMLs is the library's GetYAMLsInArtifact: the YAML documents
// of the message, raw YAML or a tar.gz archive whose .yaml and .yml files
// are read in path order.
func artifactYAMLs(blob []byte, max int, b *engine.Budget) ([]map[string]any, error) {
	if len(blob) < 2 || blob[0] != 0x1f || blob[1] != 0x8b {
		return splitYAML(blob, b)
	}
	zr, err := gzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		return nil, fmt.Errorf("gzip.NewReader() failed while decompressing tar gz: %w", err)
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	total := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("tarReader.Next() failed while decompressing tar gz: %w", err)
		}
		if strings.HasPrefix(h.Name, "..") {
			continue
		}
		switch h.Typeflag {
		case tar.TypeDir:
		case tar.TypeReg:
			b, err := io.ReadAll(io.LimitReader(tr, int64(max-total)+1))
			if err != nil {
				return nil, fmt.Errorf("io.Copy() failed while decompressing tar gz: %w", err)
			}
			total += len(b)
			if total > max {
				return nil, fmt.Errorf("the archive's files hold more than %d bytes (limit MaxBytes)", max)
			}
			files[path.Clean("/"+h.Name)] = b
		default:
			return nil, fmt.Errorf("faced uknown type %s in %s while decompressing tar gz", string(h.Typeflag), h.Name)
		}
	}
	names := make([]string, 0, len(files))
	for n := range files {
		if ext := path.Ext(n); ext == ".yaml" || ext == ".yml" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var docs []map[string]any
	for _, n := range names {
		// A file whose first document is not a resource is skipped.
		if err := yamlSteps(b, files[n]); err != nil {
			return nil, err
		}
		var first map[string]any
		if yaml.Unmarshal(files[n], &first) != nil || first["kind"] == nil {
			continue
		}
		more, err := splitYAML(files[n], b)
		if err != nil {
			return nil, err
		}
		docs = append(docs, more...)
	}
	return docs, nil
}

// splitYAML splits a multi-document YAML stream into its objects,
// skipping documents that are not objects.
func splitYAML(stream []byte, b *engine.Budget) ([]map[string]any, error) {
	var out []map[string]any
	for _, part := range splitDocuments(stream) {
		if err := yamlSteps(b, part); err != nil {
			return nil, err
		}
		var m map[string]any
		if err := yaml.Unmarshal(part, &m); err != nil || m == nil {
			continue
		}
		out = append(out, m)
	}
	return out, nil
}

// yamlSteps charges b for parsing doc: a step per 64 bytes, one at least.
func yamlSteps(b *engine.Budget, doc []byte) error {
	return b.Step(1 + len(doc)/64)
}

// splitDocuments cuts a YAML stream at its separator lines, as
// apimachinery's YAMLReader: "---" followed by nothing or a comment.
func splitDocuments(b []byte) [][]byte {
	var out [][]byte
	var cur []byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("---")); ok {
			if rest = bytes.TrimSpace(rest); len(rest) > 0 && rest[0] != '#' {
				cur = append(cur, line...)
				continue
			}
			out = append(out, cur)
			cur = nil
			continue
		}
		cur = append(cur, line...)
	}
	return append(out, cur)
}
