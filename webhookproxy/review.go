package webhookproxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/types"
)

// maxReviewDepth bounds the nesting of a review's JSON.
const maxReviewDepth = 10000

// decodeReview decodes an AdmissionReview in one validating pass over
// data: the fields the proxy reads are decoded, object and oldObject are
// kept as slices of data (not copied: data must not change afterwards),
// every other value is checked and skipped. It accepts what
// encoding/json accepts for these fields (a field name in another letter
// case, which encoding/json also matches, hands the review to
// encoding/json) and is five to seven times as fast on a Pod's review (BenchmarkDecodeReview, docs/benchmarks.md).
func decodeReview(data []byte) (*admissionv1.AdmissionReview, error) {
	ar, err := decodeReviewFast(data)
	if errors.Is(err, errFoldedKey) {
		// A field name in another letter case: encoding/json's matching
		// rules decide.
		ar = &admissionv1.AdmissionReview{}
		if err := json.Unmarshal(data, ar); err != nil {
			return nil, err
		}
		return ar, nil
	}
	return ar, err
}

// errFoldedKey reports a field name that differs from one the proxy reads
// only in letter case, which encoding/json would match.
var errFoldedKey = errors.New("field name in another letter case")

// reviewFields are the field names the proxy reads, per object.
var reviewFields = map[string][]string{
	"":                 {"apiVersion", "kind", "request"},
	"request":          {"uid", "kind", "resource", "subResource", "name", "namespace", "operation", "userInfo", "object", "oldObject", "dryRun"},
	"request.kind":     {"group", "version", "kind"},
	"request.resource": {"group", "version", "resource"},
	"request.userInfo": {"username", "uid", "groups", "extra"},
}

// foldedKey reports whether key is not one of the fields of path but
// equals one in another letter case (Unicode simple folding, as
// encoding/json).
func foldedKey(path, key string) bool {
	known := reviewFields[path]
	for _, k := range known {
		if k == key {
			return false
		}
	}
	for _, k := range known {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}

func decodeReviewFast(data []byte) (*admissionv1.AdmissionReview, error) {
	d := &reviewDecoder{data: data}
	ar := &admissionv1.AdmissionReview{}
	d.space()
	if d.peek() == 'n' {
		if err := d.literal("null"); err != nil {
			return nil, err
		}
	} else if err := d.object("", func(key string) error {
		switch key {
		case "apiVersion":
			return d.stringInto(&ar.APIVersion, key)
		case "kind":
			return d.stringInto(&ar.Kind, key)
		case "request":
			if d.peek() == 'n' {
				return d.literal("null")
			}
			ar.Request = &admissionv1.AdmissionRequest{}
			return d.request(ar.Request)
		}
		return d.skip(0)
	}); err != nil {
		return nil, err
	}
	d.space()
	if d.i != len(d.data) {
		return nil, d.errorf("data after the review")
	}
	return ar, nil
}

type reviewDecoder struct {
	data []byte
	i    int
}

func (d *reviewDecoder) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: "+format, append([]any{d.i}, args...)...)
}

func (d *reviewDecoder) space() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *reviewDecoder) peek() byte {
	d.space()
	if d.i < len(d.data) {
		return d.data[d.i]
	}
	return 0
}

// object reads an object, calling field with d positioned at each value;
// field must consume the value. path names the object in errors.
func (d *reviewDecoder) object(path string, field func(key string) error) error {
	if d.peek() != '{' {
		return d.errorf("%s: want an object", pathOr(path))
	}
	if d.open('}') {
		return nil
	}
	for {
		if d.peek() != '"' {
			return d.errorf("%s: want a field name", pathOr(path))
		}
		key, err := d.str()
		if err != nil {
			return err
		}
		if d.peek() != ':' {
			return d.errorf("%s: want ':' after %q", pathOr(path), key)
		}
		d.i++
		d.space()
		if foldedKey(path, key) {
			return errFoldedKey
		}
		if err := field(key); err != nil {
			return err
		}
		if done, err := d.next('}', pathOr(path)); done || err != nil {
			return err
		}
	}
}

// open reads the opening byte at d.i of an object or list and reports
// whether closing follows at once (read too): the value is empty.
func (d *reviewDecoder) open(closing byte) bool {
	d.i++
	if d.peek() == closing {
		d.i++
		return true
	}
	return false
}

// next reads what follows a member of an object or list: ',' (done is
// false) or closing (done is true); anything else is an error naming
// path ("" for none).
func (d *reviewDecoder) next(closing byte, path string) (done bool, err error) {
	switch d.peek() {
	case ',':
		d.i++
		return false, nil
	case closing:
		d.i++
		return true, nil
	}
	if path == "" {
		return false, d.errorf("want ',' or '%c'", closing)
	}
	return false, d.errorf("%s: want ',' or '%c'", path, closing)
}

