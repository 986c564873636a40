package mpol

import (
	"regexp"
	"strings"

	policiesv1 "github.com/kyverno/api/api/policies.kyverno.io/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/verdict-policy/verdict/engine/vpol"
)

// autogenVariant is a spec generated for pod controllers.
type autogenVariant struct {
	config  string
	targets []vpol.Target
	spec    *policiesv1.MutatingPolicySpec
}

// The rewrites of Kyverno's mpol autogen: object.spec, and the labels and
// annotations of object.metadata (of oldObject and Object too), become
// those of the pod template.
var (
	specRe        = regexp.MustCompile(`\b(object|oldObject|Object)\.spec`)
	labelsRe      = regexp.MustCompile(`\b(object|oldObject|Object)\.metadata\.labels`)
	annotationsRe = regexp.MustCompile(`\b(object|oldObject|Object)\.metadata\.annotations`)
)

// templatePaths are the pod template's spec and metadata, and the Object
// literal that wraps a rewritten root Object{...} literal, by autogen
// configuration.
var templatePaths = map[string]struct{ spec, metadata, open, close string }{
	vpol.AutogenDefaults: {
		spec: "spec.template.spec", metadata: "spec.template.metadata",
		open:  "Object{spec: Object.spec{template: Object.spec.template{",
		close: "}}}",
	},
	vpol.AutogenCronJobs: {
		spec: "spec.jobTemplate.spec.template.spec", metadata: "spec.jobTemplate.spec.template.metadata",
		open:  "Object{spec: Object.spec{jobTemplate: Object.spec.jobTemplate{spec: Object.spec.jobTemplate.spec{template: Object.spec.jobTemplate.spec.template{",
		close: "}}}}}",
	},
}

// autogen computes the pod controller variants of a spec as Kyverno's mpol
// autogen does: for a policy on Pods only (vpol.CanAutogen), one per
// configuration of the controllers autogen.podControllers.controllers
// names (all six by default), in the order of the configurations' names,
// each with matchConstraints for its controllers (the policy's operations
// and namespaceSelector) and its match conditions and ApplyConfiguration
// expressions rewritten for the pod template (convertTemplate). Variables,
// JSONPatch expressions and audit annotations are kept as written, as in
// Kyverno.
func autogen(spec *policiesv1.MutatingPolicySpec) []autogenVariant {
	if !vpol.CanAutogen(spec.MatchConstraints) {
		return nil
	}
	var pc *policiesv1.PodControllersGenerationConfiguration
	if a := spec.AutogenConfiguration; a != nil {
		pc = a.PodControllers
	}
	var out []autogenVariant
	for _, c := range vpol.AutogenConfigs(spec.MatchConstraints, pc) {
		config := c.Name
		cp := spec.DeepCopy()
		mc := admissionregistrationv1.MatchResources{} // no operation: matches nothing
		if c.MatchConstraints != nil {
			mc = *c.MatchConstraints
		}
		cp.SetMatchConstraints(mc)
		for i := range cp.MatchConditions {
			cp.MatchConditions[i].Expression = convertTemplate(cp.MatchConditions[i].Expression, config)
		}
		for i := range cp.Mutations {
			if ac := cp.Mutations[i].ApplyConfiguration; ac != nil {
				ac.Expression = convertTemplate(ac.Expression, config)
			}
		}
		out = append(out, autogenVariant{config: config, targets: c.Targets, spec: cp})
	}
	return out
}

// convertTemplate is Kyverno's convertPodToTemplateExpression: the
// rewrites above, then a root Object{...} literal (what follows its
// closing brace kept) is wrapped in the literals of the template's path.
func convertTemplate(expression, config string) string {
	if expression == "" {
		return ""
	}
	tp := templatePaths[config]
	expression = specRe.ReplaceAllString(expression, "${1}."+tp.spec)
	expression = labelsRe.ReplaceAllString(expression, "${1}."+tp.metadata+".labels")
	expression = annotationsRe.ReplaceAllString(expression, "${1}."+tp.metadata+".annotations")
	rest, ok := strings.CutPrefix(strings.TrimSpace(expression), "Object")
	if !ok {
		return expression
	}
	content, ok := strings.CutPrefix(strings.TrimLeft(rest, " \t\r\n"), "{")
	if !ok {
		return expression
	}
	depth, end := 1, 0
	for i, ch := range content {
		if ch == '{' {
			depth++
		} else if ch == '}' {
			depth--
			if depth == 0 {
				end = i
				break
			}
		}
	}
	if end == 0 {
		return expression
	}
	return tp.open + content[:end] + tp.close + content[end+1:]
}
