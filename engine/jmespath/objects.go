package jmespath

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp/syntax"
	"sort"

	"github.com/verdict-policy/verdict/engine/internal/imageref"
	regen "github.com/zach-klippenstein/goregen"
)

// lookup(object, key) returns the value or null; lookup(array, index)
// returns the element or null when out of range. The index must be an
// integer.
func jpLookup(_ *env, args []any) (any, error) {
	if obj, ok := args[0].(map[string]any); ok {
		key, ok := args[1].(string)
		if !ok {
			return nil, fmt.Errorf(errArgType, "lookup", 2, "String")
		}
		return obj[key], nil
	}
	list, _ := toSlice(args[0])
	f, ok := toFloat(args[1])
	if !ok {
		return nil, fmt.Errorf(errArgType, "lookup", 2, "Number")
	}
	i, err := intNumber(f)
	if err != nil {
		return nil, fmt.Errorf(errArgOutOfRange, "lookup", 2, err.Error())
	}
	if i < 0 || i >= len(list) {
		return nil, nil
	}
	return list[i], nil
}

// items(object, keyName, valueName) lists {keyName: key, valueName: value}
// sorted by key; for an array the key is the index. (Kyverno returns a
// []map[string]any; this returns a JSON-shaped []any.)
func jpItems(_ *env, args []any) (any, error) {
	keyName, valName := str(args, 1), str(args, 2)
	if obj, ok := args[0].(map[string]any); ok {
		if err := capList("items", len(obj)); err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = map[string]any{keyName: k, valName: obj[k]}
		}
		return out, nil
	}
	list, _ := toSlice(args[0])
	if err := capList("items", len(list)); err != nil {
		return nil, err
	}
	out := make([]any, len(list))
	for i, v := range list {
		out[i] = map[string]any{keyName: float64(i), valName: v}
	}
	return out, nil
}

// object_from_lists(keys, values) pairs keys with values; missing values
// are null. Number and boolean keys become strings.
func jpObjectFromLists(_ *env, args []any) (any, error) {
	keys, _ := toSlice(args[0])
	values, _ := toSlice(args[1])
	out := make(map[string]any, len(keys))
	for i, k := range keys {
		key, ok := scalarString(k)
		if !ok {
			return nil, fmt.Errorf(errArgType, "object_from_lists", 1, "StringArray")
		}
		if i < len(values) {
			out[key] = values[i]
		} else {
			out[key] = nil
		}
	}
	return out, nil
}

// maxRandomLength bounds the output of random(). goregen repeats unbounded
// sub-patterns up to 4096 times, so nested stars could otherwise ask for
// gigabytes.
const maxRandomLength = 1 << 20

// random(pattern) generates a string matching the regular expression
// (POSIX syntax, as goregen parses it).
func jpRandom(e *env, args []any) (out any, err error) {
	pattern := str(args, 0)
	if pattern == "" {
		return nil, errors.New("no pattern provided")
	}
	re, err := syntax.Parse(pattern, 0)
	if err != nil {
		return nil, err
	}
	if maxGenLength(re) > maxRandomLength {
		return nil, fmt.Errorf(errGeneric, "random", fmt.Sprintf("pattern may generate more than %d characters", maxRandomLength))
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf(errGeneric, "random", fmt.Sprint(r))
		}
	}()
	gen, err := regen.NewGenerator(pattern, &regen.GeneratorArgs{RngSource: seedSource(e.seed())})
	if err != nil {
		return nil, err
	}
	return gen.Generate(), nil
}

