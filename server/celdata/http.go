package celdata

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/internal/options"
)

// Defaults of HTTPOptions.
const (
	// DefaultHTTPTimeout bounds one http.* call: short enough that a
	// policy making two calls still answers within the webhook proxy's
	// 8 s deadline.
	DefaultHTTPTimeout = 3 * time.Second
	// DefaultHTTPMaxResponseBytes bounds the body of one response (1 MiB).
	DefaultHTTPMaxResponseBytes = 1 << 20
	// maxRedirects bounds the redirects one call follows, each checked
	// against the allowed prefixes and the blocked addresses.
	maxRedirects = 3
	// maxCAClients bounds the clients kept for http.Client(caBundle), one
	// per distinct bundle; the least recently used is closed past it.
	maxCAClients = 32
)

// ErrRefused is wrapped by the error of a call that HTTPOptions do not
// allow: a URL that matches no allowed prefix, a blocked host or address
// (of the URL, of a redirect, or dialled after DNS resolution), too many
// redirects.
var ErrRefused = errors.New("refused")

// ErrResponseTooLarge is wrapped by the error of a call whose response
// is larger than HTTPOptions.MaxResponseBytes.
var ErrResponseTooLarge = errors.New("response too large")

// AllowAll, as an entry of HTTPOptions.Allow, allows every URL (the
// blocked addresses still apply).
const AllowAll = "*"

// DefaultHTTPBlock are the addresses no http.* call reaches unless
// HTTPOptions.Block says otherwise: loopback and "this host" (0.0.0.0
// reaches the local host), link-local (every cloud's instance metadata
// service, 169.254.169.254, lives there) and the metadata services'
// names. Kyverno's default (--httpBlocklist) is the loopback ranges, two
// metadata addresses and metadata.google.internal; this one covers the
// whole link-local ranges and 0.0.0.0 as well.
var DefaultHTTPBlock = []string{
	"127.0.0.0/8", "::1/128", "0.0.0.0/8", "::/128",
	"169.254.0.0/16", "fe80::/10",
	"metadata.google.internal", "metadata.internal",
}

// HTTPOptions configure HTTP. The zero value refuses every call.
type HTTPOptions struct {
	// Allow are the URL prefixes calls may reach, as Kyverno's
	// --httpAllowlist matches them: the scheme, host and port of the URL
	// must be the prefix's (a missing port is the scheme's), and its path
	// must be the prefix's path or go on below it at a "/". AllowAll
	// allows every http and https URL. Empty: no call is allowed.
	Allow []string
	// Block are CIDR ranges and host names that no call reaches, even an
	// allowed one: the host name of the URL (and of each redirect) is
	// checked, and the address actually dialled, after DNS resolution, so
	// that a name resolving into a blocked range is refused too. Nil:
	// DefaultHTTPBlock; empty (not nil): nothing is blocked.
	Block []string
	// Timeout bounds one call, redirects included (DefaultHTTPTimeout
	// when 0); the evaluation's own deadline bounds it too.
	Timeout time.Duration
	// MaxResponseBytes bounds the body of one response
	// (DefaultHTTPMaxResponseBytes when 0): a larger one fails the call.
	MaxResponseBytes int64
}

// HTTP is the HTTP source of Kyverno's CEL http library (http.Get,
// http.Post, http.Client(caBundle)) for the decision server, answering
// as Kyverno's library does: the response's JSON object with
// "statusCode" added, or {"body": value, "statusCode": code} for other
// JSON values (body null when the response is not JSON). Every call is
// checked against the allowed prefixes and the blocked addresses,
// bounded in time and size; no proxy is used, and no credential of the
// server is ever sent (only the headers the policy gives). It is safe
// for concurrent use.
type HTTP struct {
	opts    HTTPOptions
	allow   []*url.URL
	all     bool
	nets    []netip.Prefix
	hosts   map[string]bool
	client  *http.Client
	clients *lru.Cache[[sha256.Size]byte, *http.Client]
}