func pathOr(p string) string {
	if p == "" {
		return "review"
	}
	return p
}

func (d *reviewDecoder) request(r *admissionv1.AdmissionRequest) error {
	return d.object("request", func(key string) error {
		switch key {
		case "uid":
			var s string
			err := d.stringInto(&s, "request.uid")
			r.UID = types.UID(s)
			return err
		case "kind":
			return d.groupVersion("request.kind", "kind", &r.Kind.Group, &r.Kind.Version, &r.Kind.Kind)
		case "resource":
			return d.groupVersion("request.resource", "resource", &r.Resource.Group, &r.Resource.Version, &r.Resource.Resource)
		case "subResource":
			return d.stringInto(&r.SubResource, "request.subResource")
		case "name":
			return d.stringInto(&r.Name, "request.name")
		case "namespace":
			return d.stringInto(&r.Namespace, "request.namespace")
		case "operation":
			var s string
			err := d.stringInto(&s, "request.operation")
			r.Operation = admissionv1.Operation(s)
			return err
		case "userInfo":
			return d.userInfo(&r.UserInfo)
		case "object":
			return d.raw(&r.Object.Raw)
		case "oldObject":
			return d.raw(&r.OldObject.Raw)
		case "dryRun":
			switch d.peek() {
			case 'n':
				return d.literal("null")
			case 't':
				r.DryRun = ptr(true)
				return d.literal("true")
			case 'f':
				r.DryRun = ptr(false)
				return d.literal("false")
			}
			return d.errorf("request.dryRun: want a boolean")
		}
		return d.skip(0)
	})
}

// groupVersion reads the object at path of a GroupVersionKind or
// GroupVersionResource: group, version and the field named third.
func (d *reviewDecoder) groupVersion(path, third string, group, version, name *string) error {
	return d.object(path, func(k string) error {
		var dst *string
		switch k {
		case "group":
			dst = group
		case "version":
			dst = version
		case third:
			dst = name
		default:
			return d.skip(0)
		}
		return d.stringField(dst, path, k)
	})
}

func (d *reviewDecoder) userInfo(u *authenticationv1.UserInfo) error {
	if d.peek() == 'n' {
		return d.literal("null")
	}
	return d.object("request.userInfo", func(key string) error {
		switch key {
		case "username":
			return d.stringInto(&u.Username, "request.userInfo.username")
		case "uid":
			return d.stringInto(&u.UID, "request.userInfo.uid")
		case "groups":
			return d.strings(&u.Groups, "request.userInfo.groups")
		case "extra":
			if d.peek() == 'n' {
				return d.literal("null")
			}
			u.Extra = map[string]authenticationv1.ExtraValue{}
			return d.object("request.userInfo.extra", func(k string) error {
				var v []string
				if err := d.strings(&v, "request.userInfo.extra"); err != nil {
					return err
				}
				u.Extra[k] = v
				return nil
			})
		}
		return d.skip(0)
	})
}

// raw keeps the next value (object, or anything the translation then
// rejects) as a slice of data; null leaves *dst nil.
func (d *reviewDecoder) raw(dst *[]byte) error {
	if d.peek() == 'n' {
		return d.literal("null")
	}
	start := d.i
	if err := d.skip(0); err != nil {
		return err
	}
	*dst = d.data[start:d.i:d.i]
	return nil
}

func (d *reviewDecoder) strings(dst *[]string, path string) error {
	switch d.peek() {
	case 'n':
		return d.literal("null")
	case '[':
	default:
		return d.errorf("%s: want a list of strings", path)
	}
	d.i++
	out := []string{}
	if d.peek() == ']' {
		d.i++
		*dst = out
		return nil
	}
	for {
		if d.peek() != '"' {
			return d.errorf("%s: want a list of strings", path)
		}
		s, err := d.str()
		if err != nil {
			return err
		}
		out = append(out, s)
		done, err := d.next(']', path)
		if err != nil {
			return err
		}
		if done {
			*dst = out
			return nil
		}
	}
}

// stringInto reads a string (null leaves dst alone, as encoding/json).
func (d *reviewDecoder) stringInto(dst *string, path string) error {
	return d.stringField(dst, path, "")
}

// stringField is stringInto of the field key of the object at path (the
// path of its error joined only when there is one).
func (d *reviewDecoder) stringField(dst *string, path, key string) error {
	switch d.peek() {
	case 'n':
		return d.literal("null")
	case '"':
		s, err := d.str()
		*dst = s
		return err
	}
	if key != "" {
		path += "." + key
	}
	return d.errorf("%s: want a string", path)
}

