package celdata

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/kyverno/sdk/extensions/cel/utils"
	"github.com/kyverno/sdk/extensions/imagedataloader"
	"golang.org/x/sync/singleflight"

	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/internal/options"
)

// Defaults of ImageOptions.
const (
	// DefaultImageTimeout bounds the registry requests of one image's
	// data (a manifest, its config, the descriptor; retries included).
	DefaultImageTimeout = 5 * time.Second
	// DefaultImageMaxResponseBytes bounds one registry response (4 MiB:
	// manifests, indexes and config files are kilobytes).
	DefaultImageMaxResponseBytes = 4 << 20
	// DefaultImageCacheSize is the number of images whose data is kept.
	DefaultImageCacheSize = 512
	// DefaultImageCacheTTL is how long an image's data is reused (a tag
	// can move; its data is read again after this).
	DefaultImageCacheTTL = 5 * time.Minute
)

// ImageOptions configure Images.
type ImageOptions struct {
	// Remote are go-containerregistry options for every registry request
	// (credentials: remote.WithAuthFromKeychain). The transport is
	// Images' own (bounded and with the blocked addresses); a
	// remote.WithTransport here is ignored.
	Remote []remote.Option
	// Block are CIDR ranges and host names no registry request reaches,
	// checked on the address dialled, as HTTPOptions.Block (an image
	// reference names its registry: whoever writes the object the policy
	// reads it from chooses it). Nil: DefaultHTTPBlock; empty: none.
	Block []string
	// Timeout bounds the requests of one image (DefaultImageTimeout when
	// 0); the evaluation's deadline bounds them too.
	Timeout time.Duration
	// MaxResponseBytes bounds each registry response
	// (DefaultImageMaxResponseBytes when 0): a larger one fails the call.
	MaxResponseBytes int64
	// CacheSize and CacheTTL bound the cache of image data
	// (DefaultImageCacheSize, DefaultImageCacheTTL when 0; a negative
	// size: no cache).
	CacheSize int
	CacheTTL  time.Duration

	// now is the cache's clock (a test seam).
	now func() time.Time
}

// Images is the source of image.GetMetadata (Kyverno's imagedata
// library) for the decision server: the data Kyverno's image data loader
// (github.com/kyverno/sdk/extensions/imagedataloader) reads from the
// image's registry, with the same fields (image, resolvedImage, registry,
// repository, identifier, tag, digest, manifest, config, imageIndex). The
// data of an image is kept CacheTTL in an LRU of CacheSize images, and
// concurrent reads of one image are made once. It is safe for concurrent
// use.
type Images struct {
	opts   ImageOptions
	loader imagedataloader.Fetcher
	cache  *lru.Cache[string, imageEntry]
	group  singleflight.Group
}

type imageEntry struct {
	data    map[string]any
	expires time.Time
}

var _ kyvernocel.ImageData = (*Images)(nil)

// NewImages returns the Images source of opts; a blocked range that does
// not parse is an error naming it.
func NewImages(opts ImageOptions) (*Images, error) {
	options.Positive(&opts.Timeout, DefaultImageTimeout)
	options.Positive(&opts.MaxResponseBytes, DefaultImageMaxResponseBytes)
	opts.CacheSize = cmp.Or(opts.CacheSize, DefaultImageCacheSize)
	options.Positive(&opts.CacheTTL, DefaultImageCacheTTL)
	if opts.now == nil {
		opts.now = time.Now
	}
	// The blocked addresses (DefaultHTTPBlock when nil) and the dial check
	// are HTTP's.
	guard, err := NewHTTP(HTTPOptions{Block: opts.Block, Timeout: opts.Timeout})
	if err != nil {
		return nil, err
	}
	dialer := &net.Dialer{Timeout: opts.Timeout, Control: guard.checkDial}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.Proxy = nil
	base.DialContext = dialer.DialContext
	transport := &limitTransport{base: base, max: opts.MaxResponseBytes}
	remoteOpts := append(append([]remote.Option{}, opts.Remote...), remote.WithTransport(transport))
	loader, err := imagedataloader.New(nil, remoteOpts, nil)
	if err != nil {
		return nil, fmt.Errorf("image data loader: %w", err)
	}
	im := &Images{opts: opts, loader: loader}
	if opts.CacheSize > 0 {
		im.cache, _ = lru.New[string, imageEntry](opts.CacheSize)
	}
	return im, nil
}

// ImageData implements kyvernocel.ImageData.
func (im *Images) ImageData(ctx context.Context, image string) (map[string]any, error) {
	now := im.opts.now()
	if im.cache != nil {
		if e, ok := im.cache.Get(image); ok && now.Before(e.expires) {
			return e.data, nil
		}
	}
	// The read goes on for the other callers when this one leaves, within
	// its own timeout.
	ch := im.group.DoChan(image, func() (any, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), im.opts.Timeout)
		defer cancel()
		data, err := im.fetch(rctx, image)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("no answer from the registry within %s: %w", im.opts.Timeout, err)
			}
			return nil, err
		}
		if im.cache != nil {
			im.cache.Add(image, imageEntry{data: data, expires: im.opts.now().Add(im.opts.CacheTTL)})
		}
		return data, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, fmt.Errorf("image.GetMetadata(%q): %w", image, r.Err)
		}
		return r.Val.(map[string]any), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("image.GetMetadata(%q): %w", image, ctx.Err())
	}
}

func (im *Images) fetch(ctx context.Context, image string) (map[string]any, error) {
	data, err := im.loader.FetchImageData(ctx, image, nil, nil)
	if err != nil {
		return nil, err
	}
	return utils.GetValue(data.Data())
}

// ErrRegistryResponseTooLarge is wrapped by the error of an image whose
// registry sent a response larger than ImageOptions.MaxResponseBytes.
var ErrRegistryResponseTooLarge = errors.New("registry response too large")

// limitTransport fails the read of a response body past max bytes.
type limitTransport struct {
	base http.RoundTripper
	max  int64
}

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > t.max {
		resp.Body.Close()
		return nil, fmt.Errorf("%s %s: %d bytes, more than %d: %w", req.Method, req.URL.Redacted(), resp.ContentLength, t.max, ErrRegistryResponseTooLarge)
	}
	resp.Body = &limitedBody{r: resp.Body, left: t.max, what: req.Method + " " + req.URL.Redacted(), max: t.max}
	return resp, nil
}

// limitedBody is a response body that fails past its limit.
type limitedBody struct {
	r    io.ReadCloser
	left int64
	max  int64
	what string
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly max bytes from a larger one.
		var one [1]byte
		n, err := b.r.Read(one[:])
		if n > 0 {
			return 0, fmt.Errorf("%s: more than %d bytes: %w", b.what, b.max, ErrRegistryResponseTooLarge)
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.r.Close() }
