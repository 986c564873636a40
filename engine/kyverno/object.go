package kyverno

import "strings"

// StringMap returns the string values of v when v is a JSON object
// (labels, annotations): nil when v is not an object or is empty. Values
// that are not strings are left out, as Kubernetes would refuse them.
func StringMap(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// MetadataStrings is StringMap of metadata.<field> of obj
// ("labels", "annotations").
func MetadataStrings(obj map[string]any, field string) map[string]string {
	md, _ := obj["metadata"].(map[string]any)
	return StringMap(md[field])
}

// APIGroup returns the group of an apiVersion: what comes before its
// first "/" ("apps" of "apps/v1"), "" for the core group ("v1").
func APIGroup(apiVersion string) string {
	for i := 0; i < len(apiVersion); i++ {
		if apiVersion[i] == '/' {
			return apiVersion[:i]
		}
	}
	return ""
}

// IsKindVersion reports whether s is the version of a kind selector
// ("v1/Pod", "apps/v1beta1/Deployment"): Kyverno's
// `^(v\d((alpha|beta)\d)?|\*)$`, which both its ParseKindSelector (match
// and exclude) and its GetKindFromGVK (autogen) use.
func IsKindVersion(s string) bool {
	if s == "*" {
		return true
	}
	if len(s) < 2 || s[0] != 'v' || !isDigit(s[1]) {
		return false
	}
	rest := s[2:]
	if rest == "" {
		return true
	}
	for _, tag := range [...]string{"alpha", "beta"} {
		if len(rest) == len(tag)+1 && strings.HasPrefix(rest, tag) && isDigit(rest[len(tag)]) {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// ObjectGVK returns the group, version and kind of a resource object: its
// apiVersion ("group/version", or the version alone for the core group)
// and its kind.
func ObjectGVK(obj map[string]any) (group, version, kind string) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ = obj["kind"].(string)
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		return apiVersion[:i], apiVersion[i+1:], kind
	}
	return "", apiVersion, kind
}
