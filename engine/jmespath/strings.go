package jmespath

import (
	"crypto/md5"  //nolint:gosec // Kyverno's md5()
	"crypto/sha1" //nolint:gosec // Kyverno's sha1()
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/blang/semver/v4"
	"github.com/verdict-policy/verdict/engine/internal/wildcard"
	"sigs.k8s.io/yaml"
)

// str and num return argument i; checkArgs has already checked its type.
func str(args []any, i int) string {
	s, _ := args[i].(string)
	return s
}

func num(args []any, i int) float64 {
	f, _ := args[i].(float64)
	return f
}

// compare returns -1, 0 or 1 as a number. (Kyverno returns a Go int, which
// prints the same but never equals a JMESPath number literal.)
func jpCompare(_ *env, args []any) (any, error) {
	return float64(strings.Compare(str(args, 0), str(args, 1))), nil
}

func jpEqualFold(_ *env, args []any) (any, error) {
	return strings.EqualFold(str(args, 0), str(args, 1)), nil
}

// replace(s, old, new, n) replaces the first n instances; n < 0 means all.
// The size of the result is checked before it is built.
func jpReplace(_ *env, args []any) (any, error) {
	s, old, new, n := str(args, 0), str(args, 1), str(args, 2), int(num(args, 3))
	if err := capString("replace", replaceSize(s, old, new, n)); err != nil {
		return nil, err
	}
	return strings.Replace(s, old, new, n), nil
}

func jpReplaceAll(_ *env, args []any) (any, error) {
	s, old, new := str(args, 0), str(args, 1), str(args, 2)
	if err := capString("replace_all", replaceSize(s, old, new, -1)); err != nil {
		return nil, err
	}
	return strings.ReplaceAll(s, old, new), nil
}

func jpToUpper(_ *env, args []any) (any, error) { return strings.ToUpper(str(args, 0)), nil }

func jpToLower(_ *env, args []any) (any, error) { return strings.ToLower(str(args, 0)), nil }

// trim removes every leading and trailing character that is in the cutset.
func jpTrim(_ *env, args []any) (any, error) {
	return strings.Trim(str(args, 0), str(args, 1)), nil
}

func jpTrimPrefix(_ *env, args []any) (any, error) {
	return strings.TrimPrefix(str(args, 0), str(args, 1)), nil
}

// split's result is checked against MaxListLength before it is built.
func jpSplit(_ *env, args []any) (any, error) {
	s, sep := str(args, 0), str(args, 1)
	if len(s)+1 > MaxListLength {
		n := utf8.RuneCountInString(s) // strings.Split(s, "") splits every rune
		if sep != "" {
			n = strings.Count(s, sep) + 1
		}
		if err := capList("split", n); err != nil {
			return nil, err
		}
	}
	parts := strings.Split(s, sep)
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out, nil
}

// scalarString renders a string or number argument the way Kyverno does:
// numbers with float32 precision ("1.5", "1234567936" for 1234567891).
func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case int:
		return strconv.Itoa(x), true
	}
	if f, ok := toFloat(v); ok {
		return strconv.FormatFloat(f, 'f', -1, 32), true
	}
	return "", false
}

func regexReplace(name string, args []any, literal bool, e *env) (any, error) {
	// checkArgs has made sure src and repl are strings or numbers.
	src, _ := scalarString(args[1])
	repl, _ := scalarString(args[2])
	re, err := e.regexps.compile(str(args, 0))
	if err != nil {
		return nil, fmt.Errorf(errGeneric, name, err.Error())
	}
	if err := capString(name, regexReplaceSize(re, src, repl, literal)); err != nil {
		return nil, err
	}
	if literal {
		return re.ReplaceAllLiteralString(src, repl), nil
	}
	return re.ReplaceAllString(src, repl), nil
}

// regexReplaceSize is the length of the result of replacing every match
// of re in src by repl, or a bound of it when repl refers to submatches
// (each reference counts as a copy of the whole match). It finds the
// matches without building more than a string of at most len(src) bytes,
// and not at all when even a match at every byte would stay below
// MaxStringBytes.
func regexReplaceSize(re *regexp.Regexp, src, repl string, literal bool) int {
	// static: the bytes repl adds besides its references; refs: the
	// number of its references, found by expanding it against a match
	// whose groups are all empty, then all one byte long.
	static, refs := len(repl), 0
	if !literal && strings.Contains(repl, "$") {
		groups := 2 * (re.NumSubexp() + 1)
		empty, oneByte := make([]int, groups), make([]int, groups)
		for i := 1; i < groups; i += 2 {
			oneByte[i] = 1
		}
		static = len(re.ExpandString(nil, repl, "", empty))
		refs = len(re.ExpandString(nil, repl, "x", oneByte)) - static
	}
	if worst := len(src) + (len(src)+1)*static + refs*len(src); worst <= MaxStringBytes && worst >= 0 {
		return worst
	}
	matches, matched := 0, 0
	re.ReplaceAllStringFunc(src, func(m string) string {
		matches++
		matched += len(m)
		return ""
	})
	return len(src) - matched + matches*static + refs*matched
}

