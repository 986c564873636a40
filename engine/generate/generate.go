package generate

import (
	"fmt"
	"strings"

	"github.com/verdict-policy/verdict/engine/internal/jsonconv"
	"github.com/verdict-policy/verdict/engine/pattern"
)

// Labels Kyverno puts on generated resources and clone sources.
const (
	LabelManagedBy       = "app.kubernetes.io/managed-by"
	ManagedByKyverno     = "kyverno"
	LabelPolicyName      = "generate.kyverno.io/policy-name"
	LabelPolicyNamespace = "generate.kyverno.io/policy-namespace"
	LabelRuleName        = "generate.kyverno.io/rule-name"
	LabelTriggerName     = "generate.kyverno.io/trigger-name"
	LabelTriggerUID      = "generate.kyverno.io/trigger-uid"
	LabelTriggerNS       = "generate.kyverno.io/trigger-namespace"
	LabelTriggerKind     = "generate.kyverno.io/trigger-kind"
	LabelTriggerVersion  = "generate.kyverno.io/trigger-version"
	LabelTriggerGroup    = "generate.kyverno.io/trigger-group"
	LabelSourceUID       = "generate.kyverno.io/source-uid"
	LabelSourceNS        = "generate.kyverno.io/source-namespace"
	LabelSourceKind      = "generate.kyverno.io/source-kind"
	LabelSourceVersion   = "generate.kyverno.io/source-version"
	LabelSourceGroup     = "generate.kyverno.io/source-group"
	LabelCloneSource     = "generate.kyverno.io/clone-source"
	// LabelBackgroundRule marks the resources generateExisting created for
	// existing triggers, with the rule name as value:
	// kubectl get <kind> -l kyverno.io/background-gen-rule=<rule> lists
	// them, and deletes them with one selector.
	LabelBackgroundRule = "kyverno.io/background-gen-rule"
)

// Target names a resource.
type Target struct {
	APIVersion, Kind, Namespace, Name string
}

func (t Target) String() string {
	return strings.Join([]string{t.APIVersion, t.Kind, t.Namespace, t.Name}, "/")
}

// Pattern is a generate pattern with its variables substituted.
type Pattern struct {
	Target
	// Data is the content of a data pattern (nil for a data pattern
	// without data, which generates nothing).
	Data any
	// Clone names the source of a clone pattern.
	Clone *Target
	// CloneList selects the sources of a cloneList pattern.
	CloneList *CloneList
}

// CloneList selects several clone sources.
type CloneList struct {
	Namespace string
	// Kinds are "Kind" or "apiVersion/Kind".
	Kinds []string
	// Selector is a rendered metav1.LabelSelector (nil: every object).
	Selector map[string]any
}

// ParsePattern reads a rendered pattern: an object with apiVersion, kind,
// namespace, name, data, clone and cloneList.
func ParsePattern(v any) (*Pattern, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("generate pattern is %T, not an object", v)
	}
	str := func(m map[string]any, k string) (string, error) {
		switch s := m[k].(type) {
		case nil:
			return "", nil
		case string:
			return s, nil
		default:
			return "", fmt.Errorf("generate.%s is %T, not a string", k, m[k])
		}
	}
	p := &Pattern{}
	var err error
	for _, f := range []struct {
		k string
		v *string
	}{{"apiVersion", &p.APIVersion}, {"kind", &p.Kind}, {"namespace", &p.Namespace}, {"name", &p.Name}} {
		if *f.v, err = str(m, f.k); err != nil {
			return nil, err
		}
	}
	p.Data = m["data"]
	if c, ok := m["clone"].(map[string]any); ok {
		p.Clone = &Target{APIVersion: p.APIVersion, Kind: p.Kind}
		if p.Clone.Namespace, err = str(c, "namespace"); err != nil {
			return nil, err
		}
		if p.Clone.Name, err = str(c, "name"); err != nil {
			return nil, err
		}
	}
	if cl, ok := m["cloneList"].(map[string]any); ok {
		p.CloneList = &CloneList{}
		if p.CloneList.Namespace, err = str(cl, "namespace"); err != nil {
			return nil, err
		}
		kinds, _ := cl["kinds"].([]any)
		for _, k := range kinds {
			s, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("generate.cloneList.kinds holds %T, not a string", k)
			}
			p.CloneList.Kinds = append(p.CloneList.Kinds, s)
		}
		p.CloneList.Selector, _ = cl["selector"].(map[string]any)
	}
	return p, nil
}

// KindOf splits a cloneList kind, "Kind" or "apiVersion/Kind" (Kyverno's
// GetKindFromGVK).
func KindOf(s string) (apiVersion, kind string) {
	i := strings.LastIndex(s, "/")
	if i < 0 {
		return "", s
	}
	return s[:i], s[i+1:]
}

// Owner says who generates a resource, and for which trigger.
type Owner struct {
	Policy, PolicyNamespace, Rule string
	// Trigger is the resource whose admission (or existence) generates.
	Trigger map[string]any
	// Existing is true for generateExisting on an existing trigger.
	Existing bool
}

