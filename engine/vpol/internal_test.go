package vpol

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func applyReplacements(expr, config string) string {
	data := []byte(expr)
	for _, r := range replacements[config] {
		data = replace(data, []byte("object."+r[0]), []byte("object."+r[1]))
		data = replace(data, []byte("oldObject."+r[0]), []byte("oldObject."+r[1]))
	}
	return string(data)
}

// Kyverno's TestApplyRewritesExpressions (pkg/cel/autogen).
func TestReplace(t *testing.T) {
	tests := []struct {
		name       string
		give       string
		giveConfig string
		want       string
	}{
		{name: "deployments spec", give: "object.spec", giveConfig: AutogenDefaults, want: "object.spec.template.spec"},
		{name: "deployments oldObject spec", give: "oldObject.spec", giveConfig: AutogenDefaults, want: "oldObject.spec.template.spec"},
		{name: "cronjobs spec", give: "object.spec", giveConfig: AutogenCronJobs, want: "object.spec.jobTemplate.spec.template.spec"},
		{name: "cronjobs oldObject spec", give: "oldObject.spec", giveConfig: AutogenCronJobs, want: "oldObject.spec.jobTemplate.spec.template.spec"},
		{name: "metadata", give: "object.metadata.labels['app']", giveConfig: AutogenDefaults, want: "object.spec.template.metadata.labels['app']"},
		{name: "namespace kept", give: "object.metadata.namespace", giveConfig: AutogenDefaults, want: "object.metadata.namespace"},
		{name: "old namespace kept", give: "oldObject.metadata.namespace", giveConfig: AutogenCronJobs, want: "oldObject.metadata.namespace"},
		{name: "namespace in a list", give: "!(object.metadata.namespace in ['a', 'b'])", giveConfig: AutogenDefaults, want: "!(object.metadata.namespace in ['a', 'b'])"},
		{name: "namespace and labels", give: "object.metadata.namespace == 'foo' && object.metadata.labels['team'] == 'p'", giveConfig: AutogenDefaults, want: "object.metadata.namespace == 'foo' && object.spec.template.metadata.labels['team'] == 'p'"},
		{name: "longer identifier", give: "object.metadata.namespaceFoo", giveConfig: AutogenDefaults, want: "object.spec.template.metadata.namespaceFoo"},
		{name: "containers", give: "object.spec.containers.all(c, has(c.securityContext))", giveConfig: AutogenCronJobs, want: "object.spec.jobTemplate.spec.template.spec.containers.all(c, has(c.securityContext))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := applyReplacements(tt.give, tt.giveConfig); got != tt.want {
				t.Errorf("replace(%q, %s) = %q, want %q", tt.give, tt.giveConfig, got, tt.want)
			}
		})
	}
}

func podRule(ops ...admissionregistrationv1.OperationType) admissionregistrationv1.NamedRuleWithOperations {
	return admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
		Operations: ops,
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
	}}
}

// Kyverno's TestCanAutoGen (pkg/cel/autogen).
func TestCanAutogen(t *testing.T) {
	withName := podRule(admissionregistrationv1.Create)
	withName.ResourceNames = []string{"p"}
	other := podRule(admissionregistrationv1.Create)
	other.Resources = []string{"configmaps"}
	tests := []struct {
		name string
		give *admissionregistrationv1.MatchResources
		want bool
	}{
		{name: "nil"},
		{name: "pods", give: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{podRule(admissionregistrationv1.Create)}}, want: true},
		{name: "namespace selector", give: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}, ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{podRule(admissionregistrationv1.Create)}}, want: true},
		{name: "object selector", give: &admissionregistrationv1.MatchResources{ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}, ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{podRule(admissionregistrationv1.Create)}}},
		{name: "resource names", give: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{withName}}},
		{name: "two rules", give: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{podRule(admissionregistrationv1.Create), podRule(admissionregistrationv1.Update)}}},
		{name: "exclusions", give: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{podRule(admissionregistrationv1.Create)}, ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{other}}},
		{name: "other resource", give: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{other}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := canAutogen(tt.give); got != tt.want {
				t.Errorf("canAutogen(%s) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

// Kyverno's TestCreateMatchConstraints (pkg/cel/autogen).
func TestMatchConstraints(t *testing.T) {
	ops := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}
	rule := func(group, version string, resources ...string) admissionregistrationv1.NamedRuleWithOperations {
		return admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: ops,
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{version}, Resources: resources},
		}}
	}
	got := matchConstraints([]Target{
		{Group: "foo", Version: "v1", Resource: "bars", Kind: "Bar"},
		{Group: "flop", Version: "v1", Resource: "foos", Kind: "Foo"},
		{Group: "flop", Version: "v2", Resource: "foos", Kind: "Foo"},
		{Group: "flop", Version: "v2", Resource: "bars", Kind: "Bar"},
	}, ops, nil)
	want := &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
		rule("flop", "v1", "foos"), rule("flop", "v2", "bars", "foos"), rule("foo", "v1", "bars"),
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("matchConstraints(4 targets) (-want +got):\n%s", diff)
	}
	if got := matchConstraints([]Target{{Group: "foo", Version: "v1", Resource: "bars"}}, nil, nil); got != nil {
		t.Errorf("matchConstraints(no operations) = %v, want nil", got)
	}
}

func TestNormalize(t *testing.T) {
	in := map[string]any{"a": 2.0, "b": 0.5, "c": []any{1.0, "x"}, "d": map[string]any{"e": "f"}, "big": 1e300}
	want := map[string]any{"a": int64(2), "b": 0.5, "c": []any{int64(1), "x"}, "d": map[string]any{"e": "f"}, "big": 1e300}
	got := Normalize(in)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Normalize (-want +got):\n%s", diff)
	}
	if in["a"] != 2.0 {
		t.Errorf("Normalize modified its input: a = %v", in["a"])
	}
	unchanged := map[string]any{"d": map[string]any{"e": "f"}}
	if got := Normalize(unchanged).(map[string]any); reflect.ValueOf(got).UnsafePointer() != reflect.ValueOf(unchanged).UnsafePointer() {
		t.Errorf("Normalize(no numbers) copied its input")
	}
}
