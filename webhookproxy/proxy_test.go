package webhookproxy_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/internal/testing/servertest"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/server"
	"github.com/verdict-policy/verdict/webhookproxy"
)

const nsPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: require-ns-purpose-label
spec:
  rules:
    - name: require-ns-purpose-label
      match:
        any:
          - resources:
              kinds:
                - Namespace
      validate:
        failureAction: Enforce
        message: 'You must have label ` + "`purpose`" + ` with value ` + "`production`" + ` set on all new namespaces.'
        pattern:
          metadata:
            labels:
              purpose: production
`

const labelPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: add-team-label
spec:
  rules:
    - name: add-team
      match:
        any:
          - resources:
              kinds: [ConfigMap]
      mutate:
        patchStrategicMerge:
          metadata:
            labels:
              +(team): platform
`

const auditPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: want-owner
spec:
  emitWarning: true
  validationFailureAction: Audit
  rules:
    - name: owner
      match:
        any:
          - resources:
              kinds: [ConfigMap]
      validate:
        message: "label owner is expected"
        pattern:
          metadata:
            labels:
              owner: "?*"
`

// startDecisionServer runs a decision server on loopback with the given
// policy files and returns a Client of it, once it serves.
func startDecisionServer(tb testing.TB, policies ...string) *client.Client {
	tb.Helper()
	return startDecisionServerWith(tb, server.Options{}, policies...)
}

// startDecisionServerWith is startDecisionServer with server options (the
// policy source is added to opts.Sources).
func startDecisionServerWith(tb testing.TB, opts server.Options, policies ...string) *client.Client {
	tb.Helper()
	dir := tb.TempDir()
	for i, p := range policies {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%d.yaml", i)), []byte(p), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	opts.Sources = append(opts.Sources, &server.FolderSource{Dir: dir})
	c := servertest.Dial(tb, servertest.Start(tb, opts), client.Options{})
	return c
}

// proxy is a webhook proxy on loopback HTTPS.
type proxy struct {
	url      string
	client   *http.Client
	registry *prometheus.Registry
}

// startProxy serves a Handler of d with opts on loopback with a
// self-signed certificate (or cfg, when set) and returns an HTTP client
// trusting it.
func startProxy(tb testing.TB, d webhookproxy.Decider, opts webhookproxy.Options, cfg *tls.Config, ca []byte) *proxy {
	tb.Helper()
	if cfg == nil {
		var err error
		cfg, ca, err = webhookproxy.SelfSigned([]string{"127.0.0.1", "localhost"}, time.Hour)
		if err != nil {
			tb.Fatal(err)
		}
	}
	opts.Registry = prometheus.NewRegistry()
	h, err := webhookproxy.New(d, opts)
	if err != nil {
		tb.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- webhookproxy.Serve(ctx, lis, cfg, h, nil) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("Serve: %v", err)
		}
	})
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		tb.Fatal("CA bundle: no certificate")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: 64}
	tb.Cleanup(tr.CloseIdleConnections)
	return &proxy{url: "https://" + lis.Addr().String(), client: &http.Client{Transport: tr, Timeout: 10 * time.Second}, registry: opts.Registry}
}

// review is the AdmissionReview of a request of kind on object.
func review(uid, op, kind, namespace, object string) string {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: kind}
	gvr, _ := meta.UnsafeGuessKindToResource(gvk)
	return reviewOf(uid, op, gvk, gvr, namespace, object)
}

// reviewOf is review of a resource gvr whose kind is gvk.
func reviewOf(uid, op string, gvk schema.GroupVersionKind, gvr schema.GroupVersionResource, namespace, object string) string {
	obj, old := object, "null"
	if op == "DELETE" {
		obj, old = "null", object
	}
	return fmt.Sprintf(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":%q,
"kind":{"group":%q,"version":%q,"kind":%q},"resource":{"group":%q,"version":%q,"resource":%q},
"operation":%q,"namespace":%q,"userInfo":{"username":"alice"},"object":%s,"oldObject":%s}}`,
		uid, gvk.Group, gvk.Version, gvk.Kind, gvr.Group, gvr.Version, gvr.Resource, op, namespace, obj, old)
}

// post sends body to path and returns the status code and the decoded
// response body.
func (p *proxy) post(tb testing.TB, path, body string) (int, map[string]any, string) {
	tb.Helper()
	resp, err := p.client.Post(p.url+path, "application/json", strings.NewReader(body))
	if err != nil {
		tb.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	var m map[string]any
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(raw, &m); err != nil {
			tb.Fatalf("POST %s: response not JSON: %v: %s", path, err, raw)
		}
	}
	return resp.StatusCode, m, string(raw)
}

func responseOf(m map[string]any) map[string]any {
	r, _ := m["response"].(map[string]any)
	return r
}

