package ivpol

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/vpol"
)

const header = `apiVersion: policies.kyverno.io/v1
kind: ImageValidatingPolicy
metadata:
  name: p
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [pods]
`

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name     string
		spec     string
		wantCode engine.Code
		wantPath string
	}{{
		name:     "unknown field",
		spec:     "  attestors:\n  - name: a\n    cosign:\n      ky: {}\n",
		wantCode: engine.CodeDecode,
		wantPath: "spec.attestors[0].cosign.ky",
	}, {
		name:     "cosign attestor without key or identity",
		spec:     "  attestors:\n  - name: a\n    cosign: {}\n",
		wantCode: engine.CodeInvalidPolicy,
		wantPath: "spec.attestors[0].cosign",
	}, {
		name:     "keyless identity without issuer",
		spec:     "  attestors:\n  - name: a\n    cosign:\n      keyless:\n        identities:\n        - subject: me\n",
		wantCode: engine.CodeInvalidPolicy,
		wantPath: "spec.attestors[0].cosign.keyless.identities[0]",
	}, {
		name:     "image expression that is not a list of strings",
		spec:     "  images:\n  - name: x\n    expression: \"1\"\n",
		wantCode: engine.CodeInvalidPolicy,
		wantPath: "spec.images[0].expression",
	}, {
		name:     "glob that does not compile",
		spec:     "  matchImageReferences:\n  - glob: \"[\"\n",
		wantCode: engine.CodeInvalidPolicy,
		wantPath: "spec.matchImageReferences[0].glob",
	}, {
		name:     "image reference expression not bool",
		spec:     "  matchImageReferences:\n  - expression: ref\n",
		wantCode: engine.CodeInvalidPolicy,
		wantPath: "spec.matchImageReferences[0].expression",
	}, {
		name:     "validation calling verifyImageSignatures with a wrong argument",
		spec:     "  validations:\n  - expression: verifyImageSignatures(1, []) > 0\n",
		wantCode: engine.CodeInvalidPolicy,
		wantPath: "spec.validations[0].expression",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := compileYAML(header + tt.spec)
			var es engine.Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("Compile(%s) = %v, want engine.Errors", tt.name, err)
			}
			e := es[0]
			if e.Code != tt.wantCode || e.Path != tt.wantPath {
				t.Errorf("Compile(%s) = %s at %s (%v), want %s at %s", tt.name, e.Code, e.Path, err, tt.wantCode, tt.wantPath)
			}
		})
	}
}

func compileYAML(yaml string) error {
	docs, err := Policies.Decode("test", []byte(yaml))
	if err != nil {
		return err
	}
	_, err = Compile(docs[0])
	return err
}

