package manifests_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/verdict-policy/verdict/engine/manifests"
	"sigs.k8s.io/yaml"
)

// signer signs manifests as k8s-manifest-sigstore's `kubectl sigstore
// sign` does: the YAML files in a tar.gz archive, gzipped again and base64
// encoded in the message annotation; the signature (cosign sign-blob: the
// SHA-256 of the tar.gz bytes) base64 encoded.
type signer struct {
	priv crypto.Signer
	pem  string
}

func newSigner(t testing.TB, priv crypto.Signer) *signer {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	return &signer{priv: priv, pem: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))}
}

func ecdsaSigner(t testing.TB) *signer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return newSigner(t, k)
}

func (s *signer) key(t testing.TB) *manifests.Key {
	t.Helper()
	k, err := manifests.ParsePublicKey(s.pem)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// tarGz archives files (name → content) in order.
func tarGz(t testing.TB, files ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f[0], Mode: 0o644, Size: int64(len(f[1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func (s *signer) sign(t testing.TB, archive []byte) string {
	t.Helper()
	var sig []byte
	var err error
	switch s.priv.(type) {
	case ed25519.PrivateKey:
		sig, err = s.priv.Sign(rand.Reader, archive, crypto.Hash(0))
	default:
		d := sha256.Sum256(archive)
		sig, err = s.priv.Sign(rand.Reader, d[:], crypto.SHA256)
	}
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(sig)
}

func message(t testing.TB, archive []byte) string {
	return base64.StdEncoding.EncodeToString(gz(t, archive))
}

const serviceYAML = `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: 80
    protocol: TCP
  selector:
    app: web
`

func object(t *testing.T, y string, annotations map[string]string) map[string]any {
	t.Helper()
	var o map[string]any
	if err := yaml.Unmarshal([]byte(y), &o); err != nil {
		t.Fatal(err)
	}
	meta := o["metadata"].(map[string]any)
	meta["namespace"] = "default"
	if len(annotations) > 0 {
		a := map[string]any{}
		for k, v := range annotations {
			a[k] = v
		}
		meta["annotations"] = a
	}
	return o
}

func TestVerify(t *testing.T) {
	s := ecdsaSigner(t)
	other := ecdsaSigner(t)
	archive := tarGz(t, [2]string{"service.yaml", serviceYAML})
	msg, sig := message(t, archive), s.sign(t, archive)
	signed := map[string]string{"cosign.sigstore.dev/message": msg, "cosign.sigstore.dev/signature": sig}
	tampered := strings.Replace(serviceYAML, "port: 80", "port: 81", 1)

	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rs := newSigner(t, rsaKey)
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	es := newSigner(t, edKey)

	tests := []struct {
		name     string
		yaml     string
		ann      map[string]string
		opts     manifests.Options
		key      *manifests.Key
		want     *manifests.Result
		wantDiff string
		// wantErr is the error's text; notFound whether it is a
		// *NotFoundError (a failed verification in Kyverno).
		wantErr  string
		notFound bool
	}{
		{name: "signed", yaml: serviceYAML, ann: signed, key: s.key(t), want: &manifests.Result{Verified: true}},
		{
			name: "tampered field", yaml: tampered, ann: signed, key: s.key(t),
			want:     &manifests.Result{},
			wantDiff: `{"items":[{"key":"spec.ports.0.port","values":{"after":81,"before":80}}]}`,
		},
		{
			name: "added field", yaml: serviceYAML + "  externalName: evil\n", ann: signed, key: s.key(t),
			want:     &manifests.Result{},
			wantDiff: `{"items":[{"key":"spec.externalName","values":{"after":"evil","before":null}}]}`,
		},
		{
			name: "wrong key", yaml: serviceYAML, ann: signed, key: other.key(t),
			wantErr: `failed to verify signature: verification failed for 1 signature. all trials: ["[publickey 1/1] [signature 1/1] error: cosign.VerifyBlobCmd.Exec() returned an error: invalid signature when validating ASN.1 encoded signature"]`,
		},
		{
			name: "no annotations", yaml: serviceYAML, key: s.key(t),
			wantErr: "YAML manifest not found for this resource: message not found", notFound: true,
		},
		{
			name: "message without signature", yaml: serviceYAML, ann: map[string]string{"cosign.sigstore.dev/message": msg}, key: s.key(t),
			wantErr: "failed to verify signature: signature not found", notFound: true,
		},
		{
			name: "no manifest of the kind", yaml: strings.Replace(serviceYAML, "kind: Service", "kind: ConfigMap", 1), ann: signed, key: s.key(t),
			wantErr: "YAML manifest not found for this resource: failed to find a YAML manifest in the gzipped message", notFound: true,
		},
		{
			name: "ignored field changed", yaml: tampered, ann: signed, key: s.key(t),
			opts: manifests.Options{IgnoreFields: []manifests.FieldBinding{{Fields: []string{"spec.ports.*.port"}, Objects: []manifests.ObjectRef{{Kind: "Service"}}}}},
			want: &manifests.Result{Verified: true},
		},
		{
			name: "ignore fields of another kind", yaml: tampered, ann: signed, key: s.key(t),
			opts:     manifests.Options{IgnoreFields: []manifests.FieldBinding{{Fields: []string{"spec.ports.*.port"}, Objects: []manifests.ObjectRef{{Kind: "Pod"}}}}},
			want:     &manifests.Result{},
			wantDiff: `{"items":[{"key":"spec.ports.0.port","values":{"after":81,"before":80}}]}`,
		},
		{
			// The defaults ignore a Service's clusterIP and type, and the
			// status of every kind.
			name: "default ignored fields", yaml: serviceYAML + "  clusterIP: 10.0.0.1\n  type: ClusterIP\nstatus:\n  loadBalancer: {ingress: [{ip: 1.2.3.4}]}\n",
			ann: signed, key: s.key(t), want: &manifests.Result{Verified: true},
		},
		{
			name: "second signature", yaml: serviceYAML, key: s.key(t), want: &manifests.Result{Verified: true},
			ann: map[string]string{"cosign.sigstore.dev/message": msg, "cosign.sigstore.dev/signature": other.sign(t, archive), "cosign.sigstore.dev/signature_1": sig},
		},
		{
			name: "annotation domain", yaml: serviceYAML, key: s.key(t), want: &manifests.Result{Verified: true},
			opts: manifests.Options{Domain: "example.com"},
			ann:  map[string]string{"example.com/message": msg, "example.com/signature": sig},
		},
		{
			name: "annotation domain not used", yaml: serviceYAML, key: s.key(t), ann: signed,
			opts:    manifests.Options{Domain: "example.com"},
			wantErr: "YAML manifest not found for this resource: message not found", notFound: true,
		},
		{
			name: "RSA key", yaml: serviceYAML, key: rs.key(t), want: &manifests.Result{Verified: true},
			ann: map[string]string{"cosign.sigstore.dev/message": msg, "cosign.sigstore.dev/signature": rs.sign(t, archive)},
		},
		{
			name: "Ed25519 key", yaml: serviceYAML, key: es.key(t), want: &manifests.Result{Verified: true},
			ann: map[string]string{"cosign.sigstore.dev/message": msg, "cosign.sigstore.dev/signature": es.sign(t, archive)},
		},
		{
			name: "key not loaded", yaml: serviceYAML, ann: signed,
			wantErr: "failed to verify signature: failed to judge signature type from public key configuration",
		},
		{
			name: "canonical image", key: s.key(t), want: &manifests.Result{Verified: true},
			yaml: "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: docker.io/nginx:latest\n",
			ann: func() map[string]string {
				a := tarGz(t, [2]string{"pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: nginx:latest\n"})
				return map[string]string{"cosign.sigstore.dev/message": message(t, a), "cosign.sigstore.dev/signature": s.sign(t, a)}
			}(),
		},
		{
			name: "manifest among several", yaml: serviceYAML, key: s.key(t), want: &manifests.Result{Verified: true},
			ann: func() map[string]string {
				a := tarGz(t, [2]string{"a/other.yaml", strings.Replace(serviceYAML, "name: web", "name: api", 1) + "--- # the signed Service\n" + serviceYAML},
					[2]string{"a/README.md", "not yaml"})
				return map[string]string{"cosign.sigstore.dev/message": message(t, a), "cosign.sigstore.dev/signature": s.sign(t, a)}
			}(),
		},
		{
			name: "certificate needs Rekor", yaml: serviceYAML, key: s.key(t),
			ann:     map[string]string{"cosign.sigstore.dev/message": msg, "cosign.sigstore.dev/signature": sig, "cosign.sigstore.dev/certificate": "x"},
			wantErr: "validate.manifests signatures with a certificate or bundle annotation (cosign.sigstore.dev/certificate, checked against Rekor) is not supported yet",
		},
		{
			name: "manifests in an image", yaml: serviceYAML, key: s.key(t),
			ann:     map[string]string{"cosign.sigstore.dev/resourceBundleRef": "ghcr.io/x/y:1"},
			wantErr: "validate.manifests with manifests in an OCI image (annotation cosign.sigstore.dev/resourceBundleRef) is not supported yet",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := manifests.Check(object(t, tt.yaml, tt.ann), tt.opts).Verify(tt.key)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Verify(%s) error = %v, want %s", tt.name, err, tt.wantErr)
				}
				var nf *manifests.NotFoundError
				if errors.As(err, &nf) != tt.notFound {
					t.Errorf("Verify(%s) error is a NotFoundError = %v, want %v", tt.name, !tt.notFound, tt.notFound)
				}
				return
			}
			if err != nil {
				t.Fatalf("Verify(%s) error = %v", tt.name, err)
			}
			if got.Diff.String() != tt.wantDiff {
				t.Errorf("Verify(%s) diff = %s, want %s", tt.name, got.Diff, tt.wantDiff)
			}
			got.Diff = nil
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Verify(%s) mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestMaxBytes checks the bound on the decompressed message (the tar.gz
// archive, then its files), at the limit and over it.
func TestMaxBytes(t *testing.T) {
	s := ecdsaSigner(t)
	content := serviceYAML + "# " + strings.Repeat("x", 4000) + "\n"
	archive := tarGz(t, [2]string{"service.yaml", content})
	ann := map[string]string{"cosign.sigstore.dev/message": message(t, archive), "cosign.sigstore.dev/signature": s.sign(t, archive)}
	if len(archive) >= len(content) {
		t.Fatalf("archive of %d bytes, want it smaller than its %d bytes of content", len(archive), len(content))
	}
	tests := []struct {
		max     int
		wantErr string
	}{
		{max: len(content)},
		{max: len(content) - 1, wantErr: "the archive's files hold more than " + strconv.Itoa(len(content)-1) + " bytes (limit MaxBytes)"},
		{max: len(archive), wantErr: "the archive's files hold more than"},
		{max: len(archive) - 1, wantErr: "YAML manifest not found for this resource: the message decompresses to more than " + strconv.Itoa(len(archive)-1) + " bytes (limit MaxBytes)"},
	}
	for _, tt := range tests {
		_, err := manifests.Check(object(t, serviceYAML, ann), manifests.Options{MaxBytes: tt.max}).Verify(s.key(t))
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("Verify(MaxBytes %d) error = %v, want none", tt.max, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("Verify(MaxBytes %d) error = %v, want one containing %q", tt.max, err, tt.wantErr)
		}
	}
}

// TestDiff compares signed manifests with changed resources; the diffs
// are those kyverno test v1.19.0 reports for the same pairs (its message
// "failed to verify signature. diff found; <diff>").
func TestDiff(t *testing.T) {
	s := ecdsaSigner(t)
	tests := []struct {
		name, signed, resource string
		wantDiff               string
	}{
		{
			name:     "renamed resource found by value",
			signed:   "apiVersion: v1\nkind: Service\nmetadata:\n  name: renamed\nspec:\n  ports:\n  - port: 80\n",
			resource: "apiVersion: v1\nkind: Service\nmetadata:\n  name: renamed2\nspec:\n  ports:\n  - port: 80\n",
			wantDiff: `{"items":[{"key":"metadata.name","values":{"after":"renamed2","before":"renamed"}}]}`,
		},
		{
			name:     "list reordered",
			signed:   "apiVersion: v1\nkind: Service\nmetadata:\n  name: reorder\nspec:\n  ports:\n  - port: 80\n    name: a\n  - port: 81\n    name: b\n",
			resource: "apiVersion: v1\nkind: Service\nmetadata:\n  name: reorder\nspec:\n  ports:\n  - port: 81\n    name: b\n  - port: 80\n    name: a\n",
			wantDiff: `{"items":[{"key":"spec.ports.0.name","values":{"after":"b","before":"a"}},{"key":"spec.ports.0.port","values":{"after":81,"before":80}},{"key":"spec.ports.1.name","values":{"after":"a","before":"b"}},{"key":"spec.ports.1.port","values":{"after":80,"before":81}}]}`,
		},
		{
			name:     "value of another type",
			signed:   "apiVersion: v1\nkind: Service\nmetadata:\n  name: typed\nspec:\n  ports:\n  - port: 80\n",
			resource: "apiVersion: v1\nkind: Service\nmetadata:\n  name: typed\nspec:\n  ports:\n  - port: \"80\"\n",
			wantDiff: `{"items":[{"key":"spec.ports.0.port","values":{"after":"(type: string) 80","before":"(type: float64) %!s(float64=80)"}}]}`,
		},
		{
			name:     "Pod defaults, namespace and canonical image ignored",
			signed:   "apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod\n  namespace: other\nspec:\n  containers:\n  - name: c\n    image: nginx\n",
			resource: "apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod\nspec:\n  containers:\n  - name: c\n    image: nginx:latest\n    imagePullPolicy: Always\n  dnsPolicy: ClusterFirst\n  restartPolicy: Always\n",
		},
		{
			name:     "empty string like an absent key",
			signed:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \"\"\n  b: x\n",
			resource: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  b: x\n  c: \"\"\n",
		},
		{
			name:     "replicas changed",
			signed:   "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: dep\nspec:\n  replicas: 1\n",
			resource: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: dep\nspec:\n  replicas: 3\n",
			wantDiff: `{"items":[{"key":"spec.replicas","values":{"after":3,"before":1}}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			archive := tarGz(t, [2]string{"m.yaml", tt.signed})
			ann := map[string]string{"cosign.sigstore.dev/message": message(t, archive), "cosign.sigstore.dev/signature": s.sign(t, archive)}
			got, err := manifests.Check(object(t, tt.resource, ann), manifests.Options{}).Verify(s.key(t))
			if err != nil {
				t.Fatalf("Verify(%s) error = %v", tt.name, err)
			}
			if got.Verified != (tt.wantDiff == "") || got.Diff.String() != tt.wantDiff {
				t.Errorf("Verify(%s) = verified %v, diff %s, want diff %s", tt.name, got.Verified, got.Diff, tt.wantDiff)
			}
		})
	}
}