const (
	nsDevelopment = `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"prod-bus-app1","labels":{"purpose":"development"}}}`
	nsProduction  = `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"prod-bus-app1","labels":{"purpose":"production"}}}`
	configMap     = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"shop"},"data":{"a":"b"}}`
)

func TestProxyWithDecisionServer(t *testing.T) {
	c := startDecisionServer(t, nsPolicy, labelPolicy, auditPolicy)
	p := startProxy(t, c, webhookproxy.Options{}, nil, nil)

	tests := []struct {
		name     string
		givePath string
		giveBody string
		want     map[string]any
	}{{
		name:     "namespace without purpose production is blocked",
		givePath: "/validate",
		giveBody: review("u1", "CREATE", "Namespace", "", nsDevelopment),
		want: map[string]any{"uid": "u1", "allowed": false, "status": map[string]any{
			"metadata": map[string]any{}, "status": "Failure", "reason": "Forbidden", "code": 403.0,
			"message": denyMessage,
		}},
	}, {
		name:     "namespace with purpose production is allowed",
		givePath: "/validate",
		giveBody: review("u2", "CREATE", "Namespace", "", nsProduction),
		want:     map[string]any{"uid": "u2", "allowed": true},
	}, {
		name:     "audit failure is a warning",
		givePath: "/validate",
		giveBody: review("u3", "CREATE", "ConfigMap", "shop", configMap),
		want: map[string]any{"uid": "u3", "allowed": true, "warnings": []any{
			"policy want-owner.owner: validation error: label owner is expected. rule owner failed at path /metadata/labels/owner/",
		}},
	}, {
		name:     "mutation returns a JSON patch",
		givePath: "/mutate",
		giveBody: review("u4", "CREATE", "ConfigMap", "shop", configMap),
		want: map[string]any{"uid": "u4", "allowed": true, "patchType": "JSONPatch",
			"patch": []any{map[string]any{"op": "add", "path": "/metadata/labels", "value": map[string]any{"team": "platform"}}}},
	}, {
		name:     "delete of a namespace is evaluated on the old object",
		givePath: "/validate",
		giveBody: review("u5", "DELETE", "Namespace", "", nsDevelopment),
		want:     map[string]any{"uid": "u5", "allowed": true},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, raw := p.post(t, tt.givePath, tt.giveBody)
			if code != http.StatusOK {
				t.Fatalf("POST %s = %d %s, want 200", tt.givePath, code, raw)
			}
			got := responseOf(body)
			if s, ok := got["patch"].(string); ok {
				got["patch"] = decodePatch(t, s)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("POST %s response mismatch (-want +got):\n%s", tt.givePath, diff)
			}
		})
	}
}

func decodePatch(tb testing.TB, s string) any {
	tb.Helper()
	var b []byte
	if err := json.Unmarshal([]byte(`"`+s+`"`), &b); err != nil { // base64, as []byte encodes
		tb.Fatalf("patch not base64: %v", err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		tb.Fatalf("patch not JSON: %v", err)
	}
	return v
}

// countingDecider counts calls and forwards them to d.
type countingDecider struct {
	d     webhookproxy.Decider
	calls atomic.Int64
}

func (c *countingDecider) Evaluate(ctx context.Context, req *verdictv1.EvaluateRequest, opts ...grpc.CallOption) (*verdictv1.EvaluateResponse, error) {
	c.calls.Add(1)
	return c.d.Evaluate(ctx, req, opts...)
}

// downDecider is a Client of an address nobody listens on.
func downDecider(tb testing.TB) *client.Client {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	c, err := client.Dial(addr, client.Options{MaxAttempts: 1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

func TestProxyDeciderDown(t *testing.T) {
	tests := []struct {
		name         string
		giveFailOpen bool
		wantAllowed  bool
		wantMode     string
	}{
		{name: "fail closed", giveFailOpen: false, wantAllowed: false, wantMode: "closed"},
		{name: "fail open", giveFailOpen: true, wantAllowed: true, wantMode: "open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startProxy(t, downDecider(t), webhookproxy.Options{FailOpen: tt.giveFailOpen, Timeout: 2 * time.Second}, nil, nil)
			code, body, raw := p.post(t, "/validate", review("u1", "CREATE", "Namespace", "", nsProduction))
			if code != http.StatusOK {
				t.Fatalf("POST /validate = %d %s, want 200", code, raw)
			}
			got := responseOf(body)
			if got["uid"] != "u1" || got["allowed"] != tt.wantAllowed {
				t.Errorf("response = %v, want uid u1 allowed %v", got, tt.wantAllowed)
			}
			msg := fmt.Sprint(got["warnings"])
			if !tt.wantAllowed {
				st, _ := got["status"].(map[string]any)
				msg = fmt.Sprint(st["message"])
			}
			if !strings.Contains(msg, "no policy decision") || !strings.Contains(msg, "Unavailable") {
				t.Errorf("failure message = %q, want the cause named", msg)
			}
			if n := counterOf(t, p.registry, "verdict_webhook_decider_failures_total", "mode", tt.wantMode); n != 1 {
				t.Errorf("verdict_webhook_decider_failures_total{mode=%q} = %v, want 1", tt.wantMode, n)
			}
		})
	}
}

// counterOf returns the sum of the counters of metric name with
// label = value.
func counterOf(tb testing.TB, reg *prometheus.Registry, name, label, value string) float64 {
	tb.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

func TestProxyBadRequests(t *testing.T) {
	d := &countingDecider{d: downDecider(t)}
	p := startProxy(t, d, webhookproxy.Options{MaxBodyBytes: 4 << 10}, nil, nil)
	tests := []struct {
		name     string
		givePath string
		giveBody string
		wantCode int
	}{
		{name: "bad JSON", givePath: "/validate", giveBody: `{"apiVersion":`, wantCode: http.StatusBadRequest},
		{name: "wrong kind", givePath: "/validate", giveBody: `{"apiVersion":"admission.k8s.io/v1","kind":"Pod","request":{"uid":"u"}}`, wantCode: http.StatusBadRequest},
		{name: "v1beta1", givePath: "/mutate", giveBody: `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"u"}}`, wantCode: http.StatusBadRequest},
		{name: "no request", givePath: "/validate", giveBody: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, wantCode: http.StatusBadRequest},
		{name: "no uid", givePath: "/validate", giveBody: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"operation":"CREATE"}}`, wantCode: http.StatusBadRequest},
		{name: "object not an object", givePath: "/validate", giveBody: review("u", "CREATE", "Pod", "", `[1,2]`), wantCode: http.StatusBadRequest},
		{name: "unknown operation", givePath: "/validate", giveBody: review("u", "PATCH", "Pod", "", configMap), wantCode: http.StatusBadRequest},
		{name: "oversized body", givePath: "/validate", giveBody: review("u", "CREATE", "ConfigMap", "shop",
			`{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"`+strings.Repeat("x", 8<<10)+`"}}`), wantCode: http.StatusRequestEntityTooLarge},
		{name: "unknown path", givePath: "/other", giveBody: `{}`, wantCode: http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, raw := p.post(t, tt.givePath, tt.giveBody)
			if code != tt.wantCode {
				t.Errorf("POST %s (%s) = %d %q, want %d", tt.givePath, tt.name, code, raw, tt.wantCode)
			}
		})
	}
	if n := d.calls.Load(); n != 0 {
		t.Errorf("Decider called %d times for bad reviews, want 0", n)
	}
}

