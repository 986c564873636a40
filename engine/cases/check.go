package cases

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Outcome is what a runner got for a case, in the corpus's terms. A
// runner fills what it can observe; Diff checks what the case expects of
// it.
type Outcome struct {
	// Error is the compile error (its first problem), when there was one.
	Error *Error
	// Results are the rule results, in order; NoResults says the runner
	// does not see them (an AdmissionReview carries none).
	Results   []Result
	NoResults bool
	// NoPaths says the runner does not see the failed field of a result
	// (Result.Path): its API carries none.
	NoPaths bool
	// Patched is the object after the mutate rules (nil: unchanged), and
	// Patch the JSON Patch to it (nil: none).
	Patched map[string]any
	Patch   []byte
	// Generated are the generate intents and Targets the patched mutate
	// targets, in order; NoIntents says the runner does not see them.
	Generated []Generated
	Targets   []map[string]any
	NoIntents bool
	// Admission is the answer of an admission webhook, when the runner
	// sees one.
	Admission *Admission
}

// Admission is the answer of an admission webhook to the case's request.
type Admission struct {
	Allowed bool
	// Message is the reason of a denial.
	Message string
}

// Diff compares got with what the case expects and describes every
// mismatch, one per paragraph; "" when everything holds. Results are
// compared without their message (or properties) when the case gives none;
// objects compare decoded, never as bytes.
func (c *Case) Diff(got Outcome) string {
	var out []string
	add := func(what, diff string) {
		if diff != "" {
			out = append(out, fmt.Sprintf("%s mismatch (-want +got):\n%s", what, diff))
		}
	}
	add("error", cmp.Diff(c.WantError, got.Error))
	if got.Error != nil || c.WantError != nil {
		return strings.Join(out, "\n")
	}
	if !got.NoResults {
		results := append([]Result(nil), got.Results...)
		for i := range results {
			if i < len(c.Want) && c.Want[i].Message == "" {
				results[i].Message = ""
			}
			if i < len(c.Want) && c.Want[i].Properties == nil {
				results[i].Properties = nil
			}
			if i < len(c.Want) && got.NoPaths {
				results[i].Path = c.Want[i].Path
			}
		}
		add("results", cmp.Diff(c.Want, results, cmpopts.EquateEmpty()))
	}
	if c.WantPatched != nil {
		add("patched object", cmp.Diff(normalize(c.WantPatched), normalize(got.Patched)))
	}
	if c.WantNoPatch && (got.Patched != nil || got.Patch != nil) {
		out = append(out, fmt.Sprintf("patch = %s, want none", got.Patch))
	}
	if c.WantPatch != nil {
		var patch any
		if err := json.Unmarshal(got.Patch, &patch); err != nil {
			out = append(out, fmt.Sprintf("patch %q: %v", got.Patch, err))
		} else {
			add("patch", cmp.Diff(normalize(c.WantPatch), patch))
		}
	}
	if a := got.Admission; a != nil {
		if denied := c.WantDenied(); a.Allowed == denied {
			out = append(out, fmt.Sprintf("allowed = %v, want %v (message %q)", a.Allowed, !denied, a.Message))
		}
		for _, w := range c.Want {
			if !a.Allowed && w.Enforce && w.Result == "fail" && w.Message != "" && !strings.Contains(a.Message, w.Message) {
				out = append(out, fmt.Sprintf("denial %q does not give the message of rule %s/%s: %q", a.Message, w.Policy, w.Rule, w.Message))
			}
		}
	}
	if got.NoIntents {
		return strings.Join(out, "\n")
	}
	if c.WantGenerated != nil && len(c.WantGenerated)+len(got.Generated) > 0 {
		add("generated", cmp.Diff(normalize(c.WantGenerated), normalize(got.Generated)))
	}
	if c.WantTargets != nil && len(c.WantTargets)+len(got.Targets) > 0 {
		add("targets", cmp.Diff(normalize(c.WantTargets), normalize(got.Targets)))
	}
	return strings.Join(out, "\n")
}

// normalize decodes the JSON encoding of v, so that values built by a
// runner and values read from YAML compare equal.
func normalize(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("not JSON: %v", err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return fmt.Sprintf("not JSON: %v", err)
	}
	return out
}

// WantDenied reports whether an admission webhook denies the case's
// request, as Kyverno's does (BlockRequest, pkg/utils/engine/response.go):
// a failed rule of an Enforce policy, or an error of an Enforce policy
// whose failurePolicy is Fail (the default).
func (c *Case) WantDenied() bool {
	ignore := map[string]bool{} // policies with failurePolicy Ignore
	if docs, err := c.Documents(); err == nil {
		for _, d := range docs {
			var p struct {
				Metadata struct{ Name string }
				Spec     struct{ FailurePolicy string }
			}
			if json.Unmarshal(d, &p) == nil && p.Spec.FailurePolicy == "Ignore" {
				ignore[p.Metadata.Name] = true
			}
		}
	}
	for _, w := range c.Want {
		if w.Enforce && (w.Result == "fail" || w.Result == "error" && !ignore[w.Policy]) {
			return true
		}
	}
	return false
}