var _ kyvernocel.HTTP = (*HTTP)(nil)

// NewHTTP returns the HTTP source of opts. An entry of Allow or Block
// that does not parse is an error naming it.
func NewHTTP(opts HTTPOptions) (*HTTP, error) {
	if opts.Block == nil {
		opts.Block = DefaultHTTPBlock
	}
	options.Positive(&opts.Timeout, DefaultHTTPTimeout)
	options.Positive(&opts.MaxResponseBytes, DefaultHTTPMaxResponseBytes)
	h := &HTTP{opts: opts, hosts: map[string]bool{}}
	for _, a := range opts.Allow {
		a = strings.TrimSpace(a)
		switch {
		case a == "":
		case a == AllowAll:
			h.all = true
		default:
			u, err := url.Parse(a)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, fmt.Errorf("allowed URL prefix %q: want scheme://host[:port][/path] with scheme http or https", a)
			}
			h.allow = append(h.allow, u)
		}
	}
	for _, b := range opts.Block {
		b = strings.TrimSpace(b)
		switch {
		case b == "":
		case strings.Contains(b, "/"):
			p, err := netip.ParsePrefix(b)
			if err != nil {
				return nil, fmt.Errorf("blocked range %q: %w", b, err)
			}
			h.nets = append(h.nets, p.Masked())
		default:
			if a, err := netip.ParseAddr(b); err == nil {
				h.nets = append(h.nets, netip.PrefixFrom(a, a.BitLen()))
				continue
			}
			h.hosts[normalizeHost(b)] = true
		}
	}
	h.client = h.newClient(nil)
	h.clients, _ = lru.NewWithEvict(maxCAClients, func(_ [sha256.Size]byte, c *http.Client) { c.CloseIdleConnections() })
	return h, nil
}

// newClient returns a client that dials only allowed addresses, follows
// only allowed redirects and trusts roots (the system's when nil).
func (h *HTTP) newClient(roots *x509.CertPool) *http.Client {
	dialer := &net.Dialer{Timeout: h.opts.Timeout, Control: h.checkDial}
	t := &http.Transport{
		Proxy:                 nil, // a proxy would hide the address dialled
		DialContext:           dialer.DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   h.opts.Timeout,
		ResponseHeaderTimeout: h.opts.Timeout,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{
		Transport: t,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("more than %d redirects: %w", maxRedirects, ErrRefused)
			}
			return h.checkURL(req.URL)
		},
	}
}

// checkDial refuses a connection to a blocked address: the address is
// the one dialled, after DNS resolution.
func (h *HTTP) checkDial(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, err)
	}
	ip := ap.Addr().Unmap()
	for _, n := range h.nets {
		if n.Contains(ip) {
			return fmt.Errorf("address %s is blocked (%s): %w", ip, n, ErrRefused)
		}
	}
	return nil
}

// checkURL checks a URL against the allowed prefixes and the blocked
// host names.
func (h *HTTP) checkURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("scheme %q: only http and https: %w", u.Scheme, ErrRefused)
	}
	if h.hosts[normalizeHost(u.Hostname())] {
		return fmt.Errorf("host %s is blocked: %w", u.Hostname(), ErrRefused)
	}
	if h.all {
		return nil
	}
	if len(h.allow) == 0 {
		return fmt.Errorf("the server allows no URL (verdict serve --cel-http-allow): %w", ErrRefused)
	}
	for _, a := range h.allow {
		if prefixMatches(a, u) {
			return nil
		}
	}
	return fmt.Errorf("%s matches no allowed URL prefix: %w", u.Redacted(), ErrRefused)
}

