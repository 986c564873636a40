package podsecurity

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/pod-security-admission/policy"
)

// kyvernoMessage is Kyverno's convertChecks followed by
// FormatChecksPrint, on copies of the field errors: the text Message
// must write.
func kyvernoMessage(failed []Result, kind string) string {
	var b strings.Builder
	for _, r := range failed {
		fmt.Fprintf(&b, "(Forbidden reason: %s, field error list: [", r.Result.ForbiddenReason)
		if r.Result.ErrList != nil {
			for i, orig := range *r.Result.ErrList {
				e := *orig
				switch kind {
				case "DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet", "ReplicationController":
					e.Field = strings.ReplaceAll(e.Field, "spec", "spec.template.spec")
				case "CronJob":
					e.Field = strings.ReplaceAll(e.Field, "spec", "spec.jobTemplate.spec.template.spec")
				}
				e.Field = strings.ReplaceAll(e.Field, "metadata", "spec.template.metadata")
				badValue := true
				if s, ok := e.BadValue.(string); ok && s == "" {
					badValue = false
				}
				if e.Type == field.ErrorTypeForbidden && badValue {
					fmt.Fprintf(&b, "%s is forbidden, forbidden values found: %+v", e.Field, e.BadValue)
				} else {
					b.WriteString(e.Error())
				}
				if i != len(*r.Result.ErrList)-1 {
					b.WriteString(", ")
				}
			}
		}
		b.WriteString("])")
	}
	return b.String()
}

func failedWith(errs ...*field.Error) []Result {
	list := field.ErrorList(errs)
	return []Result{{ID: "x", Result: policy.CheckResult{ForbiddenReason: "reason", ErrList: &list}}}
}

var messageKinds = []string{"Pod", "Deployment", "CronJob", "Job", ""}

func TestMessage(t *testing.T) {
	path := field.NewPath("spec", "containers").Index(0).Child("securityContext", "capabilities", "drop")
	meta := field.NewPath("metadata", "annotations").Key("container.apparmor.security.beta.kubernetes.io/c")
	tests := []struct {
		name string
		give []Result
	}{
		{name: "forbidden string", give: failedWith(field.Forbidden(meta, ""), &field.Error{Type: field.ErrorTypeForbidden, Field: "spec.volumes[0].hostPath", BadValue: "/var/data"})},
		{name: "forbidden empty string", give: failedWith(field.Forbidden(path, ""))},
		{name: "forbidden empty string with detail", give: failedWith(field.Forbidden(path, "not here"))},
		{name: "forbidden nil", give: failedWith(&field.Error{Type: field.ErrorTypeForbidden, Field: "spec.hostIPC"})},
		{name: "forbidden bool", give: failedWith(&field.Error{Type: field.ErrorTypeForbidden, Field: "spec.hostIPC", BadValue: true})},
		{name: "forbidden int", give: failedWith(&field.Error{Type: field.ErrorTypeForbidden, Field: "spec.containers[0].ports[0].hostPort", BadValue: 80})},
		{name: "forbidden int32", give: failedWith(&field.Error{Type: field.ErrorTypeForbidden, Field: "spec.x", BadValue: int32(-3)})},
		{name: "forbidden strings", give: failedWith(&field.Error{Type: field.ErrorTypeForbidden, Field: "spec.containers[1].securityContext.capabilities.add", BadValue: []string{"NET_ADMIN", "SYS_TIME"}})},
		{name: "forbidden no strings", give: failedWith(&field.Error{Type: field.ErrorTypeForbidden, Field: "spec.x", BadValue: []string{}})},
		{name: "forbidden strings nil", give: failedWith(&field.Error{Type: field.ErrorTypeForbidden, Field: "spec.x", BadValue: []string(nil)})},
		{name: "forbidden struct", give: failedWith(&field.Error{Type: field.ErrorTypeForbidden, Field: "spec.x", BadValue: struct{ A int }{3}})},
		{name: "required", give: failedWith(field.Required(path, ""), field.Required(meta, "detail"))},
		{name: "required with value", give: failedWith(&field.Error{Type: field.ErrorTypeRequired, Field: "spec.x", BadValue: 3})},
		{name: "too long", give: failedWith(&field.Error{Type: field.ErrorTypeTooLong, Field: "spec.x", BadValue: "v", Detail: "d"})},
		{name: "invalid", give: failedWith(field.Invalid(path, "v", "d"), field.Invalid(meta, 3, ""), field.Invalid(path, []string{"a"}, ""))},
		{name: "not supported", give: failedWith(field.NotSupported(path, "v", []string{"a", "b"}))},
		{name: "unknown type", give: failedWith(&field.Error{Type: "FieldValueOdd", Field: "spec.x"})},
		{name: "no field errors", give: []Result{{ID: "x", Result: policy.CheckResult{ForbiddenReason: "r"}}}},
		{name: "empty list", give: failedWith()},
		{name: "several checks", give: append(failedWith(field.Required(path, "")), failedWith(field.Forbidden(meta, ""), field.Required(path, ""))...)},
		{name: "words inside names", give: failedWith(&field.Error{Type: field.ErrorTypeForbidden, Field: "metadata.annotations[specmetadataspec/smetadatam]", BadValue: "spectacle"})},
	}
	for _, tt := range tests {
		for _, kind := range messageKinds {
			t.Run(tt.name+"/"+kind, func(t *testing.T) {
				want := kyvernoMessage(tt.give, kind)
				if got := Message(tt.give, kind); got != want {
					t.Errorf("Message(%s, %q) = %q, want %q", tt.name, kind, got, want)
				}
				c := &Checker{Level: "restricted", Version: "v1.30"}
				wantRule := fmt.Sprintf(`Validation rule '%s' failed. It violates PodSecurity "%s:%s": %s`, "rule", c.Level, c.Version, want)
				if got := c.FailMessage("rule", tt.give, kind); got != wantRule {
					t.Errorf("FailMessage(rule, %s, %q) = %q, want %q", tt.name, kind, got, wantRule)
				}
			})
		}
	}
}

