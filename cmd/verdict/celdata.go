package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/verdict-policy/verdict/server"
	"github.com/verdict-policy/verdict/server/celdata"
)

// celDataFlags are the flags of the data sources of Kyverno's CEL
// libraries that need no cluster (server/celdata), and of their limits
// per evaluation.
type celDataFlags struct {
	httpAllow      []string
	httpBlock      []string
	httpTimeout    time.Duration
	httpMaxBytes   int64
	httpInline     bool
	httpNamespaced bool
	maxCalls       int
}

func (f *celDataFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&f.httpAllow, "cel-http-allow", nil, "URL prefixes (scheme://host[:port][/path]) that http.Get/Post of ValidatingPolicies may reach, as Kyverno's --httpAllowlist; \"*\" allows any URL (default: none, every call is refused)")
	fs.StringSliceVar(&f.httpBlock, "cel-http-block", celdata.DefaultHTTPBlock, "CIDR ranges and host names no http.* call reaches, checked on the URL, every redirect and the address dialled after DNS resolution")
	fs.DurationVar(&f.httpTimeout, "cel-http-timeout", celdata.DefaultHTTPTimeout, "deadline of one http.* call (the evaluation's deadline, --call-timeout, bounds it too)")
	fs.Int64Var(&f.httpMaxBytes, "cel-http-max-response-bytes", celdata.DefaultHTTPMaxResponseBytes, "largest response body of one http.* call")
	fs.BoolVar(&f.httpInline, "cel-http-inline-policies", false, "let inline policies of Evaluate calls use http.* (any caller of the server could then make it send requests to the allowed URLs)")
	fs.BoolVar(&f.httpNamespaced, "cel-http-namespaced-policies", false, "let NamespacedValidatingPolicies use http.*, as Kyverno's --allowHTTPInNamespacedPolicies")
	fs.IntVar(&f.maxCalls, "max-cel-data-calls", server.DefaultMaxCELDataCalls, "calls to resource.*, http.* and image.GetMetadata one evaluation may make; past it, they fail")
}

// apply sets the HTTP source and the limits in opts (after the cluster's
// sources, which it keeps).
func (f *celDataFlags) apply(opts *server.Options) error {
	h, err := celdata.NewHTTP(celdata.HTTPOptions{
		Allow:            f.httpAllow,
		Block:            f.httpBlock,
		Timeout:          f.httpTimeout,
		MaxResponseBytes: f.httpMaxBytes,
	})
	if err != nil {
		return fmt.Errorf("--cel-http-allow, --cel-http-block: %w", err)
	}
	opts.CELData.HTTP = h
	opts.MaxCELDataCalls = f.maxCalls
	opts.CELHTTPInlinePolicies, opts.CELHTTPNamespacedPolicies = f.httpInline, f.httpNamespaced
	return nil
}
