package variables

import (
	"regexp"

	"github.com/verdict-policy/verdict/engine/jmespath"
)

// userVariables are Kyverno's ForbiddenUserVariables
// (pkg/validation/policy/background.go): request data that background scans
// do not have. Each must not follow a "." and must end at a word boundary;
// the "." inside is any character. They are matched against the variable
// as written, braces included.
var userVariables = []*regexp.Regexp{
	regexp.MustCompile(`[^\.](serviceAccountName)\b`),
	regexp.MustCompile(`[^\.](serviceAccountNamespace)\b`),
	regexp.MustCompile(`[^\.](request.userInfo)\b`),
	regexp.MustCompile(`[^\.](request.roles)\b`),
	regexp.MustCompile(`[^\.](request.clusterRoles)\b`),
}

// UserInfoVar returns the first of vars that Kyverno rejects in a background
// policy (spec.background true, or mutateExistingOnPolicyUpdate): one whose
// text names serviceAccountName, serviceAccountNamespace, request.userInfo,
// request.roles or request.clusterRoles. As in Kyverno, only variables as
// written are checked, not nested ones, and the check is on the text:
// "{{ request.userInfo.username }}" and "{{ to_upper(serviceAccountName) }}"
// are caught, "{{ foo.request.userInfo }}" is not.
func UserInfoVar(vars []Var) (Var, bool) {
	for _, v := range vars {
		if v.Nested {
			continue
		}
		for _, re := range userVariables {
			if re.MatchString(v.Source) {
				return v, true
			}
		}
	}
	return Var{}, false
}

// References reports whether the text of q names one of names as Kyverno's
// background check does: not after a "." and up to a word boundary. With
// names "request.userInfo", the query "request.userInfo.groups" matches and
// "object.request.userInfo" does not.
func References(q *jmespath.Query, names ...string) bool {
	if q == nil {
		return false
	}
	text := q.String()
	for _, name := range names {
		re, err := regexp.Compile(`(?:^|[^\.])` + regexp.QuoteMeta(name) + `\b`)
		if err == nil && re.MatchString(text) {
			return true
		}
	}
	return false
}
