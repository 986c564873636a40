package autogen

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyverno"
)

// AnnotationControllers is the policy annotation that lists the controllers
// autogen generates rules for ("none" turns it off).
const AnnotationControllers = "pod-policies.kyverno.io/autogen-controllers"

const cronJob = "CronJob"

// podControllers are the controllers autogen targets by default.
var podControllers = []string{"DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet", "ReplicationController", cronJob}

// validatedControllers are the controller names an annotation may list for
// the spec.template rules; an annotation with none of them is used as is.
var validatedControllers = []string{"DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet", "ReplicationController"}

// allControllers is what the annotation value "all" stands for, in Kyverno's
// order (splitKinds sorts it afterwards).
const allControllers = "DaemonSet,Deployment,Job,StatefulSet,ReplicaSet,ReplicationController"

// podControllerGVK maps kind names to the group/version/kind strings the
// generated match blocks use.
var podControllerGVK = map[string]string{
	"DaemonSet":             "apps/v1/DaemonSet",
	"Deployment":            "apps/v1/Deployment",
	"Job":                   "batch/v1/Job",
	"StatefulSet":           "apps/v1/StatefulSet",
	"ReplicaSet":            "apps/v1/ReplicaSet",
	"ReplicationController": "v1/ReplicationController",
	"CronJob":               "batch/v1/CronJob",
	"Pod":                   "v1/Pod",
}

// Rules returns the rules of doc with the rules autogen adds for Pod
// controllers, in Kyverno's order: the policy's rules (without those whose
// name starts with "autogen-", when autogen adds rules), then for each rule
// its autogen-<name> and autogen-cronjob-<name> rules. It is Kyverno's
// autogen.Default.ComputeRules(policy, ""), which Kyverno's mutation,
// generation, image verification and background scans use.
//
// The generated rules share no memory with doc; the policy's own rules are
// doc's (shallow copies), not to be changed.
func Rules(doc *kyverno.Document) ([]kyverno.Rule, error) {
	return RulesForKind(doc, "")
}

// RulesForKind is Rules for a resource of the given kind: Kyverno's
// ComputeRules(policy, kind), which its validation uses with the kind of
// the resource. If kind is not one of the controllers autogen applies to,
// the policy's rules come back unchanged; otherwise only the rules for that
// controller are generated.
func RulesForKind(doc *kyverno.Document, kind string) ([]kyverno.Rule, error) {
	if doc == nil {
		return nil, nil
	}
	rules := slices.Clip(doc.Spec.Rules) // appending to the result must not write into doc
	controllers, ok := actualControllers(doc)
	if !ok {
		return rules, nil
	}
	if kind != "" {
		if !slices.Contains(controllers, kind) {
			return rules, nil
		}
	} else {
		kind = strings.Join(controllers, ",")
	}
	if kind == "none" {
		return rules, nil
	}
	generated, err := generateRules(rules, kind)
	if err != nil || len(generated) == 0 {
		return rules, err
	}
	out := make([]kyverno.Rule, 0, len(rules)+len(generated))
	for _, r := range rules {
		if !isAutogenRuleName(r.Name) {
			out = append(out, r)
		}
	}
	return append(out, generated...), nil
}

// Controllers returns the controller kinds Rules generates rules for, as
// short kind names: the spec.template controllers sorted, then "CronJob".
// It is nil when autogen adds no rule to doc (the annotation is "none", a
// rule disables autogen, or no rule matches Pods alone).
func Controllers(doc *kyverno.Document) []string {
	if doc == nil {
		return nil
	}
	controllers, ok := actualControllers(doc)
	if !ok {
		return nil
	}
	kind := strings.Join(controllers, ",")
	if kind == "none" {
		return nil
	}
	var pod, cron bool
	stripped := stripCronJob(kind)
	for i := range doc.Spec.Rules {
		r := &doc.Spec.Rules[i]
		if g, _ := generateRuleForControllers(r, stripped); g != nil {
			pod = true
		}
		if g, _ := generateCronJobRule(r, kind); g != nil {
			cron = true
		}
	}
	var out []string
	if pod {
		out = append(out, splitKinds(resolveControllers(stripped))...)
	}
	if cron {
		out = append(out, cronJob)
	}
	return out
}