// regex_replace_all(regex, src, repl) expands $1 and ${name} in repl.
func jpRegexReplaceAll(e *env, args []any) (any, error) {
	return regexReplace("regex_replace_all", args, false, e)
}

func jpRegexReplaceAllLiteral(e *env, args []any) (any, error) {
	return regexReplace("regex_replace_all_literal", args, true, e)
}

// regex_match(regex, src) reports whether src contains a match (the regex
// is not anchored). A bad regex is an error with Go's message.
func jpRegexMatch(e *env, args []any) (any, error) {
	src, _ := scalarString(args[1])
	re, err := e.regexps.compile(str(args, 0))
	if err != nil {
		return nil, err
	}
	return re.MatchString(src), nil
}

// pattern_match(pattern, src): '*' matches any run of characters, '?' one
// character, and the whole of src must match.
func jpPatternMatch(_ *env, args []any) (any, error) {
	src, _ := scalarString(args[1])
	return wildcard.Match(str(args, 0), src), nil
}

// label_match(selector, labels) is true when every key of selector is in
// labels with an equal value.
func jpLabelMatch(_ *env, args []any) (any, error) {
	selector, _ := args[0].(map[string]any)
	labels, _ := args[1].(map[string]any)
	for key, want := range selector {
		if got, ok := labels[key]; !ok || !reflect.DeepEqual(got, want) {
			return false, nil
		}
	}
	return true, nil
}

// to_boolean accepts "true" and "false" in any letter case.
func jpToBoolean(_ *env, args []any) (any, error) {
	s := str(args, 0)
	switch strings.ToLower(s) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return nil, fmt.Errorf(errGeneric, "to_boolean", fmt.Sprintf("lowercase argument must be 'true' or 'false' (provided: '%s')", s))
}

// base64_decode uses standard padded base64; the error is Go's.
func jpBase64Decode(_ *env, args []any) (any, error) {
	b, err := base64.StdEncoding.DecodeString(str(args, 0))
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

func jpBase64Encode(_ *env, args []any) (any, error) {
	s := str(args, 0)
	if err := capString("base64_encode", base64.StdEncoding.EncodedLen(len(s))); err != nil {
		return nil, err
	}
	return base64.StdEncoding.EncodeToString([]byte(s)), nil
}

// path_canonicalize cleans a slash-separated path ("" stays "").
func jpPathCanonicalize(_ *env, args []any) (any, error) {
	return path.Join(str(args, 0)), nil
}

// truncate(s, n) keeps the first n characters (runes). A negative n gives "";
// so does an n beyond the int range, as in Kyverno on amd64.
func jpTruncate(_ *env, args []any) (any, error) {
	s, n := str(args, 0), num(args, 1)
	if n < 0 {
		n = 0
	}
	if !(n < math.MaxInt64) { // also NaN
		return "", nil
	}
	length := int(n)
	if length < 1 {
		return "", nil
	}
	if utf8.RuneCountInString(s) <= length {
		return s, nil
	}
	return string([]rune(s)[:length]), nil
}

// semver_compare(version, range): an unparsable version counts as 0.0.0; an
// unparsable range is an error.
func jpSemverCompare(_ *env, args []any) (any, error) {
	version, _ := semver.Parse(str(args, 0))
	inRange, err := semver.ParseRange(str(args, 1))
	if err != nil {
		return nil, err
	}
	return inRange(version), nil
}

func jpParseJSON(_ *env, args []any) (any, error) {
	var out any
	if err := json.Unmarshal([]byte(str(args, 0)), &out); err != nil {
		return nil, err
	}
	return out, nil
}

func jpParseYAML(_ *env, args []any) (any, error) {
	data, err := yaml.YAMLToJSON([]byte(str(args, 0)))
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func jpSHA256(_ *env, args []any) (any, error) {
	sum := sha256.Sum256([]byte(str(args, 0)))
	return hex.EncodeToString(sum[:]), nil
}

func jpSHA1(_ *env, args []any) (any, error) {
	sum := sha1.Sum([]byte(str(args, 0))) //nolint:gosec
	return hex.EncodeToString(sum[:]), nil
}

func jpMD5(_ *env, args []any) (any, error) {
	sum := md5.Sum([]byte(str(args, 0))) //nolint:gosec
	return hex.EncodeToString(sum[:]), nil
}

// regexCache keeps compiled regular expressions by source, so that a
// regex_* call with a literal pattern compiles it once per Interpreter. It
// is bounded: when full it starts over.
type regexCache struct {
	mu sync.RWMutex
	m  map[string]*regexp.Regexp
}

const regexCacheSize = 512

func (c *regexCache) compile(src string) (*regexp.Regexp, error) {
	c.mu.RLock()
	re, ok := c.m[src]
	c.mu.RUnlock()
	if ok {
		return re, nil
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= regexCacheSize {
		c.m = make(map[string]*regexp.Regexp)
	}
	c.m[src] = re
	c.mu.Unlock()
	return re, nil
}