func TestProxyRefusesPlainHTTP(t *testing.T) {
	d := &countingDecider{d: downDecider(t)}
	p := startProxy(t, d, webhookproxy.Options{}, nil, nil)
	plain := strings.Replace(p.url, "https://", "http://", 1)
	resp, err := http.Post(plain+"/validate", "application/json", strings.NewReader(review("u", "CREATE", "Namespace", "", nsProduction)))
	if err != nil {
		return // the connection was refused outright: refused too
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("plain HTTP POST = %d, want 400", resp.StatusCode)
	}
	if n := d.calls.Load(); n != 0 {
		t.Errorf("Decider called %d times over plain HTTP, want 0", n)
	}
}

// writeKeyPair writes the certificate of cfg to cert and key PEM files.
func writeKeyPair(tb testing.TB, cfg *tls.Config, certFile, keyFile string) {
	tb.Helper()
	c := cfg.Certificates[0]
	keyDER, err := x509.MarshalECPrivateKey(c.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		tb.Fatal(err)
	}
}

func TestCertReload(t *testing.T) {
	hosts := []string{"127.0.0.1"}
	cfg1, ca1, err := webhookproxy.SelfSigned(hosts, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cfg2, ca2, err := webhookproxy.SelfSigned(hosts, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writeKeyPair(t, cfg1, certFile, keyFile)
	r, err := webhookproxy.NewCertReloader(certFile, keyFile)
	if err != nil {
		t.Fatalf("NewCertReloader: %v", err)
	}
	p := startProxy(t, downDecider(t), webhookproxy.Options{}, r.TLSConfig(), ca1)
	addr := strings.TrimPrefix(p.url, "https://")

	if err := handshake(addr, ca1); err != nil {
		t.Fatalf("handshake trusting the first CA: %v", err)
	}
	writeKeyPair(t, cfg2, certFile, keyFile)
	later := time.Now().Add(time.Minute)
	for _, f := range []string{certFile, keyFile} {
		if err := os.Chtimes(f, later, later); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1100 * time.Millisecond) // the reloader looks at most once per second
	if err := handshake(addr, ca2); err != nil {
		t.Errorf("handshake trusting the second CA after the files changed: %v", err)
	}
	if err := handshake(addr, ca1); err == nil {
		t.Errorf("handshake trusting the first CA after the files changed succeeded, want an unknown authority")
	}
}

func handshake(addr string, ca []byte) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool})
	if err != nil {
		return err
	}
	return conn.Close()
}