// Labels are the labels Kyverno adds to a generated resource (its
// ManageLabels), plus kyverno.io/background-gen-rule for generateExisting.
func (o Owner) Labels() map[string]string {
	group, version := splitAPIVersion(stringField(o.Trigger, "apiVersion"))
	meta, _ := o.Trigger["metadata"].(map[string]any)
	l := map[string]string{
		LabelManagedBy:       ManagedByKyverno,
		LabelPolicyName:      o.Policy,
		LabelPolicyNamespace: o.PolicyNamespace,
		LabelRuleName:        o.Rule,
		LabelTriggerVersion:  version,
		LabelTriggerGroup:    group,
		LabelTriggerKind:     stringField(o.Trigger, "kind"),
		LabelTriggerNS:       stringField(meta, "namespace"),
		LabelTriggerUID:      stringField(meta, "uid"),
	}
	if o.Existing {
		l[LabelBackgroundRule] = o.Rule
	}
	return l
}

// DownstreamSelector are the labels that select what a trigger generated
// for a policy, as Kyverno deletes downstream resources; byName uses the
// trigger's name instead of its UID (Kyverno's fallback).
func (o Owner) DownstreamSelector(byName bool) map[string]string {
	group, version := splitAPIVersion(stringField(o.Trigger, "apiVersion"))
	meta, _ := o.Trigger["metadata"].(map[string]any)
	l := map[string]string{
		LabelPolicyName:      o.Policy,
		LabelPolicyNamespace: o.PolicyNamespace,
		LabelManagedBy:       ManagedByKyverno,
		LabelTriggerNS:       stringField(meta, "namespace"),
		LabelTriggerKind:     stringField(o.Trigger, "kind"),
		LabelTriggerGroup:    group,
		LabelTriggerVersion:  version,
	}
	if byName {
		l[LabelTriggerName] = stringField(meta, "name")
	} else {
		l[LabelTriggerUID] = stringField(meta, "uid")
	}
	return l
}

func splitAPIVersion(apiVersion string) (group, version string) {
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		return apiVersion[:i], apiVersion[i+1:]
	}
	return "", apiVersion
}

func stringField(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// Build builds a generated resource from the content of a data pattern or
// of a clone (FromClone's result): the content, named after the target,
// with the owner's labels, as Kyverno's generator sets them. It does not
// change content.
func Build(content map[string]any, t Target, o Owner) map[string]any {
	obj := jsonconv.Copy(content).(map[string]any)
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	setOrDelete(meta, "name", t.Name)
	setOrDelete(meta, "namespace", t.Namespace)
	if len(meta) > 0 {
		obj["metadata"] = meta
	}
	if k, _ := obj["kind"].(string); k == "" {
		obj["kind"] = t.Kind
	}
	obj["apiVersion"] = t.APIVersion
	labels, _ := meta["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
	}
	for k, v := range o.Labels() {
		labels[k] = v
	}
	meta["labels"] = labels
	obj["metadata"] = meta
	return obj
}

func setOrDelete(m map[string]any, k, v string) {
	if v == "" {
		delete(m, k)
		return
	}
	m[k] = v
}

// FromClone is Kyverno's copy of a clone source: labelled with the
// source's group, version, kind, namespace and UID, without its UID,
// selfLink, creationTimestamp, managedFields and resourceVersion, and
// without owner references when it goes to another namespace.
func FromClone(source map[string]any, targetNamespace string) map[string]any {
	obj, meta, labels := copyWithLabels(source)
	group, version := splitAPIVersion(stringField(obj, "apiVersion"))
	labels[LabelSourceGroup] = group
	labels[LabelSourceVersion] = version
	labels[LabelSourceKind] = stringField(obj, "kind")
	labels[LabelSourceNS] = stringField(meta, "namespace")
	labels[LabelSourceUID] = stringField(meta, "uid")
	meta["labels"] = labels
	if stringField(meta, "namespace") != targetNamespace {
		delete(meta, "ownerReferences")
	}
	for _, k := range []string{"uid", "selfLink", "creationTimestamp", "managedFields", "resourceVersion"} {
		delete(meta, k)
	}
	return obj
}

// copyWithLabels copies source and returns its metadata and labels,
// which it creates when missing (the labels are set into the metadata by
// the caller).
func copyWithLabels(source map[string]any) (obj, meta, labels map[string]any) {
	obj = jsonconv.Copy(source).(map[string]any)
	meta, _ = obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	labels, _ = meta["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
	}
	return obj, meta, labels
}

// LabelSource returns the clone source with the label Kyverno adds to
// track changes to it (generate.kyverno.io/clone-source: "").
func LabelSource(source map[string]any) map[string]any {
	obj, meta, labels := copyWithLabels(source)
	labels[LabelCloneSource] = ""
	meta["labels"] = labels
	return obj
}

// Unchanged reports whether an existing generated resource already has the
// desired content, as Kyverno decides it: each matches the other as a
// validate pattern.
func Unchanged(desired, existing map[string]any) bool {
	return pattern.CompileSubstituted(existing).Validate(desired).Status == pattern.Pass &&
		pattern.CompileSubstituted(desired).Validate(existing).Status == pattern.Pass
}

// WithIdentityOf copies the server-set fields of existing (uid, selfLink,
// creationTimestamp, managedFields, resourceVersion) into a clone copy, so
// that the two compare equal when nothing else differs.
func WithIdentityOf(obj, existing map[string]any) map[string]any {
	out := jsonconv.Copy(obj).(map[string]any)
	meta, _ := out["metadata"].(map[string]any)
	em, _ := existing["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		out["metadata"] = meta
	}
	for _, k := range []string{"uid", "selfLink", "creationTimestamp", "managedFields", "resourceVersion"} {
		if v, ok := em[k]; ok {
			meta[k] = v
		} else {
			delete(meta, k)
		}
	}
	return out
}