// TestMessageKeepsResults pins that Message leaves the field errors as
// they are: rules evaluating the same pod share them.
func TestMessageKeepsResults(t *testing.T) {
	give := failedWith(field.Required(field.NewPath("spec", "hostIPC"), ""), field.Forbidden(field.NewPath("metadata", "annotations"), ""))
	want := []string{"spec.hostIPC", "metadata.annotations"}
	first := Message(give, "Deployment")
	second := Message(give, "Deployment")
	if first != second {
		t.Errorf("Message() twice = %q, then %q", first, second)
	}
	var got []string
	for _, e := range *give[0].Result.ErrList {
		got = append(got, e.Field)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields after Message() (-want +got):\n%s", diff)
	}
}

func FuzzMessage(f *testing.F) {
	f.Add("spec.containers[0].securityContext.capabilities.drop", "Forbidden", uint8(0), "ALL", int64(0), "", uint8(1))
	f.Add("metadata.annotations[x]", "FieldValueRequired", uint8(1), "", int64(0), "detail", uint8(2))
	f.Add("spec.volumes[0].hostPath", "FieldValueForbidden", uint8(2), "a b", int64(-1), "", uint8(3))
	f.Add("specmetadata", "FieldValueInvalid", uint8(3), "m", int64(7), "d", uint8(0))
	f.Fuzz(func(t *testing.T, fieldPath, errType string, valueKind uint8, s string, n int64, detail string, kind uint8) {
		var value any
		switch valueKind % 8 {
		case 0:
			value = s
		case 1:
			value = n%2 == 0
		case 2:
			value = int(n)
		case 3:
			value = strings.Fields(s)
		case 4:
			value = nil
		case 5:
			value = n
		case 6:
			value = float64(n) / 3
		case 7:
			value = []string(nil)
		}
		types := []field.ErrorType{field.ErrorTypeForbidden, field.ErrorTypeRequired, field.ErrorTypeInvalid, field.ErrorTypeTooLong, field.ErrorTypeNotSupported, field.ErrorTypeInternal, field.ErrorType(errType)}
		give := failedWith(&field.Error{Type: types[int(kind)%len(types)], Field: fieldPath, BadValue: value, Detail: detail})
		k := messageKinds[int(kind/8)%len(messageKinds)]
		want := kyvernoMessage(give, k)
		if got := Message(give, k); got != want {
			t.Errorf("Message(%q, %q) = %q, want %q", fieldPath, k, got, want)
		}
	})
}
