package manifests

import (
	"regexp"
	"strings"
)

var anyKind = []ObjectRef{{Kind: "*"}}

// libraryDefaults is k8s-manifest-sigstore's resources/default-config.yaml.
var libraryDefaults = []FieldBinding{
	{Fields: []string{
		"metadata.annotations.cosign.sigstore.dev/resourceBundleRef",
		"metadata.annotations.cosign.sigstore.dev/signature",
		"metadata.annotations.cosign.sigstore.dev/message",
		"metadata.annotations.cosign.sigstore.dev/certificate",
		"metadata.annotations.cosign.sigstore.dev/bundle",
	}, Objects: anyKind},
	{Fields: []string{
		"metadata.managedFields.*",
		"metadata.resourceVersion",
		"metadata.selfLink",
		"metadata.annotations.kubectl.kubernetes.io/last-applied-configuration",
		"metadata.annotations.namespace",
		"metadata.creationTimestamp",
		"metadata.generation",
		"metadata.uid",
		"metadata.finalizers",
		"metadata.labels.app.kubernetes.io/instance",
		"status",
	}, Objects: anyKind},
	{Fields: []string{"secrets.*.name", "imagePullSecrets.*.name"}, Objects: []ObjectRef{{Kind: "ServiceAccount"}}},
	{Fields: []string{"spec.ports.*.nodePort", "spec.clusterIP", "spec.clusterIPs.0"}, Objects: []ObjectRef{{Kind: "Service"}}},
	{Fields: []string{"metadata.annotations.deployment.kubernetes.io/revision"}, Objects: []ObjectRef{{Kind: "Deployment"}}},
	{Fields: []string{"metadata.annotations.deprecated.daemonset.template.generation"}, Objects: []ObjectRef{{Kind: "DaemonSet"}}},
	{Fields: []string{"spec.host"}, Objects: []ObjectRef{{Kind: "Route", Group: "route.openshift.io"}}},
}

// kyvernoDefaults is Kyverno's pkg/engine/resources/default-config.yaml.
var kyvernoDefaults = []FieldBinding{
	{Fields: []string{
		"metadata.namespace",
		"spec.containers.*.imagePullPolicy",
		"spec.containers.*.terminationMessagePath",
		"spec.containers.*.terminationMessagePolicy",
		"spec.dnsPolicy",
		"spec.restartPolicy",
		"spec.schedulerName",
		"spec.terminationGracePeriodSeconds",
		"metadata.labels.app.kubernetes.io/instance",
		"metadata.managedFields.*",
		"metadata.resourceVersion",
		"metadata.selfLink",
		"metadata.annotations.control-plane.alpha.kubernetes.io/leader",
		"metadata.annotations.kubectl.kubernetes.io/last-applied-configuration",
		"metadata.finalizers*",
		"metadata.annotations.namespace",
		"metadata.annotations.deprecated.daemonset.template.generation",
		"metadata.creationTimestamp",
		"metadata.uid",
		"metadata.generation",
		"status",
		"metadata.annotations.deployment.kubernetes.io/revision",
	}, Objects: anyKind},
	{Fields: []string{
		"spec.volumes.*.name",
		"spec.volumes.*.projected.*",
		"spec.volumes.*.configMap.defaultMode",
		"spec.containers.*.volumeMounts.*",
		"spec.tolerations.*",
		"spec.enableServiceLinks",
		"spec.preemptionPolicy",
		"spec.priority",
		"spec.serviceAccount",
	}, Objects: []ObjectRef{{Kind: "Pod"}}},
	{Fields: []string{
		"spec.progressDeadlineSeconds",
		"spec.revisionHistoryLimit",
		"spec.strategy.*",
		"spec.template.metadata.creationTimestamp",
		"spec.containers.*.ports.*.protocol",
		"spec.containers.*.resources",
		"spec.securityContext",
	}, Objects: []ObjectRef{{Kind: "Deployment"}}},
	{Fields: []string{"spec.conversion.strategy", "spec.names.listKind"}, Objects: []ObjectRef{{Kind: "CustomResourceDefinition"}}},
	{Fields: []string{
		"spec.ports.*.nodePort",
		"spec.clusterIP",
		"spec.clusterIPs.0",
		"spec.sessionAffinity",
		"spec.type",
		"spec.ipFamilies.*",
		"spec.ipFamilyPolicy",
		"spec.internalTrafficPolicy",
	}, Objects: []ObjectRef{{Kind: "Service"}}},
	{Fields: []string{
		"metadata.annotations.pod-policies.kyverno.io/autogen-controllers",
		"spec.failurePolicy",
		"spec.background",
		"spec.validationFailureAction",
	}, Objects: []ObjectRef{{Kind: "ClusterPolicy"}, {Kind: "Policy"}}},
	{Fields: []string{"secrets.*.name", "imagePullSecrets.*.name"}, Objects: []ObjectRef{{Kind: "ServiceAccount"}}},
}

