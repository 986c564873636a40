package kyvernotest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/internal/spool"
)

// This file writes kyverno apply --generate-exceptions: a kyverno.io/v2beta1
// PolicyException per failed result of a cluster-wide policy (as Kyverno's
// printExceptions, from the results of its policy reports).

// generatedException is the PolicyException kyverno apply prints, its
// fields in the order of Kyverno's types (the order of -o json; YAML sorts
// them).
type generatedException struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels,omitempty"`
	} `json:"metadata"`
	Spec struct {
		Match struct {
			All []generatedFilter `json:"all"`
		} `json:"match"`
		Exceptions  []generatedRef         `json:"exceptions"`
		PodSecurity []generatedPodSecurity `json:"podSecurity,omitempty"`
	} `json:"spec"`
}

// generatedPodSecurity is a kyverno.io/v1 PodSecurityStandard of a
// generated exception: a failed control of a podSecurity rule and the
// images it failed for.
type generatedPodSecurity struct {
	ControlName string   `json:"controlName"`
	Images      []string `json:"images,omitempty"`
}

// podSecurityExclusions is what Kyverno's printException makes of a failed
// podSecurity result's controlsJSON property: each control by name, its
// images with their tag or digest replaced by "*" (its
// wildcardTagOrDigest: from the first ":" or "@" on).
func podSecurityExclusions(controlsJSON string) ([]generatedPodSecurity, error) {
	var controls []struct {
		Name   string
		Images []string
	}
	if err := json.Unmarshal([]byte(controlsJSON), &controls); err != nil {
		return nil, fmt.Errorf("failed to unmarshall PSS controls %s: %w", controlsJSON, err)
	}
	out := make([]generatedPodSecurity, 0, len(controls))
	for _, c := range controls {
		ps := generatedPodSecurity{ControlName: c.Name}
		for _, image := range c.Images {
			if i := strings.IndexAny(image, ":@"); i >= 0 {
				image = image[:i] + "*"
			}
			ps.Images = append(ps.Images, image)
		}
		out = append(out, ps)
	}
	return out, nil
}

type generatedFilter struct {
	Resources struct {
		Kinds      []string `json:"kinds,omitempty"`
		Names      []string `json:"names,omitempty"`
		Namespaces []string `json:"namespaces,omitempty"`
	} `json:"resources"`
}

type generatedRef struct {
	PolicyName string   `json:"policyName"`
	RuleNames  []string `json:"ruleNames"`
}

// GeneratedExceptionTTLLabel is the label of a generated PolicyException
// that Kyverno's cleanup controller deletes it by.
const GeneratedExceptionTTLLabel = "cleanup.kyverno.io/ttl"

// newGeneratedException is Kyverno's exception of the failed rule of
// policy on a resource (printException): for an autogen rule, the Pods
// (and for a CronJob the Jobs) it makes, named after it, are excepted too.
func newGeneratedException(policy, rule, kind, namespace, name string, ttl time.Duration) *generatedException {
	e := &generatedException{Kind: "PolicyException", APIVersion: "kyverno.io/v2beta1"}
	e.Metadata.Name = strings.Join([]string{policy, rule, namespace, name}, "-")
	if ttl > 0 {
		e.Metadata.Labels = map[string]string{GeneratedExceptionTTLLabel: ttl.String()}
	}
	kinds, names, rules := []string{kind}, []string{name}, []string{rule}
	if strings.HasPrefix(rule, "autogen-") {
		if kind == "CronJob" {
			kinds = append(kinds, "Job")
			rules = append(rules, strings.ReplaceAll(rule, "autogen-cronjob-", "autogen-"))
			kinds = append(kinds, "Pod")
			rules = append(rules, strings.TrimPrefix(rule, "autogen-cronjob-"))
		} else {
			kinds = append(kinds, "Pod")
			rules = append(rules, strings.TrimPrefix(rule, "autogen-"))
		}
		names = append(names, name+"-*")
	}
	var f generatedFilter
	f.Resources.Kinds, f.Resources.Names, f.Resources.Namespaces = kinds, names, []string{namespace}
	e.Spec.Match.All = []generatedFilter{f}
	e.Spec.Exceptions = []generatedRef{{PolicyName: policy, RuleNames: rules}}
	return e
}

// exceptionsOut is kyverno apply --generate-exceptions: the mutated
// resources, the skipped policies, then a PolicyException per failure, in
// the order of the resources (Kyverno groups them by policy, the policies
// in no set order).
type exceptionsOut struct {
	applyOut
	json bool
	ttl  time.Duration
	now  time.Time
	body *spool.Spool
}

func (e *exceptionsOut) start(r *ApplyResult) error {
	e.applyOut.start(r)
	e.now = r.now
	e.body = newSpool(e.tempDir)
	return nil
}

func (e *exceptionsOut) resource(_ *Resource, resps []ApplyResponse, outs []PolicyOutput) error {
	if err := e.spoolMutated(outs); err != nil {
		return err
	}
	for _, resp := range resps {
		if resp.Policy == nil || resp.Policy.Compiled == nil || resp.Policy.Namespace != "" {
			continue // Kyverno prints the exceptions of cluster-wide policies only
		}
		for _, rr := range resp.Results {
			res := reportResultOf(resp, rr, e.now, e.auditWarn)
			if res.Result != "fail" {
				continue
			}
			var pss []generatedPodSecurity
			if controls, ok := res.Properties["controlsJSON"]; ok {
				// A failed podSecurity rule: the exception names its
				// failed controls, as Kyverno's.
				var err error
				if pss, err = podSecurityExclusions(controls); err != nil {
					return err
				}
			}
			for _, s := range res.Resources {
				ex := newGeneratedException(res.Policy, res.Rule, s.Kind, s.Namespace, s.Name, e.ttl)
				ex.Spec.PodSecurity = pss
				var b []byte
				var err error
				if e.json {
					b, err = json.Marshal(ex)
				} else {
					b, err = yaml.Marshal(ex)
				}
				if err != nil {
					return fmt.Errorf("write exception %s: %w", ex.Metadata.Name, err)
				}
				bw := &errWriter{w: e.body}
				bw.printf("---\n%s\n", b)
				if bw.err != nil {
					return bw.err
				}
			}
		}
	}
	return nil
}

func (e *exceptionsOut) finish(r *ApplyResult, _ int) error {
	bw := &errWriter{w: e.w}
	if e.printMutated {
		bw.err = e.mutated.CopyTo(e.w)
	}
	writeSkipped(bw, r.Skipped)
	if bw.err == nil {
		bw.err = e.body.CopyTo(e.w)
	}
	return bw.err
}

func (e *exceptionsOut) Close() error {
	return errors.Join(closeSpool(e.mutated), closeSpool(e.body))
}
