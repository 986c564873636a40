package manifests_test

import (
	"testing"

	"github.com/verdict-policy/verdict/engine/manifests"
)

// BenchmarkVerify checks a signed Service with a Verifier made once: the
// message decoded, the manifest compared, one ECDSA signature verified.
func BenchmarkVerify(b *testing.B) {
	t := &testing.T{}
	s := ecdsaSigner(t)
	archive := tarGz(t, [2]string{"service.yaml", serviceYAML})
	obj := object(t, serviceYAML, map[string]string{"cosign.sigstore.dev/message": message(t, archive), "cosign.sigstore.dev/signature": s.sign(t, archive)})
	key := s.key(t)
	v := manifests.New(manifests.Options{})
	b.ReportAllocs()
	for b.Loop() {
		r, err := v.Check(obj, nil).Verify(key)
		if err != nil || !r.Verified {
			b.Fatalf("Verify = %v, %v", r, err)
		}
	}
}
