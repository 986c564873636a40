package main

import (
	"fmt"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/pflag"

	"github.com/verdict-policy/verdict/server"
	"github.com/verdict-policy/verdict/server/celdata"
)

// celDataFlags are the flags of the data sources of Kyverno's CEL
// libraries that need no cluster (server/celdata), and of their limits
// per evaluation.
type celDataFlags struct {
	block          []string
	httpAllow      []string
	httpTimeout    time.Duration
	httpMaxBytes   int64
	httpInline     bool
	httpNamespaced bool
	images         bool
	imageTimeout   time.Duration
	imageMaxBytes  int64
	imageCacheSize int
	imageCacheTTL  time.Duration
	maxCalls       int
}

func (f *celDataFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&f.block, "cel-data-block", celdata.DefaultHTTPBlock, "CIDR ranges and host names that neither http.* calls nor the registry requests of image.GetMetadata reach, checked on the URL, every redirect and the address dialled after DNS resolution")
	fs.StringSliceVar(&f.httpAllow, "cel-http-allow", nil, "URL prefixes (scheme://host[:port][/path]) that http.Get/Post of ValidatingPolicies may reach, as Kyverno's --httpAllowlist; \"*\" allows any URL (default: none, every call is refused)")
	fs.DurationVar(&f.httpTimeout, "cel-http-timeout", celdata.DefaultHTTPTimeout, "deadline of one http.* call (the evaluation's deadline, --call-timeout, bounds it too)")
	fs.Int64Var(&f.httpMaxBytes, "cel-http-max-response-bytes", celdata.DefaultHTTPMaxResponseBytes, "largest response body of one http.* call")
	fs.BoolVar(&f.httpInline, "cel-http-inline-policies", false, "let inline policies of Evaluate calls use http.* (any caller of the server could then make it send requests to the allowed URLs)")
	fs.BoolVar(&f.httpNamespaced, "cel-http-namespaced-policies", false, "let NamespacedValidatingPolicies use http.*, as Kyverno's --allowHTTPInNamespacedPolicies")
	fs.BoolVar(&f.images, "cel-image-data", true, "answer image.GetMetadata from the image's registry (Docker config credentials); false: those calls fail")
	fs.DurationVar(&f.imageTimeout, "cel-image-timeout", celdata.DefaultImageTimeout, "deadline of the registry requests of one image.GetMetadata")
	fs.Int64Var(&f.imageMaxBytes, "cel-image-max-response-bytes", celdata.DefaultImageMaxResponseBytes, "largest registry response (manifest, index, config) of image.GetMetadata")
	fs.IntVar(&f.imageCacheSize, "cel-image-cache-size", celdata.DefaultImageCacheSize, "images whose data image.GetMetadata keeps (negative: none)")
	fs.DurationVar(&f.imageCacheTTL, "cel-image-cache-ttl", celdata.DefaultImageCacheTTL, "how long the data of an image is reused (a tag can move)")
	fs.IntVar(&f.maxCalls, "max-cel-data-calls", server.DefaultMaxCELDataCalls, "calls to resource.*, http.* and image.GetMetadata one evaluation may make; past it, they fail")
}

// apply sets the HTTP and image sources and the limits in opts (after
// the cluster's sources, which it keeps).
func (f *celDataFlags) apply(opts *server.Options) error {
	h, err := celdata.NewHTTP(celdata.HTTPOptions{
		Allow:            f.httpAllow,
		Block:            f.block,
		Timeout:          f.httpTimeout,
		MaxResponseBytes: f.httpMaxBytes,
	})
	if err != nil {
		return fmt.Errorf("--cel-http-allow, --cel-data-block: %w", err)
	}
	opts.CELData.HTTP = h
	if f.images {
		im, err := celdata.NewImages(celdata.ImageOptions{
			Remote:           []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain)},
			Block:            f.block,
			Timeout:          f.imageTimeout,
			MaxResponseBytes: f.imageMaxBytes,
			CacheSize:        f.imageCacheSize,
			CacheTTL:         f.imageCacheTTL,
		})
		if err != nil {
			return fmt.Errorf("--cel-data-block: %w", err)
		}
		opts.CELData.ImageData = im
	}
	opts.MaxCELDataCalls = f.maxCalls
	opts.CELHTTPInlinePolicies, opts.CELHTTPNamespacedPolicies = f.httpInline, f.httpNamespaced
	return nil
}