// actualControllers returns the controllers of the annotation (or the
// default ones), sorted, and false when autogen does not apply to doc.
func actualControllers(doc *kyverno.Document) ([]string, bool) {
	if !canAutoGen(&doc.Spec) {
		return nil, false
	}
	value, ok := doc.Metadata.Annotations[AnnotationControllers]
	if !ok {
		return sortedSet(podControllers), true
	}
	return sortedSet(strings.Split(value, ",")), true
}

// sortedSet returns the distinct strings of in, sorted. Kyverno joins a set
// in random order; every use of the joined string sorts it again or only
// looks for substrings, so sorting here changes nothing.
func sortedSet(in []string) []string {
	out := slices.Clone(in)
	sort.Strings(out)
	return slices.Compact(out)
}

// canAutoGen reports whether autogen applies to the policy at all. It does
// not when a rule generates resources, uses a JSON patch, or selects
// resources by name, names, selector or annotations, or Pod with other kinds,
// in match or exclude; nor when no match or exclude names Pod or a
// controller.
func canAutoGen(spec *kyverno.Spec) bool {
	needed := false
	for i := range spec.Rules {
		rule := &spec.Rules[i]
		if rule.Generate != nil && !isEmpty(reflect.ValueOf(*rule.Generate)) {
			return false
		}
		if rule.Mutate != nil {
			if rule.Mutate.PatchesJSON6902 != "" {
				return false
			}
			for _, fe := range rule.Mutate.Foreach {
				if fe.PatchesJSON6902 != "" {
					return false
				}
			}
		}
		if !supportsAutogen(&needed, &rule.Match) {
			return false
		}
		if rule.Exclude != nil && !supportsAutogen(&needed, rule.Exclude) {
			return false
		}
	}
	return needed
}

// supportsAutogen checks the resource filters of a match or exclude block
// and records in needed whether one names Pod or a controller.
func supportsAutogen(needed *bool, m *kyverno.MatchResources) bool {
	if !supportsAutogenFilter(needed, m.Resources) {
		return false
	}
	for _, f := range m.Any {
		if !supportsAutogenFilter(needed, f.Resources) {
			return false
		}
	}
	for _, f := range m.All {
		if !supportsAutogenFilter(needed, f.Resources) {
			return false
		}
	}
	return true
}

func supportsAutogenFilter(needed *bool, rd *kyverno.ResourceDescription) bool {
	if rd == nil {
		return true
	}
	if rd.Name != "" || len(rd.Names) > 0 || rd.Selector != nil || rd.Annotations != nil ||
		(len(rd.Kinds) > 1 && containsKind(rd.Kinds, "Pod")) {
		return false
	}
	for _, k := range rd.Kinds {
		if k == "Pod" || slices.Contains(podControllers, k) {
			*needed = true
		}
	}
	return true
}