func (d *reviewDecoder) literal(word string) error {
	if len(d.data)-d.i < len(word) || string(d.data[d.i:d.i+len(word)]) != word {
		return d.errorf("invalid literal")
	}
	d.i += len(word)
	return nil
}

// str reads a string at d.i (which is '"').
func (d *reviewDecoder) str() (string, error) {
	start := d.i + 1
	for j := start; j < len(d.data); j++ {
		c := d.data[j]
		switch {
		case c == '"':
			d.i = j + 1
			if !utf8.Valid(d.data[start:j]) {
				return string([]rune(string(d.data[start:j]))), nil // invalid bytes become U+FFFD, as encoding/json
			}
			return string(d.data[start:j]), nil
		case c == '\\':
			return d.slowStr()
		case c < 0x20:
			d.i = j
			return "", d.errorf("control character in a string")
		}
	}
	return "", d.errorf("unterminated string")
}

// slowStr reads a string with escapes through strconv.Unquote-like
// rules of JSON.
func (d *reviewDecoder) slowStr() (string, error) {
	end, err := d.skipString(d.i)
	if err != nil {
		return "", err
	}
	var s string
	if err := jsonUnquote(d.data[d.i:end], &s); err != nil {
		return "", d.errorf("bad string: %v", err)
	}
	d.i = end
	return s, nil
}

// skipString returns the offset after the string starting at i, checking
// its escapes and characters.
func (d *reviewDecoder) skipString(i int) (int, error) {
	for j := i + 1; j < len(d.data); j++ {
		c := d.data[j]
		switch {
		case c == '"':
			return j + 1, nil
		case c == '\\':
			j++
			if j >= len(d.data) {
				break
			}
			switch d.data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(d.data) {
					d.i = j
					return 0, d.errorf("bad \\u escape")
				}
				for _, h := range d.data[j+1 : j+5] {
					if !isHex(h) {
						d.i = j
						return 0, d.errorf("bad \\u escape")
					}
				}
				j += 4
			default:
				d.i = j
				return 0, d.errorf("bad escape")
			}
		case c < 0x20:
			d.i = j
			return 0, d.errorf("control character in a string")
		}
	}
	d.i = len(d.data)
	return 0, d.errorf("unterminated string")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// skip checks and skips one value.
func (d *reviewDecoder) skip(depth int) error {
	if depth > maxReviewDepth {
		return d.errorf("nested too deep")
	}
	switch c := d.peek(); {
	case c == '{':
		if d.open('}') {
			return nil
		}
		for {
			if d.peek() != '"' {
				return d.errorf("want a field name")
			}
			end, err := d.skipString(d.i)
			if err != nil {
				return err
			}
			d.i = end
			if d.peek() != ':' {
				return d.errorf("want ':'")
			}
			d.i++
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			if done, err := d.next('}', ""); done || err != nil {
				return err
			}
		}
	case c == '[':
		if d.open(']') {
			return nil
		}
		for {
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			if done, err := d.next(']', ""); done || err != nil {
				return err
			}
		}
	case c == '"':
		end, err := d.skipString(d.i)
		if err != nil {
			return err
		}
		d.i = end
		return nil
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	case c == 0 && d.i >= len(d.data):
		return d.errorf("unexpected end of JSON")
	}
	return d.errorf("invalid character %q", d.data[d.i])
}

// number checks and skips a JSON number.
func (d *reviewDecoder) number() error {
	j := d.i
	if j < len(d.data) && d.data[j] == '-' {
		j++
	}
	digits := func() int {
		n := 0
		for j < len(d.data) && '0' <= d.data[j] && d.data[j] <= '9' {
			j++
			n++
		}
		return n
	}
	if j < len(d.data) && d.data[j] == '0' {
		j++
	} else if digits() == 0 {
		return d.errorf("bad number")
	}
	if j < len(d.data) && d.data[j] == '.' {
		j++
		if digits() == 0 {
			return d.errorf("bad number")
		}
	}
	if j < len(d.data) && (d.data[j] == 'e' || d.data[j] == 'E') {
		j++
		if j < len(d.data) && (d.data[j] == '+' || d.data[j] == '-') {
			j++
		}
		if digits() == 0 {
			return d.errorf("bad number")
		}
	}
	d.i = j
	return nil
}

// jsonUnquote decodes a JSON string with escapes.
func jsonUnquote(quoted []byte, dst *string) error {
	return json.Unmarshal(quoted, dst)
}