// maxGenLength is an upper bound of the number of runes goregen generates
// for re, saturating at maxRandomLength+1.
func maxGenLength(re *syntax.Regexp) int {
	const unbounded = regen.DefaultMaxUnboundedRepeatCount
	limit := maxRandomLength + 1
	sat := func(n int) int { return min(n, limit) }
	switch re.Op {
	case syntax.OpLiteral:
		return sat(len(re.Rune))
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture:
		if len(re.Sub) == 0 {
			return 0
		}
		return maxGenLength(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		if len(re.Sub) == 0 {
			return 0
		}
		times := unbounded
		switch {
		case re.Op == syntax.OpQuest:
			times = 1
		case re.Op == syntax.OpRepeat && re.Max >= 0:
			times = re.Max
		case re.Op == syntax.OpRepeat && re.Min > unbounded:
			times = re.Min
		}
		return sat(times * maxGenLength(re.Sub[0]))
	case syntax.OpConcat:
		total := 0
		for _, sub := range re.Sub {
			total = sat(total + maxGenLength(sub))
		}
		return total
	case syntax.OpAlternate:
		longest := 0
		for _, sub := range re.Sub {
			longest = max(longest, maxGenLength(sub))
		}
		return longest
	}
	return 0
}

// seedSource is a math/rand (v1) Source that yields one fixed value, which
// goregen uses to seed its own generator.
type seedSource int64

func (s seedSource) Int63() int64 {
	if s == 0 {
		return 1 // goregen's xorshift generator is stuck at zero
	}
	return int64(s)
}

func (seedSource) Seed(int64) {}

// x509_decode decodes a PEM CERTIFICATE or CERTIFICATE REQUEST with an RSA
// key into the JSON form of Go's x509.Certificate / CertificateRequest,
// the public key as {"N": "<decimal>", "E": <int>}, like Kyverno.
func jpX509Decode(_ *env, args []any) (any, error) {
	block, _ := pem.Decode([]byte(str(args, 0)))
	if block == nil {
		return nil, errors.New("failed to decode PEM block")
	}
	switch block.Type {
	case "CERTIFICATE":
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		if cert.PublicKey, err = rsaKey(cert.PublicKeyAlgorithm, cert.PublicKey); err != nil {
			return nil, err
		}
		return toJSONObject(cert)
	case "CERTIFICATE REQUEST":
		csr, err := x509.ParseCertificateRequest(block.Bytes)
		if err != nil {
			return nil, err
		}
		if csr.PublicKey, err = rsaKey(csr.PublicKeyAlgorithm, csr.PublicKey); err != nil {
			return nil, err
		}
		return toJSONObject(csr)
	}
	return nil, errors.New("PEM block neither contains a CERTIFICATE or CERTIFICATE REQUEST")
}

// rsaKey is the JSON form of the RSA public key of a certificate or
// request; another algorithm is Kyverno's error.
func rsaKey(alg x509.PublicKeyAlgorithm, pub any) (any, error) {
	key, ok := pub.(*rsa.PublicKey)
	if alg != x509.RSA || !ok {
		return nil, errors.New("certificate should use rsa algorithm")
	}
	return rsaKeyJSON{N: key.N.String(), E: key.E}, nil
}

type rsaKeyJSON struct {
	N string
	E int
}

func toJSONObject(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// image_normalize adds the default registry (unless disabled) and the
// "latest" tag when there is no tag or digest, like Kyverno's ImageInfo.
func jpImageNormalize(e *env, args []any) (any, error) {
	image := str(args, 0)
	full := imageref.Qualify(image, e.defaultRegistry)
	r, err := imageref.Split(full)
	if err != nil {
		return nil, fmt.Errorf(errGeneric, "image_normalize", fmt.Sprintf("bad image: %s, defaultRegistry: %s, enableDefaultRegistryMutation: %t: %v", full, e.defaultRegistry, e.mutateRegistry, err))
	}
	registry, repo, tag, digest := r.Registry, r.Path, r.Tag, r.Digest
	if full != image && !e.mutateRegistry {
		registry = ""
	}
	name := repo
	if registry != "" {
		name = registry + "/" + repo
	}
	if digest != "" {
		return name + "@" + digest, nil
	}
	return name + ":" + tag, nil
}

// is_external_url(url) is false when the host is a loopback or private
// address (or resolves to one) and true otherwise. Host names are resolved
// with Options.LookupIP.
func jpIsExternalURL(e *env, args []any) (any, error) {
	u, err := url.Parse(str(args, 0))
	if err != nil {
		return nil, err
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); ip != nil {
		return !(ip.IsLoopback() || ip.IsPrivate()), nil
	}
	if e.lookupIP == nil {
		return nil, fmt.Errorf(errGeneric, "is_external_url", fmt.Sprintf("cannot resolve host %q: no resolver configured", host))
	}
	ips, err := e.lookupIP(host)
	if err != nil {
		return nil, err
	}
	for _, ip := range ips {
		if ip.IsLoopback() || ip.IsPrivate() {
			return false, nil
		}
	}
	return true, nil
}