// TestImagesNotStrings: an images expression whose value is not a list of
// strings is an error result naming the field.
func TestImagesNotStrings(t *testing.T) {
	docs, err := Policies.Decode("test", []byte(`apiVersion: policies.kyverno.io/v1
kind: ImageValidatingPolicy
metadata:
  name: p
spec:
  evaluation:
    mode: JSON
  images:
  - name: bar
    expression: "[object.foo]"
  validations:
  - expression: "true"
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(docs[0])
	if err != nil {
		t.Fatal(err)
	}
	in := vpol.NewInput(vpol.Request{Object: map[string]any{"foo": int64(1)}})
	o := p.Evaluate(context.Background(), in, nil, nil, nil)
	if o == nil || o.Result.Status != vpol.StatusError || o.Path != "spec.images[0].expression" ||
		!strings.HasPrefix(o.Result.Message, `failed to evaluate policy: the images of "bar" must be a list of strings`) {
		t.Errorf("Evaluate() = %+v, want an error at spec.images[0].expression", o)
	}
}

// digestVerifier answers every image with the same digest and verifies
// every signature, counting the calls.
type digestVerifier struct{ calls int }

func (d *digestVerifier) ImageDigest(context.Context, string) (string, error) {
	d.calls++
	return "sha256:0000000000000000000000000000000000000000000000000000000000000000", nil
}

func (d *digestVerifier) VerifyAttestor(context.Context, AttestorCheck) ([]map[string]any, error) {
	d.calls++
	return nil, nil
}

// TestMaxVerifierCalls: an evaluation makes at most MaxVerifierCalls
// calls to the verifier; the call past it is an error naming the limit.
func TestMaxVerifierCalls(t *testing.T) {
	tests := []struct {
		name      string
		calls     int // of verifyImageSignatures, 2 verifier calls each
		wantError bool
	}{
		{name: "at the limit", calls: MaxVerifierCalls / 2},
		{name: "over the limit", calls: MaxVerifierCalls/2 + 1, wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := Policies.Decode("test", []byte(`apiVersion: policies.kyverno.io/v1
kind: ImageValidatingPolicy
metadata:
  name: p
spec:
  evaluation:
    mode: JSON
  attestors:
  - name: a
    cosign:
      key: {data: k}
  validations:
  - expression: "lists.range(`+strconv.Itoa(tt.calls)+`).all(i, verifyImageSignatures('registry.example/app:v1', [attestors.a]) == 1)"
`))
			if err != nil {
				t.Fatal(err)
			}
			p, err := Compile(docs[0])
			if err != nil {
				t.Fatal(err)
			}
			v := &digestVerifier{}
			o := p.Evaluate(context.Background(), vpol.NewInput(vpol.Request{Object: map[string]any{}}), nil, v, nil)
			gotError := o != nil && o.Result.Status == vpol.StatusError && strings.Contains(o.Result.Message, "ivpol.MaxVerifierCalls")
			if gotError != tt.wantError || (!tt.wantError && (o == nil || o.Result.Status != vpol.StatusPass)) {
				t.Errorf("Evaluate(%d calls) = %+v, want error %v", tt.calls, o, tt.wantError)
			}
			if v.calls > MaxVerifierCalls {
				t.Errorf("Evaluate(%d calls) made %d verifier calls, want at most %d", tt.calls, v.calls, MaxVerifierCalls)
			}
		})
	}
}

// TestAuditAnnotationNotString: an audit annotation whose value is not a
// string fails the evaluation at its valueExpression, with CEL's
// conversion error, as Kyverno's ivpol evaluateAuditAnnotations words it
// ("failed to convert auditAnnotation '%s' expression: %w").
func TestAuditAnnotationNotString(t *testing.T) {
	tests := []struct {
		name        string
		expression  string
		wantStatus  vpol.Status
		wantPath    string
		wantMessage string
	}{
		{name: "string", expression: "'v'", wantStatus: vpol.StatusPass},
		{name: "empty string", expression: "''", wantStatus: vpol.StatusPass},
		{
			name: "null", expression: "null", wantStatus: vpol.StatusError,
			wantPath:    "spec.auditAnnotations[0].valueExpression",
			wantMessage: "failed to evaluate policy: failed to convert auditAnnotation 'a' expression: type conversion error from 'null_type' to 'string'",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := Policies.Decode("test", []byte(`apiVersion: policies.kyverno.io/v1
kind: ImageValidatingPolicy
metadata:
  name: p
spec:
  evaluation:
    mode: JSON
  validations:
  - expression: "true"
  auditAnnotations:
  - key: a
    valueExpression: "`+tt.expression+`"
`))
			if err != nil {
				t.Fatal(err)
			}
			p, err := Compile(docs[0])
			if err != nil {
				t.Fatal(err)
			}
			o := p.Evaluate(context.Background(), vpol.NewInput(vpol.Request{Object: map[string]any{}}), nil, nil, nil)
			if o == nil {
				t.Fatalf("Evaluate(%s) = nil, want %s", tt.expression, tt.wantStatus)
			}
			if o.Result.Status != tt.wantStatus || o.Path != tt.wantPath || (tt.wantMessage != "" && o.Result.Message != tt.wantMessage) {
				t.Errorf("Evaluate(%s) = %s at %q: %q, want %s at %q: %q", tt.expression, o.Result.Status, o.Path, o.Result.Message, tt.wantStatus, tt.wantPath, tt.wantMessage)
			}
		})
	}
}