// prefixMatches is Kyverno's allowlist match: same scheme, host and
// effective port; the path equal to the prefix's, or below it at a "/".
func prefixMatches(prefix, u *url.URL) bool {
	if u.Scheme != prefix.Scheme || normalizeHost(u.Hostname()) != normalizeHost(prefix.Hostname()) || effectivePort(u) != effectivePort(prefix) {
		return false
	}
	p := prefix.Path
	switch {
	case p == "" || p == "/" || u.Path == p:
		return true
	case !strings.HasPrefix(u.Path, p):
		return false
	case strings.HasSuffix(p, "/"):
		return true
	}
	return len(u.Path) > len(p) && u.Path[len(p)] == '/'
}

func normalizeHost(h string) string { return strings.ToLower(strings.TrimRight(h, ".")) }

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// Get implements kyvernocel.HTTP.
func (h *HTTP) Get(ctx context.Context, url string, headers map[string]string) (any, error) {
	return h.do(ctx, h.client, http.MethodGet, url, nil, headers)
}

// Post implements kyvernocel.HTTP: body is sent as JSON.
func (h *HTTP) Post(ctx context.Context, url string, body any, headers map[string]string) (any, error) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(body); err != nil {
		return nil, fmt.Errorf("http.Post(%q): encode the body: %w", url, err)
	}
	return h.do(ctx, h.client, http.MethodPost, url, &buf, headers)
}

// Client implements kyvernocel.HTTP: a source that trusts the PEM
// caBundle instead of the system roots ("": this one).
func (h *HTTP) Client(caBundle string) (kyvernocel.HTTP, error) {
	if caBundle == "" {
		return h, nil
	}
	key := sha256.Sum256([]byte(caBundle))
	c, ok := h.clients.Get(key)
	if !ok {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(caBundle)) {
			return nil, errors.New("http.Client: the CA bundle holds no PEM certificate")
		}
		c = h.newClient(pool)
		h.clients.Add(key, c)
	}
	return caHTTP{h: h, client: c}, nil
}

// caHTTP is an HTTP source with its own trusted roots.
type caHTTP struct {
	h      *HTTP
	client *http.Client
}

func (c caHTTP) Get(ctx context.Context, url string, headers map[string]string) (any, error) {
	return c.h.do(ctx, c.client, http.MethodGet, url, nil, headers)
}

func (c caHTTP) Post(ctx context.Context, url string, body any, headers map[string]string) (any, error) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(body); err != nil {
		return nil, fmt.Errorf("http.Post(%q): encode the body: %w", url, err)
	}
	return c.h.do(ctx, c.client, http.MethodPost, url, &buf, headers)
}

func (c caHTTP) Client(caBundle string) (kyvernocel.HTTP, error) { return c.h.Client(caBundle) }

// do sends one request and decodes the response as Kyverno's library
// does.
func (h *HTTP) do(ctx context.Context, client *http.Client, method, rawURL string, body io.Reader, headers map[string]string) (any, error) {
	what := "http." + strings.ToUpper(method[:1]) + strings.ToLower(method[1:]) + fmt.Sprintf("(%q)", rawURL)
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := h.checkURL(u); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	ctx, cancel := context.WithTimeout(ctx, h.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	for k, v := range headers {
		req.Header.Add(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s: no response within %s or the evaluation's deadline: %w", what, h.opts.Timeout, err)
		}
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, h.opts.MaxResponseBytes+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s: response not read within %s or the evaluation's deadline: %w", what, h.opts.Timeout, err)
		}
		return nil, fmt.Errorf("%s: read the response: %w", what, err)
	}
	if int64(len(raw)) > h.opts.MaxResponseBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes, the limit on one response: %w", what, h.opts.MaxResponseBytes, ErrResponseTooLarge)
	}
	// As Kyverno: the first JSON value of the body, nil when it is not
	// JSON; an object gets the status code, anything else is wrapped.
	var v any
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&v); err != nil {
		v = nil
	}
	if m, ok := v.(map[string]any); ok {
		m["statusCode"] = resp.StatusCode
		return m, nil
	}
	return map[string]any{"body": v, "statusCode": resp.StatusCode}, nil
}
