package vpol

import (
	"bytes"
	"cmp"
	"encoding/json"
	"maps"
	"slices"

	policiesv1 "github.com/kyverno/api/api/policies.kyverno.io/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The two autogen configurations: Deployment-like controllers and
// CronJobs (Kyverno's pkg/cel/autogen).
const (
	AutogenDefaults = "defaults"
	AutogenCronJobs = "cronjobs"
)

// Target is a pod controller a variant applies to.
type Target struct {
	Group, Version, Resource, Kind string
}

type controller struct {
	target Target
	config string
}

// controllers are Kyverno's autogen ConfigsMap, by the name
// autogen.podControllers.controllers uses.
var controllers = map[string]controller{
	"daemonsets":   {Target{"apps", "v1", "daemonsets", "DaemonSet"}, AutogenDefaults},
	"deployments":  {Target{"apps", "v1", "deployments", "Deployment"}, AutogenDefaults},
	"replicasets":  {Target{"apps", "v1", "replicasets", "ReplicaSet"}, AutogenDefaults},
	"statefulsets": {Target{"apps", "v1", "statefulsets", "StatefulSet"}, AutogenDefaults},
	"jobs":         {Target{"batch", "v1", "jobs", "Job"}, AutogenDefaults},
	"cronjobs":     {Target{"batch", "v1", "cronjobs", "CronJob"}, AutogenCronJobs},
}

// replacements rewrite the expressions of a Pod policy for the pod
// template of each configuration.
var replacements = map[string][][2]string{
	AutogenDefaults: {{"spec", "spec.template.spec"}, {"metadata", "spec.template.metadata"}},
	AutogenCronJobs: {{"spec", "spec.jobTemplate.spec.template.spec"}, {"metadata", "spec.jobTemplate.spec.template.metadata"}},
}

// autogenVariant is a spec generated for pod controllers.
type autogenVariant struct {
	config  string
	targets []Target
	spec    *policiesv1.ValidatingPolicySpec
}

// canAutogen is Kyverno's CanAutoGen: the policy matches Pods only, by a
// single resource rule without resource names, object selector or
// exclusions.
func canAutogen(mc *admissionregistrationv1.MatchResources) bool {
	if mc == nil {
		return false
	}
	if os := mc.ObjectSelector; os != nil && (len(os.MatchLabels) > 0 || len(os.MatchExpressions) > 0) {
		return false
	}
	if len(mc.ExcludeResourceRules) != 0 || len(mc.ResourceRules) != 1 {
		return false
	}
	r := mc.ResourceRules[0]
	return len(r.ResourceNames) == 0 &&
		slices.Equal(r.APIGroups, []string{""}) &&
		slices.Equal(r.APIVersions, []string{"v1"}) &&
		slices.Equal(r.Resources, []string{"pods"})
}

// autogen computes the pod controller variants of a spec as Kyverno's
// vpol autogen does: one per configuration of the controllers named by
// autogen.podControllers.controllers (all six by default; unknown names
// are ignored), each with matchConstraints for its controllers (the
// policy's operations and namespaceSelector) and every "object.spec",
// "object.metadata", "oldObject.spec" and "oldObject.metadata" of the
// spec's JSON rewritten for the pod template (".namespace" after metadata
// is kept). Variants come in the order of their configuration's name.
func autogen(spec *policiesv1.ValidatingPolicySpec) ([]autogenVariant, error) {
	if !canAutogen(spec.MatchConstraints) {
		return nil, nil
	}
	var pc *policiesv1.PodControllersGenerationConfiguration
	if a := spec.AutogenConfiguration; a != nil {
		pc = a.PodControllers
	}
	var out []autogenVariant
	for _, c := range AutogenConfigs(spec.MatchConstraints, pc) {
		raw, err := json.Marshal(spec)
		if err != nil {
			return nil, err
		}
		var cp policiesv1.ValidatingPolicySpec
		if err := json.Unmarshal(raw, &cp); err != nil {
			return nil, err
		}
		cp.MatchConstraints = c.MatchConstraints
		raw, err = json.Marshal(&cp)
		if err != nil {
			return nil, err
		}
		for _, r := range replacements[c.Name] {
			raw = replace(raw, []byte("object."+r[0]), []byte("object."+r[1]))
			raw = replace(raw, []byte("oldObject."+r[0]), []byte("oldObject."+r[1]))
		}
		var rewritten policiesv1.ValidatingPolicySpec
		if err := json.Unmarshal(raw, &rewritten); err != nil {
			return nil, err
		}
		out = append(out, autogenVariant{config: c.Name, targets: c.Targets, spec: &rewritten})
	}
	return out, nil
}

// CanAutogen is Kyverno's CanAutoGen, for the other kinds of the group
// (engine/mpol): whether a policy with these constraints gets variants for
// pod controllers.
func CanAutogen(mc *admissionregistrationv1.MatchResources) bool { return canAutogen(mc) }

// AutogenConfig is one autogen configuration of a policy on Pods and what
// its variant matches.
type AutogenConfig struct {
	// Name is AutogenDefaults or AutogenCronJobs.
	Name string
	// Targets are its pod controllers, sorted as Kyverno sorts a
	// variant's targets.
	Targets []Target
	// MatchConstraints are the variant's (Kyverno's
	// CreateMatchConstraints): the targets with the policy's operations
	// and namespace selector; nil without operations.
	MatchConstraints *admissionregistrationv1.MatchResources
}

// AutogenConfigs returns the autogen configurations of a policy whose
// matchConstraints are mc (CanAutogen holds) and whose
// autogen.podControllers is pc, in the order of their names (the order
// of its variants): the controllers pc.controllers names (all six when pc
// or its list is nil; unknown names are ignored), by configuration.
func AutogenConfigs(mc *admissionregistrationv1.MatchResources, pc *policiesv1.PodControllersGenerationConfiguration) []AutogenConfig {
	var names []string
	if pc != nil {
		names = pc.Controllers
	}
	byConfig := autogenTargets(names)
	out := make([]AutogenConfig, 0, len(byConfig))
	for _, name := range slices.Sorted(maps.Keys(byConfig)) {
		targets := byConfig[name]
		out = append(out, AutogenConfig{Name: name, Targets: targets,
			MatchConstraints: matchConstraints(targets, mc.ResourceRules[0].Operations, mc.NamespaceSelector.DeepCopy())})
	}
	return out
}

// autogenTargets returns the pod controllers named by
// autogen.podControllers.controllers (all six when names is nil; unknown
// names are ignored) by autogen configuration (AutogenDefaults,
// AutogenCronJobs), each list sorted as Kyverno sorts a variant's targets.
func autogenTargets(names []string) map[string][]Target {
	if names == nil {
		names = slices.Sorted(maps.Keys(controllers))
	}
	byConfig := map[string][]Target{}
	seen := map[string]bool{}
	for _, n := range names {
		c, ok := controllers[n]
		if !ok || seen[n] {
			continue
		}
		seen[n] = true
		byConfig[c.config] = append(byConfig[c.config], c.target)
	}
	for _, targets := range byConfig {
		slices.SortFunc(targets, func(a, b Target) int {
			return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Version, b.Version),
				cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Kind, b.Kind))
		})
	}
	return byConfig
}