// ignoreFields lists the fields ignored for o: the library's defaults,
// Kyverno's, the rule's, then the signature annotations of the domain, in
// Kyverno's order.
func ignoreFields(o map[string]any, rule []FieldBinding, keys annotationKeys) []string {
	ref := objectRef(o)
	var out []string
	add := func(list []FieldBinding) {
		for _, b := range list {
			if refsMatch(b.Objects, ref) {
				out = append(out, b.Fields...)
			}
		}
	}
	add(libraryDefaults)
	add(kyvernoDefaults)
	add(rule)
	return append(out, annotationFields(keys)...)
}

// annotationFields are the library's AnnotationKeyMask: the signature
// annotations of the domain.
func annotationFields(keys annotationKeys) []string {
	var out []string
	for _, base := range []string{"message", "signature", "certificate", "bundle", "resourceBundleRef"} {
		out = append(out, "metadata.annotations."+keys.key(base, 0)+"*")
	}
	return out
}

func objectRef(o map[string]any) ObjectRef {
	meta, _ := o["metadata"].(map[string]any)
	apiVersion, _ := o["apiVersion"].(string)
	group, version := parseGroupVersion(apiVersion)
	r := ObjectRef{Group: group, Version: version}
	r.Kind, _ = o["kind"].(string)
	r.Name, _ = meta["name"].(string)
	r.Namespace, _ = meta["namespace"].(string)
	return r
}

// parseGroupVersion is apimachinery's ParseGroupVersion, an invalid value
// giving empty group and version.
func parseGroupVersion(s string) (group, version string) {
	if s == "" || s == "/" {
		return "", ""
	}
	switch strings.Count(s, "/") {
	case 0:
		return "", s
	case 1:
		i := strings.Index(s, "/")
		return s[:i], s[i+1:]
	}
	return "", ""
}

func refsMatch(refs []ObjectRef, r ObjectRef) bool {
	if len(refs) == 0 {
		return true
	}
	for _, p := range refs {
		if matchPattern(p.Group, r.Group) && matchPattern(p.Version, r.Version) && matchPattern(p.Kind, r.Kind) &&
			matchPattern(p.Name, r.Name) && matchPattern(p.Namespace, r.Namespace) {
			return true
		}
	}
	return false
}

// matchPattern is the library's MatchPattern.
func matchPattern(pattern, value string) bool {
	pattern = strings.TrimSpace(pattern)
	switch {
	case pattern == "", pattern == "*":
		return true
	case pattern == "-" && value == "":
		return true
	case strings.HasSuffix(pattern, "*"):
		return strings.HasPrefix(value, strings.TrimRight(pattern, "*"))
	case pattern == value:
		return true
	case strings.Contains(pattern, ","):
		for _, p := range strings.Split(pattern, ",") {
			if matchPattern(strings.TrimSpace(p), value) {
				return true
			}
		}
	}
	return false
}

// keyMatcher is the library's keyExistsInList over a list of field
// patterns: equal, "*" or "" match any key, and a pattern holding "*" is a
// regular expression ("*" made ".*") found anywhere in the key.
type keyMatcher struct {
	exact map[string]bool
	all   bool
	res   []*regexp.Regexp
}

func newKeyMatcher(patterns []string, compiled map[string]*regexp.Regexp) *keyMatcher {
	m := &keyMatcher{exact: map[string]bool{}}
	for _, p := range patterns {
		switch {
		case p == "*" || p == "":
			m.all = true
		case strings.Contains(p, "*"):
			m.exact[p] = true
			// An invalid expression matches nothing, as in the library.
			if re := fieldRegexp(p, compiled); re != nil {
				m.res = append(m.res, re)
			}
		default:
			m.exact[p] = true
		}
	}
	return m
}

// fieldRegexp is the expression of a field pattern holding "*", from
// compiled when it is there; nil when it does not compile.
func fieldRegexp(p string, compiled map[string]*regexp.Regexp) *regexp.Regexp {
	if re, ok := compiled[p]; ok {
		return re
	}
	re, err := regexp.Compile(strings.ReplaceAll(p, "*", ".*"))
	if err != nil {
		return nil
	}
	return re
}

// compileFields compiles the expressions of every field pattern that
// Check may use with opts: the defaults', the rule's and the domain's
// annotation fields, as given and with the "*" the library's Filter
// appends.
func compileFields(opts Options, keys annotationKeys) map[string]*regexp.Regexp {
	out := map[string]*regexp.Regexp{}
	add := func(f string) {
		for _, p := range []string{f, f + "*"} {
			if _, ok := out[p]; ok || p == "*" || !strings.Contains(p, "*") {
				continue
			}
			if re, err := regexp.Compile(strings.ReplaceAll(p, "*", ".*")); err == nil {
				out[p] = re
			}
		}
	}
	for _, list := range [][]FieldBinding{libraryDefaults, kyvernoDefaults, opts.IgnoreFields} {
		for _, b := range list {
			for _, f := range b.Fields {
				add(f)
			}
		}
	}
	for _, f := range annotationFields(keys) {
		add(f)
	}
	return out
}

func (m *keyMatcher) match(key string) bool {
	if m.all || m.exact[key] {
		return true
	}
	for _, re := range m.res {
		if re.MatchString(key) {
			return true
		}
	}
	return false
}
