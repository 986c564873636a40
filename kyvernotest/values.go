package kyvernotest

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	enginevars "github.com/verdict-policy/verdict/engine/variables"
)

// Values is a cli.kyverno.io/v1alpha1 Values file (kind Values or Value,
// or the older form without apiVersion and kind). As in Kyverno 1.19,
// whose values loader decodes the file strictly without looking at its
// apiVersion and kind, neither is checked.
type Values struct {
	APIVersion string         `json:"apiVersion,omitempty"`
	Kind       string         `json:"kind,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	ValuesSpec
}

// ValuesSpec is the content of a values file, or a Test's inline values.
type ValuesSpec struct {
	// GlobalValues apply to every policy and resource.
	GlobalValues map[string]any `json:"globalValues,omitempty"`
	// Policies hold values per policy, per rule and per resource name.
	Policies []PolicyValues `json:"policies,omitempty"`
	// NamespaceSelectors give the labels of namespaces, for
	// namespaceSelector matching.
	NamespaceSelectors []NamespaceSelector `json:"namespaceSelector,omitempty"`
	// Namespaces are Namespace objects; their labels win over
	// NamespaceSelectors of the same name.
	Namespaces []map[string]any `json:"namespaces,omitempty"`
	// Subresources map a subresource kind to its parent resource.
	Subresources []Subresource `json:"subresources,omitempty"`
}

// PolicyValues are the values of one policy.
type PolicyValues struct {
	Name      string           `json:"name"`
	Resources []ResourceValues `json:"resources,omitempty"`
	Rules     []RuleValues     `json:"rules,omitempty"`
}

// ResourceValues are values for the resources of a given name.
type ResourceValues struct {
	Name   string         `json:"name"`
	Values map[string]any `json:"values,omitempty"`
}

// RuleValues are values for one rule (and its autogen rules).
type RuleValues struct {
	Name          string           `json:"name"`
	Values        map[string]any   `json:"values,omitempty"`
	ForeachValues map[string][]any `json:"foreachValues,omitempty"`
}

// NamespaceSelector gives the labels of a namespace.
type NamespaceSelector struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
}

// Subresource maps a subresource to its parent resource.
type Subresource struct {
	Subresource    APIResource `json:"subresource"`
	ParentResource APIResource `json:"parentResource"`
}

// APIResource is a metav1.APIResource.
type APIResource struct {
	Name               string   `json:"name"`
	SingularName       string   `json:"singularName,omitempty"`
	Namespaced         bool     `json:"namespaced,omitempty"`
	Group              string   `json:"group,omitempty"`
	Version            string   `json:"version,omitempty"`
	Kind               string   `json:"kind"`
	Verbs              []string `json:"verbs,omitempty"`
	ShortNames         []string `json:"shortNames,omitempty"`
	Categories         []string `json:"categories,omitempty"`
	StorageVersionHash string   `json:"storageVersionHash,omitempty"`
}

// ParseValues decodes a values file strictly, whatever its apiVersion and
// kind (Values, Value or none), as Kyverno's CLI does (values.Load): a
// file of another kind fails on the fields that are not those of a
// values file.
func ParseValues(name string, data []byte) (*ValuesSpec, error) {
	var v Values
	if err := unmarshalStrict(data, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := v.ValuesSpec.checkNames(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &v.ValuesSpec, nil
}

// checkNames checks that every variable name splits into keys as
// Kyverno's context.AddVariable splits it (variables.SplitName): Kyverno's
// CLI fails on such a name when it adds it, Verdict when it loads the
// values.
func (v *ValuesSpec) checkNames() error {
	check := func(path string, names []string) error {
		for _, n := range names {
			if _, err := enginevars.SplitName(n); err != nil {
				return fmt.Errorf("%s: failed to add variable to context %s (%w)", path, n, err)
			}
		}
		return nil
	}
	if err := check("globalValues", slices.Sorted(maps.Keys(v.GlobalValues))); err != nil {
		return err
	}
	for i, p := range v.Policies {
		for j, r := range p.Resources {
			if err := check(fmt.Sprintf("policies[%d].resources[%d].values", i, j), slices.Sorted(maps.Keys(r.Values))); err != nil {
				return err
			}
		}
		for j, r := range p.Rules {
			if err := check(fmt.Sprintf("policies[%d].rules[%d].values", i, j), slices.Sorted(maps.Keys(r.Values))); err != nil {
				return err
			}
			if err := check(fmt.Sprintf("policies[%d].rules[%d].foreachValues", i, j), slices.Sorted(maps.Keys(r.ForeachValues))); err != nil {
				return err
			}
		}
	}
	return nil
}

// ParseSet parses --set k=v pairs as Kyverno does: entries without exactly
// one "=", with an empty key or value, or on request.object are ignored,
// and the first value of a key wins.
func ParseSet(pairs []string) map[string]any {
	out := map[string]any{}
	for _, p := range pairs {
		kv := strings.Split(strings.TrimSpace(p), "=")
		if len(kv) != 2 {
			continue
		}
		k, v := strings.TrimSpace(kv[0]), strings.TrimSpace(kv[1])
		if k == "" || v == "" || strings.Contains(k, "request.object.") {
			continue
		}
		if _, ok := out[k]; ok {
			continue
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// variables is the values of a run, ready for lookups.
type variables struct {
	spec *ValuesSpec
	set  map[string]any
	// nsLabels is namespace name -> labels.
	nsLabels map[string]map[string]string
}

func newVariables(spec *ValuesSpec, set map[string]any) *variables {
	v := &variables{spec: spec, set: set}
	if spec == nil {
		return v
	}
	v.nsLabels = map[string]map[string]string{}
	for _, n := range spec.NamespaceSelectors {
		v.nsLabels[n.Name] = n.Labels
	}
	for _, n := range spec.Namespaces {
		meta, _ := n["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		labels := map[string]string{}
		if l, ok := meta["labels"].(map[string]any); ok {
			for k, v := range l {
				labels[k] = fmt.Sprint(v)
			}
		}
		v.nsLabels[name] = labels
	}
	return v
}

// hasPolicyValues reports whether values differ between policies, which
// means each policy needs a request of its own.
func (v *variables) hasPolicyValues() bool {
	return v.spec != nil && len(v.spec.Policies) > 0
}

// compute returns the variables of a policy and resource, as Kyverno's
// ComputeVariables does: global values, then the values of the resource's
// name, then --set values; request.operation defaults to CREATE. Rule
// values are scoped to their rule: see ruleValues.
func (v *variables) compute(policyName, resourceName string) map[string]any {
	out := map[string]any{}
	if v.spec != nil {
		for k, val := range v.spec.GlobalValues {
			out[k] = val
		}
		for _, p := range v.spec.Policies {
			if p.Name != policyName {
				continue
			}
			for _, r := range p.Resources {
				if r.Name != resourceName {
					continue
				}
				for k, val := range r.Values {
					out[k] = val
				}
			}
		}
	}
	for k, val := range v.set {
		out[k] = val
	}
	if _, ok := out["request.operation"]; !ok {
		out["request.operation"] = "CREATE"
	}
	return out
}

// ruleValues returns the values of each rule of a policy, keyed by rule
// name, as Kyverno's CLI store keeps them: they are added to the rule's own
// context when it runs (and to its autogen rules'), on top of compute's.
// For foreach values, the first element's value is used.
func (v *variables) ruleValues(policyName string) map[string]map[string]any {
	if v.spec == nil {
		return nil
	}
	var out map[string]map[string]any
	for _, p := range v.spec.Policies {
		if p.Name != policyName {
			continue
		}
		for _, r := range p.Rules {
			vals := map[string]any{}
			for k, val := range r.Values {
				vals[k] = val
			}
			for k, list := range r.ForeachValues {
				if len(list) > 0 {
					vals[k] = list[0]
				}
			}
			if len(vals) == 0 {
				continue
			}
			if out == nil {
				out = map[string]map[string]any{}
			}
			out[r.Name] = vals
		}
	}
	return out
}

// subresource maps a resource's group, version and kind to its parent's
// and the subresource name, when the values declare it a subresource.
func (v *variables) subresource(group, version, kind string) (pg, pv, pk, sub string, ok bool) {
	if v.spec == nil {
		return "", "", "", "", false
	}
	for _, s := range v.spec.Subresources {
		if s.Subresource.Group == group && s.Subresource.Version == version && s.Subresource.Kind == kind {
			parts := strings.Split(s.Subresource.Name, "/")
			if len(parts) > 1 {
				sub = parts[1]
			}
			return s.ParentResource.Group, s.ParentResource.Version, s.ParentResource.Kind, sub, true
		}
	}
	return "", "", "", "", false
}
