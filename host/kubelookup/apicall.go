package kubelookup

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/internal/jsonvalue"
)

// APICall implements eval.Lookup, as Kyverno's apicall executor does: a
// urlPath call goes to the API server through the REST client (the
// server's identity), a service call to its URL, trusting its caBundle
// (else the system roots) and sending its headers. Both are bounded by
// APICallTimeout, their responses by MaxResponseBytes, and must be JSON.
// A 404 wraps engine.ErrNotFound. Errors name the method and the path or
// URL.
func (l *Lookup) APICall(ctx context.Context, call eval.APICall) (any, error) {
	method := strings.ToUpper(call.Method)
	if method == "" {
		method = http.MethodGet
	}
	target := call.URLPath
	if target == "" {
		target = call.ServiceURL
	}
	if target == "" {
		return nil, errors.New("apiCall: neither urlPath nor service.url")
	}
	if method != http.MethodGet && method != http.MethodPost {
		return nil, fmt.Errorf("apiCall %s %s: method must be GET or POST", method, target)
	}
	var body []byte
	if method == http.MethodPost {
		data := call.Data
		if data == nil {
			data = map[string]any{}
		}
		var err error
		if body, err = json.Marshal(data); err != nil {
			return nil, fmt.Errorf("apiCall %s %s: encode data: %w", method, target, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, l.opts.APICallTimeout)
	defer cancel()
	var (
		raw []byte
		err error
	)
	if call.URLPath != "" {
		raw, err = l.apiServerCall(ctx, method, call.URLPath, body)
	} else {
		raw, err = l.serviceCall(ctx, method, call, body)
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			err = fmt.Errorf("no response within %s: %w", l.opts.APICallTimeout, err)
		}
		return nil, fmt.Errorf("apiCall %s %s: %w", method, target, err)
	}
	v, err := jsonvalue.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("apiCall %s %s: response is not JSON: %w", method, target, err)
	}
	return v, nil
}

// apiServerCall sends a request to the API server path.
func (l *Lookup) apiServerCall(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	req := l.opts.REST.Get()
	if method == http.MethodPost {
		req = l.opts.REST.Post().SetHeader("Content-Type", "application/json").Body(body)
	}
	rc, err := req.RequestURI(path).Stream(ctx)
	if err != nil {
		return nil, clusterError("API server", err)
	}
	defer rc.Close()
	return readLimited(rc, l.opts.MaxResponseBytes)
}

// serviceCall sends a request to a service URL.
func (l *Lookup) serviceCall(ctx context.Context, method string, call eval.APICall, body []byte) ([]byte, error) {
	hc, err := l.services.client(call.CABundle)
	if err != nil {
		return nil, err
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, call.ServiceURL, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range call.Headers {
		req.Header.Add(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		err := fmt.Errorf("HTTP %s: %s", resp.Status, bytes.TrimSpace(msg))
		if resp.StatusCode == http.StatusNotFound {
			err = fmt.Errorf("%w (%w)", engine.ErrNotFound, err)
		}
		return nil, err
	}
	return readLimited(resp.Body, l.opts.MaxResponseBytes)
}

// readLimited reads r to its end, failing when it holds more than max
// bytes.
func readLimited(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("response larger than %d bytes", max)
	}
	return b, nil
}

// serviceClients are the HTTP clients of service calls, one per CA bundle
// (the bundle's text is the key), at most size; past that, a call gets a
// client of its own whose connections close after it.
type serviceClients struct {
	mu      sync.Mutex
	clients map[string]*http.Client
	size    int
	timeout time.Duration
	base    *http.Transport
}

func newServiceClients(size int, timeout time.Duration, base *http.Transport) *serviceClients {
	return &serviceClients{clients: map[string]*http.Client{}, size: size, timeout: timeout, base: base}
}

func (s *serviceClients) client(caBundle string) (*http.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.clients[caBundle]; ok {
		return c, nil
	}
	t := s.base.Clone()
	if caBundle != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(caBundle)) {
			return nil, errors.New("service.caBundle: no PEM certificate")
		}
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	if len(s.clients) >= s.size {
		t.DisableKeepAlives = true
		return &http.Client{Transport: t, Timeout: s.timeout}, nil
	}
	c := &http.Client{Transport: t, Timeout: s.timeout}
	s.clients[caBundle] = c
	return c, nil
}