// AutogenMatchConstraints are the constraints of a variant for targets
// (Kyverno's CreateMatchConstraints), with the policy's operations and
// namespace selector; nil without operations.
func AutogenMatchConstraints(targets []Target, operations []admissionregistrationv1.OperationType, nsSelector *metav1.LabelSelector) *admissionregistrationv1.MatchResources {
	return matchConstraints(targets, operations, nsSelector)
}

// matchConstraints are the constraints of a variant: one resource rule
// per group and version of its targets (Kyverno's CreateMatchConstraints);
// nil without operations.
func matchConstraints(targets []Target, operations []admissionregistrationv1.OperationType, nsSelector *metav1.LabelSelector) *admissionregistrationv1.MatchResources {
	if len(targets) == 0 || len(operations) == 0 {
		return nil
	}
	type gv struct{ group, version string }
	byGV := map[gv][]string{}
	for _, t := range targets {
		k := gv{t.Group, t.Version}
		if !slices.Contains(byGV[k], t.Resource) {
			byGV[k] = append(byGV[k], t.Resource)
		}
	}
	keys := slices.SortedFunc(maps.Keys(byGV), func(a, b gv) int {
		return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.version, b.version))
	})
	rules := make([]admissionregistrationv1.NamedRuleWithOperations, 0, len(keys))
	for _, k := range keys {
		resources := slices.Clone(byGV[k])
		slices.Sort(resources)
		rules = append(rules, admissionregistrationv1.NamedRuleWithOperations{
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{
				Rule: admissionregistrationv1.Rule{
					APIGroups:   []string{k.group},
					APIVersions: []string{k.version},
					Resources:   resources,
				},
				Operations: slices.Clone(operations),
			},
		})
	}
	var sel *metav1.LabelSelector
	if nsSelector != nil {
		sel = nsSelector.DeepCopy()
	}
	return &admissionregistrationv1.MatchResources{ResourceRules: rules, NamespaceSelector: sel}
}

// AutogenRewrite applies Kyverno's autogen replacements of a configuration
// (AutogenDefaults, AutogenCronJobs) to the JSON of a spec, as this
// package rewrites a ValidatingPolicy's variants, for the other kinds of
// the group whose autogen rewrites the whole spec (engine/ivpol).
func AutogenRewrite(raw []byte, config string) []byte {
	for _, r := range replacements[config] {
		raw = replace(raw, []byte("object."+r[0]), []byte("object."+r[1]))
		raw = replace(raw, []byte("oldObject."+r[0]), []byte("oldObject."+r[1]))
	}
	return raw
}

// replace is Kyverno's autogen replacement: every from becomes to, except
// where ".namespace" (not followed by an identifier character) comes right
// after it.
func replace(data, from, to []byte) []byte {
	if len(from) == 0 || bytes.Equal(from, to) || !bytes.Contains(data, from) {
		return data
	}
	var buf bytes.Buffer
	buf.Grow(len(data) + bytes.Count(data, from)*max(0, len(to)-len(from)))
	for {
		i := bytes.Index(data, from)
		if i < 0 {
			break
		}
		buf.Write(data[:i])
		rest := data[i+len(from):]
		if protected(rest) {
			buf.Write(from)
		} else {
			buf.Write(to)
		}
		data = rest
	}
	buf.Write(data)
	return buf.Bytes()
}

func protected(rest []byte) bool {
	const suffix = ".namespace"
	if !bytes.HasPrefix(rest, []byte(suffix)) {
		return false
	}
	next := rest[len(suffix):]
	return len(next) == 0 || !isIdentByte(next[0])
}

func isIdentByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
