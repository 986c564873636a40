package webhookproxy

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/verdict-policy/verdict/internal/safefile"
)

// CertReloader serves the certificate of a pair of PEM files and reads
// them again when either file's modification time or size changes (as
// cert-manager renews a Secret mounted as a volume), at most once per
// second. When the new files cannot be loaded (caught half-written), the
// previous certificate stays in use and the next handshake tries again.
type CertReloader struct {
	certFile, keyFile string

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   [2]fileStamp
	checked time.Time
}

type fileStamp struct {
	mod  time.Time
	size int64
}

// NewCertReloader loads the key pair of certFile and keyFile.
func NewCertReloader(certFile, keyFile string) (*CertReloader, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("TLS needs both a certificate and a key file")
	}
	c := &CertReloader{certFile: certFile, keyFile: keyFile}
	stamp, err := c.stamps()
	if err != nil {
		return nil, err
	}
	cert, err := safefile.KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load TLS key pair: %w", err)
	}
	c.cert, c.stamp, c.checked = &cert, stamp, time.Now()
	return c, nil
}

func (c *CertReloader) stamps() ([2]fileStamp, error) {
	var out [2]fileStamp
	for i, f := range []string{c.certFile, c.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return out, fmt.Errorf("TLS file: %w", err)
		}
		out[i] = fileStamp{mod: fi.ModTime(), size: fi.Size()}
	}
	return out, nil
}

// GetCertificate is tls.Config.GetCertificate.
func (c *CertReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); now.Sub(c.checked) >= time.Second {
		c.checked = now
		if stamp, err := c.stamps(); err == nil && stamp != c.stamp {
			if cert, err := safefile.KeyPair(c.certFile, c.keyFile); err == nil {
				c.cert, c.stamp = &cert, stamp
			}
		}
	}
	return c.cert, nil
}

// TLSConfig returns a server configuration that serves c's certificate.
func (c *CertReloader) TLSConfig() *tls.Config {
	return &tls.Config{GetCertificate: c.GetCertificate, MinVersion: tls.VersionTLS12}
}

// SelfSigned generates a CA and a server certificate it signs for hosts
// (DNS names or IP addresses), valid for validity. It returns the server
// configuration and the CA certificate in PEM, the caBundle of a webhook
// configuration.
func SelfSigned(hosts []string, validity time.Duration) (*tls.Config, []byte, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "verdict webhook CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("self-signed CA: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, fmt.Errorf("self-signed CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "verdict webhook"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("self-signed certificate: %w", err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, caPEM, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

// Serve serves h with TLS on lis until ctx ends, then shuts down, letting
// reviews in flight finish for up to 10 s. A plain HTTP request gets
// 400 from the TLS layer and never reaches h.
func Serve(ctx context.Context, lis net.Listener, cfg *tls.Config, h http.Handler, log *slog.Logger) error {
	if cfg == nil {
		return errors.New("webhookproxy: Serve needs a TLS configuration")
	}
	srv := &http.Server{
		Handler:           h,
		TLSConfig:         cfg,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelDebug)
	done := make(chan error, 1)
	go func() { done <- srv.ServeTLS(lis, "", "") }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
