package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/verdict-policy/verdict/engine/kyverno"
)

// variableRegexp finds {{ }} variables in a JSON text, as Kyverno does when
// it checks a policy for variables.
var variableRegexp = regexp.MustCompile(`(^|[^\\])(\{\{(?:\{[^{}]*\}|[^{}])*\}\})`)

// userVariables are the variables that do not exist in background scans.
var userVariables = []*regexp.Regexp{
	regexp.MustCompile(`[^.](serviceAccountName)\b`),
	regexp.MustCompile(`[^.](serviceAccountNamespace)\b`),
	regexp.MustCompile(`[^.](request\.userInfo)\b`),
	regexp.MustCompile(`[^.](request\.roles)\b`),
	regexp.MustCompile(`[^.](request\.clusterRoles)\b`),
}

// userVariableNames are the texts userVariables look for: a rule without
// any of them needs no regular expression search (which takes about a
// second for a rule of megabytes).
var userVariableNames = [][]byte{
	[]byte("serviceAccountName"), []byte("serviceAccountNamespace"),
	[]byte("request.userInfo"), []byte("request.roles"), []byte("request.clusterRoles"),
}

// usesUserInfo reports whether a rule selects by user (subjects, roles,
// clusterRoles) or reads one of the user variables.
func usesUserInfo(r *kyverno.Rule) bool {
	if hasUser(&r.Match) || (r.Exclude != nil && hasUser(r.Exclude)) {
		return true
	}
	b, err := json.Marshal(r)
	if err != nil {
		return false
	}
	if !slices.ContainsFunc(userVariableNames, func(name []byte) bool { return bytes.Contains(b, name) }) {
		return false
	}
	for _, m := range variableRegexp.FindAllSubmatch(b, -1) {
		for _, re := range userVariables {
			if re.Match(m[2]) {
				return true
			}
		}
	}
	return false
}

func hasUser(m *kyverno.MatchResources) bool {
	if userSet(&m.UserInfo) {
		return true
	}
	for i := range m.Any {
		if userSet(&m.Any[i].UserInfo) {
			return true
		}
	}
	for i := range m.All {
		if userSet(&m.All[i].UserInfo) {
			return true
		}
	}
	return false
}

func userSet(u *kyverno.UserInfo) bool {
	return len(u.Roles) > 0 || len(u.ClusterRoles) > 0 || len(u.Subjects) > 0
}

// elementOutsideForeach finds element / elementIndex variables outside a
// foreach, which Kyverno rejects. It returns the policy path of the first
// one, or "".
func elementOutsideForeach(r *kyverno.Rule, rulePath string) (path, variable string) {
	b, err := json.Marshal(r)
	if err != nil {
		return "", ""
	}
	// A string or key holding "element" holds it in the JSON text too
	// (json.Marshal escapes no letter): a rule without it has nothing to
	// find, and most rules are read back for nothing otherwise.
	if !bytes.Contains(b, []byte("element")) {
		return "", ""
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		return "", ""
	}
	return walkElements(doc, rulePath, false)
}

func walkElements(v any, path string, inForeach bool) (string, string) {
	return firstInStrings(v, path, inForeach, func(t string, inForeach bool) string {
		if inForeach || !strings.Contains(t, "element") {
			return ""
		}
		for _, m := range variableRegexp.FindAllStringSubmatch(t, -1) {
			if name := variableName(m); strings.HasPrefix(name, "element") || name == "elementIndex" {
				return name
			}
		}
		return ""
	})
}

// variableName is the variable of a match of variableRegexp: its text
// without the braces, the spaces and a leading "-".
func variableName(m []string) string {
	name := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(m[2], "{{"), "}}"))
	return strings.TrimSpace(strings.TrimPrefix(name, "-"))
}

// firstInStrings walks v (map keys in sorted order, each key before its
// value) and returns the path of the first string in which find finds a
// name, and that name. inForeach tells find whether the string is below a
// foreach field.
func firstInStrings(v any, path string, inForeach bool, find func(s string, inForeach bool) string) (string, string) {
	switch t := v.(type) {
	case string:
		if name := find(t, inForeach); name != "" {
			return path, name
		}
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, n := firstInStrings(k, path, inForeach, find); p != "" {
				return p, n
			}
			if p, n := firstInStrings(t[k], path+"."+k, inForeach || k == "foreach", find); p != "" {
				return p, n
			}
		}
	case []any:
		for i, e := range t {
			if p, n := firstInStrings(e, fmt.Sprintf("%s[%d]", path, i), inForeach, find); p != "" {
				return p, n
			}
		}
	}
	return "", ""
}
