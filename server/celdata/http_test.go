package celdata_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/server/celdata"
)

// echoServer answers JSON: /object an object, /list a list, /text plain
// text, /echo the request's method, body and X-Team header, /slow after
// 2 s, /bytes/N N bytes of a JSON string, /redirect?to=URL a redirect.
func echoServer(t *testing.T, tlsServer bool) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/object", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"team":"a","count":2}`) })
	mux.HandleFunc("/list", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `[1,2]`) })
	mux.HandleFunc("/text", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `hello`) })
	mux.HandleFunc("/missing", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":"no such thing"}`)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		var body any
		_ = json.NewDecoder(r.Body).Decode(&body)
		_ = json.NewEncoder(w).Encode(map[string]any{"method": r.Method, "body": body, "team": r.Header.Get("X-Team")})
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
		io.WriteString(w, `{}`)
	})
	mux.HandleFunc("/bytes/", func(w http.ResponseWriter, r *http.Request) {
		var n int
		if err := json.Unmarshal([]byte(strings.TrimPrefix(r.URL.Path, "/bytes/")), &n); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		io.WriteString(w, `"`+strings.Repeat("x", n-2)+`"`)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	var srv *httptest.Server
	if tlsServer {
		srv = httptest.NewTLSServer(mux)
	} else {
		srv = httptest.NewServer(mux)
	}
	t.Cleanup(srv.Close)
	return srv
}

// loopbackAllowed are options that reach the test server on loopback:
// every block but loopback's.
func loopbackAllowed(allow ...string) celdata.HTTPOptions {
	return celdata.HTTPOptions{Allow: allow, Block: []string{"169.254.0.0/16", "metadata.google.internal"}}
}

func newHTTP(t *testing.T, opts celdata.HTTPOptions) *celdata.HTTP {
	t.Helper()
	h, err := celdata.NewHTTP(opts)
	if err != nil {
		t.Fatalf("NewHTTP(%+v): %v", opts, err)
	}
	return h
}

// TestHTTPResponses: answers are Kyverno's library's: a JSON object with
// statusCode added, another JSON value under body, null for a body that
// is not JSON; POST sends its body as JSON, with the policy's headers.
func TestHTTPResponses(t *testing.T) {
	srv := echoServer(t, false)
	h := newHTTP(t, loopbackAllowed(srv.URL))
	tests := []struct {
		name string
		call func() (any, error)
		want any
	}{
		{"object", func() (any, error) { return h.Get(t.Context(), srv.URL+"/object", nil) },
			map[string]any{"team": "a", "count": float64(2), "statusCode": 200}},
		{"list", func() (any, error) { return h.Get(t.Context(), srv.URL+"/list", nil) },
			map[string]any{"body": []any{float64(1), float64(2)}, "statusCode": 200}},
		{"not JSON", func() (any, error) { return h.Get(t.Context(), srv.URL+"/text", nil) },
			map[string]any{"body": nil, "statusCode": 200}},
		{"not found", func() (any, error) { return h.Get(t.Context(), srv.URL+"/missing", nil) },
			map[string]any{"error": "no such thing", "statusCode": 404}},
		{"post", func() (any, error) {
			return h.Post(t.Context(), srv.URL+"/echo", map[string]any{"labels": "x"}, map[string]string{"X-Team": "a"})
		}, map[string]any{"method": "POST", "body": map[string]any{"labels": "x"}, "team": "a", "statusCode": 200}},
	}
	for _, tt := range tests {
		got, err := tt.call()
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestHTTPRefused: a URL outside the allowed prefixes, a blocked host, an
// address blocked after DNS resolution and a redirect to either are
// refused before anything is sent there (ErrRefused); so is every URL
// when nothing is allowed.
func TestHTTPRefused(t *testing.T) {
	srv := echoServer(t, false)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	tests := []struct {
		name string
		opts celdata.HTTPOptions
		url  string
	}{
		{"nothing allowed", loopbackAllowed(), srv.URL + "/object"},
		{"another path", loopbackAllowed(srv.URL + "/v1"), srv.URL + "/object"},
		{"a path that only starts like the prefix", loopbackAllowed(srv.URL + "/obj"), srv.URL + "/object"},
		{"another scheme", loopbackAllowed(strings.Replace(srv.URL, "http:", "https:", 1)), srv.URL + "/object"},
		{"another port", loopbackAllowed("http://127.0.0.1:1"), srv.URL + "/object"},
		{"loopback blocked by default", celdata.HTTPOptions{Allow: []string{celdata.AllowAll}}, srv.URL + "/object"},
		{"a name that resolves to loopback", celdata.HTTPOptions{Allow: []string{celdata.AllowAll}}, "http://localhost:" + port + "/object"},
		{"0.0.0.0 reaches the local host", celdata.HTTPOptions{Allow: []string{celdata.AllowAll}}, "http://0.0.0.0:" + port + "/object"},
		{"metadata service address", celdata.HTTPOptions{Allow: []string{celdata.AllowAll}}, "http://169.254.169.254/latest/meta-data/"},
		{"metadata service name", celdata.HTTPOptions{Allow: []string{celdata.AllowAll}}, "http://metadata.google.internal/computeMetadata/v1/"},
		{"blocked host given by the operator", celdata.HTTPOptions{Allow: []string{celdata.AllowAll}, Block: []string{"127.0.0.2/32"}}, "http://127.0.0.2:" + port + "/object"},
		{"a redirect to a URL not allowed", loopbackAllowed(srv.URL + "/redirect"), srv.URL + "/redirect?to=" + srv.URL + "/object"},
		{"a redirect to a blocked address", celdata.HTTPOptions{Allow: []string{celdata.AllowAll}, Block: []string{"169.254.0.0/16"}}, srv.URL + "/redirect?to=http://169.254.169.254/"},
		{"not http", celdata.HTTPOptions{Allow: []string{celdata.AllowAll}}, "file:///etc/passwd"},
	}
	for _, tt := range tests {
		h := newHTTP(t, tt.opts)
		_, err := h.Get(t.Context(), tt.url, nil)
		if !errors.Is(err, celdata.ErrRefused) {
			t.Errorf("Get(%s) with %s = %v, want an error wrapping ErrRefused", tt.url, tt.name, err)
		}
	}
	// The redirect to an allowed URL is followed.
	h := newHTTP(t, loopbackAllowed(srv.URL))
	if _, err := h.Get(t.Context(), srv.URL+"/redirect?to=/object", nil); err != nil {
		t.Errorf("Get(redirect to an allowed URL) = %v, want no error", err)
	}
}

// TestHTTPLimits: a slow response is cut at the call's timeout, or at the
// evaluation's deadline when it comes first; a response at the byte limit
// is read, one byte more fails the call with ErrResponseTooLarge.
func TestHTTPLimits(t *testing.T) {
	srv := echoServer(t, false)
	const limit = 64 << 10
	opts := loopbackAllowed(srv.URL)
	opts.Timeout, opts.MaxResponseBytes = 200*time.Millisecond, limit
	h := newHTTP(t, opts)

	start := time.Now()
	_, err := h.Get(t.Context(), srv.URL+"/slow", nil)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Errorf("Get(/slow) with a 200ms timeout = %v after %v, want DeadlineExceeded within 1s", err, time.Since(start))
	}
	long := newHTTP(t, loopbackAllowed(srv.URL)) // DefaultHTTPTimeout, 3 s
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = long.Get(ctx, srv.URL+"/slow", nil)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Errorf("Get(/slow) with an evaluation deadline of 100ms = %v after %v, want DeadlineExceeded within 1s", err, time.Since(start))
	}

	got, err := h.Get(t.Context(), srv.URL+"/bytes/65536", nil)
	if err != nil {
		t.Fatalf("Get(a response of %d bytes, the limit): %v", limit, err)
	}
	if s, _ := got.(map[string]any)["body"].(string); len(s) != limit-2 {
		t.Errorf("Get(a response of %d bytes) body has %d bytes, want %d", limit, len(s), limit-2)
	}
	if _, err := h.Get(t.Context(), srv.URL+"/bytes/65537", nil); !errors.Is(err, celdata.ErrResponseTooLarge) {
		t.Errorf("Get(a response of %d bytes, over the limit) = %v, want ErrResponseTooLarge", limit+1, err)
	}
	if _, err := h.Get(t.Context(), srv.URL+"/bytes/5000000", nil); !errors.Is(err, celdata.ErrResponseTooLarge) {
		t.Errorf("Get(a response of 5 MB) = %v, want ErrResponseTooLarge", err)
	}
}

// TestHTTPClientCABundle: http.Client(caBundle) trusts the bundle (the
// test server's own certificate); the default client does not, and a
// bundle without a certificate is an error.
func TestHTTPClientCABundle(t *testing.T) {
	srv := echoServer(t, true)
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	h := newHTTP(t, loopbackAllowed(srv.URL))
	if _, err := h.Get(t.Context(), srv.URL+"/object", nil); err == nil {
		t.Errorf("Get(a server whose CA the system does not trust) = nil error, want a TLS error")
	}
	c, err := h.Client(ca)
	if err != nil {
		t.Fatalf("Client(CA bundle): %v", err)
	}
	got, err := c.Get(t.Context(), srv.URL+"/object", nil)
	if err != nil {
		t.Fatalf("Client(CA bundle).Get: %v", err)
	}
	if got.(map[string]any)["team"] != "a" {
		t.Errorf("Client(CA bundle).Get = %v, want the object", got)
	}
	if _, err := c.Get(t.Context(), "https://example.com/", nil); !errors.Is(err, celdata.ErrRefused) {
		t.Errorf("Client(CA bundle).Get(a URL not allowed) = %v, want ErrRefused", err)
	}
	if _, err := h.Client("not a certificate"); err == nil {
		t.Errorf("Client(not PEM) = nil error, want an error")
	}
}

// TestNewHTTPBadOptions: entries that do not parse are errors naming
// them.
func TestNewHTTPBadOptions(t *testing.T) {
	tests := []celdata.HTTPOptions{
		{Allow: []string{"example.com"}},
		{Allow: []string{"ftp://example.com"}},
		{Block: []string{"10.0.0.0/33"}},
	}
	for _, tt := range tests {
		if _, err := celdata.NewHTTP(tt); err == nil {
			t.Errorf("NewHTTP(%+v) = nil error, want an error", tt)
		}
	}
}