// generateRules returns the autogen rules of rules for the comma-separated
// controllers.
func generateRules(rules []kyverno.Rule, controllers string) ([]kyverno.Rule, error) {
	var out []kyverno.Rule
	for i := range rules {
		if g, keep := generateRuleForControllers(&rules[i], stripCronJob(controllers)); g != nil {
			r, err := convertRule(g, keep, false, i)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		if g, keep := generateCronJobRule(&rules[i], controllers); g != nil {
			r, err := convertRule(g, keep, true, i)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// stripCronJob removes CronJob from the comma-separated controllers, sorted.
func stripCronJob(controllers string) string {
	var out []string
	for _, c := range splitKinds(controllers) {
		if c != cronJob {
			out = append(out, c)
		}
	}
	return strings.Join(out, ",")
}

func splitKinds(controllers string) []string {
	kinds := strings.Split(controllers, ",")
	sort.Strings(kinds)
	return kinds
}

// resolveControllers turns the controllers of a spec.template rule into the
// kinds it matches: "all" is every controller but CronJob; a list keeps its
// known controllers, or, when it has none, stays as it is.
func resolveControllers(controllers string) string {
	if controllers == "all" {
		return allControllers
	}
	if controllers == "none" {
		return controllers
	}
	var known []string
	for _, c := range splitKinds(controllers) {
		if slices.Contains(validatedControllers, c) {
			known = append(known, c)
		}
	}
	if len(known) == 0 {
		return controllers
	}
	return strings.Join(known, ",")
}

// generateRuleForControllers returns the autogen-<name> rule of rule for the
// spec.template controllers, or nil (see generateRule for keepValidate).
func generateRuleForControllers(rule *kyverno.Rule, controllers string) (r *kyverno.Rule, keepValidate bool) {
	if isAutogenRuleName(rule.Name) || controllers == "" {
		return nil, false
	}
	matchKinds := kindsOf(&rule.Match)
	var excludeKinds []string
	if rule.Exclude != nil {
		excludeKinds = kindsOf(rule.Exclude)
	}
	if !containsKind(matchKinds, "Pod") || (len(excludeKinds) != 0 && !containsKind(excludeKinds, "Pod")) {
		return nil, false
	}
	return generateRule(autogenRuleName("autogen", rule.Name), rule, "template", "spec/template",
		splitKinds(resolveControllers(controllers)), false)
}

// generateCronJobRule returns the autogen-cronjob-<name> rule of rule, or
// nil: the spec.template rule for the same controllers, nested once more
// under spec.jobTemplate.
func generateCronJobRule(rule *kyverno.Rule, controllers string) (r *kyverno.Rule, keepValidate bool) {
	if !strings.Contains(controllers, cronJob) && !strings.Contains(controllers, "all") {
		return nil, false
	}
	podRule, _ := generateRuleForControllers(rule, controllers)
	return generateRule(autogenRuleName("autogen-cronjob", rule.Name), podRule,
		"jobTemplate", "spec/jobTemplate/spec/template", []string{cronJob}, true)
}

// autogenRuleName is prefix-name, cut to 63 bytes.
func autogenRuleName(prefix, name string) string {
	name = prefix + "-" + name
	if len(name) > 63 {
		name = name[:63]
	}
	return name
}

func isAutogenRuleName(name string) bool {
	return strings.HasPrefix(name, "autogen-")
}

// kindsOf returns the kinds of a match or exclude block: the inline ones,
// then those of all, then those of any.
func kindsOf(m *kyverno.MatchResources) []string {
	var kinds []string
	if m.Resources != nil {
		kinds = append(kinds, m.Resources.Kinds...)
	}
	for _, f := range m.All {
		if f.Resources != nil {
			kinds = append(kinds, f.Resources.Kinds...)
		}
	}
	for _, f := range m.Any {
		if f.Resources != nil {
			kinds = append(kinds, f.Resources.Kinds...)
		}
	}
	return kinds
}

// generateRule rewrites a copy of rule for controllers: its name, the kinds
// of its match and exclude blocks, and its action, nested under
// spec.<tplKey>. It returns nil for rules whose action autogen does not
// handle. keepValidate is true when the result's validate must be kept even
// if empty: Kyverno always sets an anyPattern (null when there is no list).
func generateRule(name string, rule *kyverno.Rule, tplKey, shift string, kinds []string, cron bool) (r *kyverno.Rule, keepValidate bool) {
	if rule == nil {
		return nil, false
	}
	rule = deepCopy(rule)
	rule.Name = name
	replaceKinds := func(filters []kyverno.ResourceFilter) []kyverno.ResourceFilter {
		for i := range filters {
			if filters[i].Resources == nil {
				if cron {
					filters[i].Resources = &kyverno.ResourceDescription{Kinds: toGVK(kinds)}
				}
				continue
			}
			if cron || containsKind(filters[i].Resources.Kinds, "Pod") {
				filters[i].Resources.Kinds = toGVK(kinds)
			}
		}
		return filters
	}
	switch {
	case len(rule.Match.Any) > 0:
		rule.Match.Any = replaceKinds(rule.Match.Any)
	case len(rule.Match.All) > 0:
		rule.Match.All = replaceKinds(rule.Match.All)
	default:
		if rule.Match.Resources == nil {
			rule.Match.Resources = &kyverno.ResourceDescription{}
		}
		rule.Match.Resources.Kinds = toGVK(kinds)
	}
	if ex := rule.Exclude; ex != nil {
		switch {
		case len(ex.Any) > 0:
			ex.Any = replaceKinds(ex.Any)
		case len(ex.All) > 0:
			ex.All = replaceKinds(ex.All)
		default:
			if ex.Resources != nil && len(ex.Resources.Kinds) != 0 {
				ex.Resources.Kinds = toGVK(kinds)
			}
		}
	}
	nest := func(v any) any {
		return map[string]any{"spec": map[string]any{tplKey: v}}
	}
	if m := rule.Mutate; m != nil {
		if m.PatchStrategicMerge != nil {
			rule.Mutate = &kyverno.Mutation{PatchStrategicMerge: nest(m.PatchStrategicMerge)}
			return rule, false
		}
		if len(m.Foreach) > 0 {
			foreach := make([]kyverno.ForEachMutation, len(m.Foreach))
			for i, fe := range m.Foreach {
				foreach[i] = kyverno.ForEachMutation{
					List:                fe.List,
					Context:             fe.Context,
					Preconditions:       fe.Preconditions,
					PatchStrategicMerge: nest(fe.PatchStrategicMerge),
				}
			}
			rule.Mutate = &kyverno.Mutation{Foreach: foreach}
			return rule, false
		}
	}
	if v := rule.Validate; v != nil {
		base := func(pivot string) *kyverno.Validation {
			return &kyverno.Validation{
				Message:                 shiftReferences(v.Message, shift, pivot),
				FailureAction:           v.FailureAction,
				FailureActionOverrides:  v.FailureActionOverrides,
				AllowExistingViolations: v.AllowExistingViolations,
			}
		}
		switch {
		case v.Pattern != nil:
			nv := base("pattern")
			nv.Pattern = nest(v.Pattern)
			rule.Validate = nv
			return rule, false
		case v.Deny != nil:
			nv := base("deny")
			nv.Deny = v.Deny
			rule.Validate = nv
			return rule, false
		case v.PodSecurity != nil:
			nv := base("podSecurity")
			nv.PodSecurity = &kyverno.PodSecurity{
				Level:   v.PodSecurity.Level,
				Version: v.PodSecurity.Version,
				Exclude: append(make([]kyverno.PodSecurityStandard, 0, len(v.PodSecurity.Exclude)), v.PodSecurity.Exclude...),
			}
			rule.Validate = nv
			return rule, false
		case v.AnyPattern != nil:
			nv := base("anyPattern")
			if patterns, ok := v.AnyPattern.([]any); ok && len(patterns) > 0 {
				nested := make([]any, len(patterns))
				for i, p := range patterns {
					nested[i] = nest(p)
				}
				nv.AnyPattern = nested
			}
			rule.Validate = nv
			return rule, true
		case len(v.Foreach) > 0:
			nv := base("pattern")
			nv.Foreach = v.Foreach
			rule.Validate = nv
			return rule, false
		case v.CEL != nil && !isEmpty(reflect.ValueOf(*v.CEL)):
			return rule, false
		}
	}
	if rule.VerifyImages != nil {
		return rule, false
	}
	return nil, false
}

func toGVK(kinds []string) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		if gvk, ok := podControllerGVK[k]; ok {
			out[i] = gvk
		} else {
			out[i] = k
		}
	}
	return out
}

// referenceRe finds $(...) references in messages, as Kyverno's
// regex.RegexReferences.
var referenceRe = regexp.MustCompile(`^\$\(.[^\ ]*\)|[^\\]\$\(.[^\ ]*\)`)

// shiftReferences inserts shift after pivot in the $(...) references of a
// message, as Kyverno's variables.FindAndShiftReferences, quirks included.
func shiftReferences(value, shift, pivot string) string {
	for _, reference := range referenceRe.FindAllString(value, -1) {
		initial := reference[:2] == `$(`
		old := reference
		if !initial {
			reference = reference[1:]
		}
		index := strings.Index(reference, pivot)
		if pivot == "anyPattern" {
			// Kyverno reads the pattern index after the pivot, and panics
			// when the pivot is missing and the reference is short.
			from := index + len(pivot) + 1
			if from < 0 || from > len(reference) {
				continue
			}
			pivot = pivot + "/" + strings.Split(reference[from:], "/")[0]
		}
		shifted := strings.ReplaceAll(reference, pivot, pivot+"/"+shift)
		replacement := ""
		if !initial {
			replacement = string(rune(old[0]))
		}
		value = strings.Replace(value, old, replacement+shifted, 1)
	}
	return value
}

// containsKind reports whether one of kinds, once stripped of its group,
// version and subresource, is kind.
func containsKind(kinds []string, kind string) bool {
	for _, e := range kinds {
		_, k := kindFromGVK(e)
		if i := strings.Index(k, "/"); i >= 0 && strings.Count(k, "/") == 1 {
			k = k[:i]
		}
		if k == kind {
			return true
		}
	}
	return false
}

// kindFromGVK splits "group/version/kind" selectors as Kyverno's
// kube.GetKindFromGVK.
func kindFromGVK(s string) (string, string) {
	parts := strings.Split(s, "/")
	switch len(parts) {
	case 1:
		return "", formatSubresource(s)
	case 2:
		if parts[0] == "*" && parts[1] == "*" {
			return "", s
		}
		if kyverno.IsKindVersion(parts[0]) {
			return parts[0], formatSubresource(parts[1])
		}
		return "", s
	case 3:
		if kyverno.IsKindVersion(parts[0]) {
			return parts[0], parts[1] + "/" + parts[2]
		}
		return parts[0] + "/" + parts[1], formatSubresource(parts[2])
	case 4:
		return parts[0] + "/" + parts[1], parts[2] + "/" + parts[3]
	}
	return "", ""
}

func formatSubresource(s string) string {
	return strings.Replace(s, ".", "/", 1)
}

// convertRule finishes a generated rule as Kyverno's createRule and
// convertRule do: it keeps the parts Kyverno keeps (dropping empty ones,
// image extractors and generate), and rewrites request.object.spec and
// request.object.metadata references (object.spec… in CEL rules) to the
// controller's Pod template.
func convertRule(g *kyverno.Rule, keepValidate, cron bool, index int) (kyverno.Rule, error) {
	out := kyverno.Rule{
		Name:                   g.Name,
		Match:                  g.Match,
		VerifyImages:           g.VerifyImages,
		SkipBackgroundRequests: g.SkipBackgroundRequests,
	}
	if len(g.ReportProperties) > 0 {
		out.ReportProperties = g.ReportProperties
	}
	if g.Exclude != nil && !isEmpty(reflect.ValueOf(*g.Exclude)) {
		out.Exclude = g.Exclude
	}
	if g.Mutate != nil && !isEmpty(reflect.ValueOf(*g.Mutate)) {
		out.Mutate = g.Mutate
	}
	if g.Validate != nil && (keepValidate || !isEmpty(reflect.ValueOf(*g.Validate))) {
		out.Validate = g.Validate
	}
	if !emptyConditions(g.Preconditions) {
		out.Preconditions = g.Preconditions
	}
	if len(g.Context) > 0 {
		out.Context = g.Context
	}
	if len(g.CELPreconditions) > 0 {
		out.CELPreconditions = g.CELPreconditions
	}
	replacements := podReplacements
	switch {
	case cron && out.Validate != nil && out.Validate.CEL != nil:
		replacements = cronJobCELReplacements
	case cron:
		replacements = cronJobReplacements
	case out.Validate != nil && out.Validate.CEL != nil:
		replacements = podCELReplacements
	}
	if err := rewriteStrings(reflect.ValueOf(&out).Elem(), replacements); err != nil {
		return kyverno.Rule{}, &engine.Error{
			Code: engine.CodeInvalidPolicy, Path: fmt.Sprintf("spec.rules[%d]", index),
			Message: "autogen: " + err.Error(), Err: err,
		}
	}
	return out, nil
}

// emptyConditions reports whether preconditions are absent or empty, as
// Kyverno decides it on its typed conditions.
func emptyConditions(c any) bool {
	switch c := c.(type) {
	case nil:
		return true
	case []any:
		return len(c) == 0
	case map[string]any:
		return c["any"] == nil && c["all"] == nil
	}
	return false
}

// The rewrites of references to the Pod in generated rules, applied in
// order to every string of the rule.
var (
	podReplacements = []replacement{
		{"request.object.spec", "request.object.spec.template.spec"},
		{"request.oldObject.spec", "request.oldObject.spec.template.spec"},
		{"request.object.metadata", "request.object.spec.template.metadata"},
		{"request.oldObject.metadata", "request.oldObject.spec.template.metadata"},
	}
	podCELReplacements = []replacement{
		{"object.spec", "object.spec.template.spec"},
		{"oldObject.spec", "oldObject.spec.template.spec"},
		{"object.metadata", "object.spec.template.metadata"},
		{"oldObject.metadata", "oldObject.spec.template.metadata"},
	}
	cronJobReplacements = []replacement{
		{"request.object.spec", "request.object.spec.jobTemplate.spec.template.spec"},
		{"request.oldObject.spec", "request.oldObject.spec.jobTemplate.spec.template.spec"},
		{"request.object.metadata", "request.object.spec.jobTemplate.spec.template.metadata"},
		{"request.oldObject.metadata", "request.oldObject.spec.jobTemplate.spec.template.metadata"},
	}
	cronJobCELReplacements = []replacement{
		{"object.spec", "object.spec.jobTemplate.spec.template.spec"},
		{"oldObject.spec", "oldObject.spec.jobTemplate.spec.template.spec"},
		{"object.metadata", "object.spec.jobTemplate.spec.template.metadata"},
		{"oldObject.metadata", "oldObject.spec.jobTemplate.spec.template.metadata"},
	}
)

type replacement struct{ old, new string }

func replaceAll(s string, rs []replacement) string {
	for _, r := range rs {
		s = strings.ReplaceAll(s, r.old, r.new)
	}
	return s
}

// rewriteStrings applies rs to every string in v, in place, the way Kyverno
// rewrites the JSON form of the rule and decodes it back into the rule: typed
// maps keep their old keys next to rewritten ones, free-form values (any) are
// replaced.
func rewriteStrings(v reflect.Value, rs []replacement) error {
	switch v.Kind() {
	case reflect.String:
		v.SetString(replaceAll(v.String(), rs))
	case reflect.Pointer:
		if !v.IsNil() {
			return rewriteStrings(v.Elem(), rs)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if err := rewriteStrings(v.Field(i), rs); err != nil {
				return err
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			if err := rewriteStrings(v.Index(i), rs); err != nil {
				return err
			}
		}
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		iter := v.MapRange()
		for iter.Next() {
			out.SetMapIndex(iter.Key(), iter.Value())
		}
		iter = v.MapRange()
		for iter.Next() {
			k := reflect.New(v.Type().Key()).Elem()
			k.Set(iter.Key())
			if err := rewriteStrings(k, rs); err != nil {
				return err
			}
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(iter.Value())
			if err := rewriteStrings(e, rs); err != nil {
				return err
			}
			out.SetMapIndex(k, e)
		}
		v.Set(out)
	case reflect.Interface:
		if v.IsNil() {
			return nil
		}
		nv, err := rewriteValue(v.Elem().Interface(), rs)
		if err != nil {
			return err
		}
		if nv == nil {
			v.SetZero()
		} else {
			v.Set(reflect.ValueOf(nv))
		}
	}
	return nil
}

// rewriteValue returns a copy of the JSON value x with rs applied to every
// string, keys included. Values that JSON cannot hold are an error.
func rewriteValue(x any, rs []replacement) (any, error) {
	switch x := x.(type) {
	case nil, bool, float64:
		return x, nil
	case string:
		return replaceAll(x, rs), nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			e, err := rewriteValue(e, rs)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			e, err := rewriteValue(x[k], rs)
			if err != nil {
				return nil, err
			}
			out[replaceAll(k, rs)] = e
		}
		return out, nil
	}
	// Other Go values (ints, json.Number, typed maps) go through JSON, as in
	// Kyverno.
	b, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return rewriteValue(v, rs)
}

// isEmpty reports whether v equals the zero value of Kyverno's type for it
// (reflect.DeepEqual with T{}): nil and zero values are empty, empty but
// non-nil slices and maps are not. Kyverno holds a resource description,
// clone and cloneList by value where this model has pointers; those count
// as empty when they point to an empty value.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return true
		}
		switch v.Type().Elem() {
		case reflect.TypeFor[kyverno.ResourceDescription](), reflect.TypeFor[kyverno.CloneFrom](), reflect.TypeFor[kyverno.CloneList]():
			return isEmpty(v.Elem())
		}
		return false
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if !isEmpty(v.Field(i)) {
				return false
			}
		}
		return true
	}
	return v.IsZero()
}

// deepCopy returns a copy of r that shares no memory with it.
func deepCopy(r *kyverno.Rule) *kyverno.Rule {
	out := new(kyverno.Rule)
	copyValue(reflect.ValueOf(out).Elem(), reflect.ValueOf(r).Elem())
	return out
}

func copyValue(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		p := reflect.New(src.Type().Elem())
		copyValue(p.Elem(), src.Elem())
		dst.Set(p)
	case reflect.Struct:
		for i := 0; i < src.NumField(); i++ {
			copyValue(dst.Field(i), src.Field(i))
		}
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := 0; i < src.Len(); i++ {
			copyValue(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	case reflect.Map:
		if src.IsNil() {
			return
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		iter := src.MapRange()
		for iter.Next() {
			e := reflect.New(src.Type().Elem()).Elem()
			copyValue(e, iter.Value())
			m.SetMapIndex(iter.Key(), e)
		}
		dst.Set(m)
	case reflect.Interface:
		if src.IsNil() {
			return
		}
		e := reflect.New(src.Elem().Type()).Elem()
		copyValue(e, src.Elem())
		dst.Set(e)
	default:
		dst.Set(src)
	}
}
