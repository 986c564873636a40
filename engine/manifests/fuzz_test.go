package manifests_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/manifests"
)

// gunzipOrSelf is the bytes a signature covers: the message decompressed,
// or the message itself when it is not gzip.
func gunzipOrSelf(b []byte) []byte {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return b
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return b
	}
	return out
}

// FuzzCheck checks resources whose message and signature annotations are
// anything an admission request may carry: Check and Verify never panic,
// and a resource is verified only when its message is the signed one.
func FuzzCheck(f *testing.F) {
	s := ecdsaSigner(f)
	key := s.key(f)
	archive := tarGz(f, [2]string{"service.yaml", serviceYAML})
	signature := s.sign(f, archive)

	f.Add(gz(f, archive), signature)
	f.Add(gz(f, []byte(serviceYAML)), signature)
	f.Add(gz(f, []byte(strings.Repeat("[", 20000)+strings.Repeat("]", 20000))), signature)
	f.Add(gz(f, []byte("a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: &d [*c, *c]\ne: [*d, *d]\n")), "")
	f.Add(gz(f, []byte(strings.Repeat("---\nkind: Service\n", 5000))), signature)
	f.Add(gz(f, bytes.Repeat([]byte{0}, 1<<20)), signature)
	f.Add([]byte("not gzip"), "bm90IGEgc2lnbmF0dXJl")

	const maxBytes = 1 << 20
	f.Fuzz(func(t *testing.T, msg []byte, sig string) {
		o := object(t, serviceYAML, map[string]string{
			"cosign.sigstore.dev/message":   base64.StdEncoding.EncodeToString(msg),
			"cosign.sigstore.dev/signature": sig,
		})
		// The engine's evaluations run with a budget (eval.DefaultMaxSteps).
		b := engine.NewBudget(context.Background(), 5_000_000)
		res, err := manifests.New(manifests.Options{MaxBytes: maxBytes}).Check(o, b).Verify(key)
		if err != nil || !res.Verified {
			return
		}
		if !bytes.Equal(gunzipOrSelf(msg), archive) {
			t.Fatalf("Verify(message %q, signature %q) verified a message that was not signed", msg, sig)
		}
	})
}

// TestCheckBudget checks that the work of reading and searching a message
// (which comes before any signature is checked) is charged to the budget:
// a message of many manifests of the resource's kind stops at the budget,
// and a canceled evaluation stops it too.
func TestCheckBudget(t *testing.T) {
	many := []byte(strings.Repeat("---\nkind: Service\nmetadata: {name: other}\nspec: {a: b}\n", 2000))
	o := object(t, serviceYAML, map[string]string{
		"cosign.sigstore.dev/message":   base64.StdEncoding.EncodeToString(gz(t, many)),
		"cosign.sigstore.dev/signature": "eA==",
	})
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name     string
		giveB    *engine.Budget
		wantCode engine.Code // "" for no budget error
	}{
		{name: "no budget", giveB: nil},
		{name: "enough steps", giveB: engine.NewBudget(context.Background(), 1_000_000)},
		{name: "too few steps", giveB: engine.NewBudget(context.Background(), 5_000), wantCode: engine.CodeBudgetExceeded},
		{name: "canceled", giveB: engine.NewBudget(canceled, 0), wantCode: engine.CodeCanceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := manifests.New(manifests.Options{}).Check(o, tt.giveB).Verify(nil)
			var ee *engine.Error
			gotCode := engine.Code("")
			if errors.As(err, &ee) {
				gotCode = ee.Code
			}
			if gotCode != tt.wantCode {
				t.Errorf("Check(2000 manifests, %s).Verify() error = %v, want code %q", tt.name, err, tt.wantCode)
			}
		})
	}
}
