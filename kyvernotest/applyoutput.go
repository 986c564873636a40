package kyvernotest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/internal/policyreport"
)

const divider = "----------------------------------------------------------------------"

// WriteApplyText writes an Apply result as kyverno apply does: the rule and
// resource counts, the skipped policies, each policy that failed on a
// resource with its failed rules, and the final counts line
// "pass: N, fail: N, warn: N, error: N, skip: N". Unlike kyverno apply,
// which prints the message of errored mutate and generate rules only, it
// prints every errored rule with its message ("policy P -> resource R
// errored:", then a numbered line per rule), so that the cause of an
// error in the counts is in the default output.
// "pass: N, fail: N, warn: N, error: N, skip: N".
func WriteApplyText(w io.Writer, r *ApplyResult) error {
	return replay(r, &textOut{applyOut: applyOut{w: w, printMutated: r.PrintMutated}})
}

// writeSkipped writes the policies Apply did not evaluate.
func writeSkipped(bw *errWriter, skipped []Skipped) {
	if len(skipped) == 0 {
		return
	}
	bw.printf("%s\nPolicies Skipped:\n", divider)
	for i, s := range skipped {
		bw.printf("%d. %s: %s\n", i+1, s.Name, oneLine(s.Reason))
	}
	bw.printf("%s\n", divider)
}

// writeFailures writes the mutate and generate errors and skips, and the
// failed rules, and the other errored rules, of the responses of one
// resource.
func writeFailures(bw *errWriter, resps []ApplyResponse, auditWarn bool) {
	b := bw.scratch[:0]
	line := func(i int, rule, msg string) {
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, " - "...)
		b = append(b, rule...)
		b = append(b, ' ')
		b = append(b, msg...)
		b = append(b, '\n')
	}
	head := func(pre, name, path, post string) {
		b = append(b, pre...)
		b = append(b, name...)
		b = append(b, " -> resource "...)
		b = append(b, path...)
		b = append(b, post...)
	}
	for _, resp := range resps {
		res := resp.Resource
		path := res.Namespace + "/" + res.Kind + "/" + res.Name
		if path == "//" {
			path = "JSON payload" // as Kyverno names a resource without kind and name
		}
		var failed, errored []eval.RuleResult
		for _, rr := range resp.Results {
			if rr.Status == eval.StatusFail {
				failed = append(failed, rr)
			}
			if rr.Status == eval.StatusError && rr.Type != eval.RuleMutation && rr.Type != eval.RuleGeneration {
				errored = append(errored, rr)
			}
			switch {
			case rr.Type == eval.RuleMutation && rr.Status == eval.StatusSkip:
				head("\nskipped mutate policy ", resp.Policy.Name, path, "\n")
			case rr.Type == eval.RuleMutation && rr.Status == eval.StatusError:
				// Kyverno's fmt.Fprintln puts a space between its operands,
				// hence " \nerror:  " (resource path, then "\nerror: ").
				head("\nerror while applying mutate policy ", resp.Policy.Name, path, " \nerror:  ")
				b = append(append(b, rr.Message...), '\n')
			case rr.Type == eval.RuleGeneration && rr.Status == eval.StatusError:
				head("\nerror while applying generate policy ", resp.Policy.Name, path, " \nerror: ")
				b = append(append(b, rr.Message...), '\n')
			}
		}
		if len(errored) > 0 {
			head("policy ", resp.Policy.Name, path, " errored:\n")
			for i, rr := range errored {
				line(i+1, rr.Rule, rr.Message)
			}
		}
		if len(failed) == 0 {
			continue
		}
		// Kyverno's CLI heads the failures of every ValidatingPolicy as
		// audit warnings under --audit-warn (they have no failure action),
		// though it counts them as failures.
		if auditWarning(auditWarn, failed[0]) || (auditWarn && resp.Policy != nil && resp.Policy.ruleless) {
			head("policy ", resp.Policy.Name, path, " failed as audit warning:\n")
		} else {
			head("policy ", resp.Policy.Name, path, " failed:\n")
		}
		for i, rr := range failed {
			msg := rr.Message
			if msg == "" {
				msg = "validation failed"
			}
			line(i+1, rr.Rule, msg)
		}
	}
	if len(b) > 0 {
		bw.write(b)
	}
	bw.scratch = b
}

// writeCounts writes the last line of kyverno apply, with its trailing
// space ("...skip: 0 ").
func writeCounts(bw *errWriter, c Counts) {
	bw.printf("\n%s \n", c)
}

// Reports builds the policy reports of an Apply result, as kyverno apply
// 1.19 --policy-report does (openreports.io/v1alpha1): the results of all
// ClusterPolicies merged into one ClusterReport named "merged", and the
// reports of namespaced Policies (namespacedReports).
func (r *ApplyResult) Reports() []policyreport.PolicyReport {
	cluster := policyreport.PolicyReport{
		APIVersion: policyreport.OpenReportsAPIVersion,
		Kind:       policyreport.KindClusterReport,
		Metadata:   policyreport.Metadata{Name: "merged"},
	}
	var namespaced []policyreport.PolicyReport
	for _, resp := range r.Responses {
		if namespacedPolicy(resp.Policy) {
			namespaced = append(namespaced, namespacedReports(resp, r.now, r.AuditWarn)...)
			continue
		}
		for _, rr := range resp.Results {
			res := reportResultOf(resp, rr, r.now, r.AuditWarn)
			cluster.Results = append(cluster.Results, res)
			cluster.Summary.Add(res.Result)
		}
	}
	var out []policyreport.PolicyReport
	if len(cluster.Results) > 0 {
		out = append(out, cluster)
	}
	return append(out, namespaced...)
}

// namespacedPolicy reports whether the results of p go to reports of
// their own: p is a namespaced Kyverno Policy.
func namespacedPolicy(p *Policy) bool {
	return p.Namespace != "" && p.Kind == "Policy"
}

// namespacedReports are the reports of the results of a namespaced Policy
// on one resource, as Kyverno 1.19's CLI makes them: its
// ComputePolicyReports groups results by the policy of each engine
// response, and each engine call (mutate, verifyImages, validate,
// generate) makes a response with a policy of its own, so there is one
// report (named after the policy, in its namespace, of kind PolicyReport
// as Kyverno's CLI names it) per resource and type of rule.
func namespacedReports(resp ApplyResponse, now time.Time, auditWarn bool) []policyreport.PolicyReport {
	var reports []policyreport.PolicyReport
	var types []eval.RuleType
	for _, rr := range resp.Results {
		i := slices.Index(types, rr.Type)
		if i < 0 {
			i = len(types)
			types = append(types, rr.Type)
			reports = append(reports, policyreport.PolicyReport{
				APIVersion: policyreport.OpenReportsAPIVersion,
				Kind:       policyreport.KindCLINamespaced,
				Metadata:   policyreport.Metadata{Name: resp.Policy.Name, Namespace: resp.Policy.Namespace},
			})
		}
		res := reportResultOf(resp, rr, now, auditWarn)
		reports[i].Results = append(reports[i].Results, res)
		reports[i].Summary.Add(res.Result)
	}
	return reports
}

// reportResultOf is the report result of one rule result of Apply.
func reportResultOf(resp ApplyResponse, rr eval.RuleResult, now time.Time, auditWarn bool) policyreport.Result {
	p := resp.Policy
	name := p.Name
	if p.Kind == "Policy" && p.Namespace != "" {
		name = p.Namespace + "/" + p.Name
	}
	meta, _ := resp.Resource.Object["metadata"].(map[string]any)
	uid, _ := meta["uid"].(string)
	rv, _ := meta["resourceVersion"].(string)
	res := policyreport.Result{
		Source:   "kyverno",
		Policy:   name,
		Rule:     rr.Rule,
		Result:   string(rr.Status),
		Scored:   rr.Scored,
		Message:  rr.Message,
		Category: rr.Category,
		Severity: severity(rr.Severity),
		Resources: []policyreport.ObjectReference{{
			APIVersion: resp.Resource.APIVersion, Kind: resp.Resource.Kind,
			Namespace: resp.Resource.Namespace, Name: resp.Resource.Name,
			UID: uid, ResourceVersion: rv,
		}},
		Timestamp: policyreport.Timestamp{Seconds: now.Unix()},
	}
	props := map[string]string{}
	for k, v := range rr.Properties {
		props[k] = v
	}
	override := map[string]string{"pass": "passMessage", "fail": "failMessage", "warn": "warnMessage", "error": "errorMessage", "skip": "skipMessage"}
	if msg := props[override[res.Result]]; msg != "" {
		res.Message = msg
	}
	if msg := props["message"]; msg != "" {
		res.Message = msg
	}
	background, admission := p.Compiled.Background, p.Compiled.Admission
	// The source and process of each kind, as Kyverno's
	// ToPolicyReportResult (pkg/utils/report) sets them.
	switch c := p.Compiled; {
	case c.VAP != nil:
		res.Source = "ValidatingAdmissionPolicy"
		background = true
	case c.MutatingAdmission != nil:
		res.Source = "MutatingAdmissionPolicy"
		background = true
	case c.Validating != nil:
		res.Source = "KyvernoValidatingPolicy"
	case c.Mutating != nil:
		res.Source = "KyvernoMutatingPolicy"
	case c.ImageValidating != nil:
		res.Source = "KyvernoImageValidatingPolicy"
	case c.Generating != nil:
		res.Source = "KyvernoGeneratingPolicy"
		background, admission = false, true
	}
	switch {
	case background:
		props["process"] = "background scan"
	case admission:
		props["process"] = "admission review"
	default:
		props["process"] = ""
	}
	res.Properties = props
	if res.Result == "fail" && !res.Scored {
		res.Result = "warn"
	}
	if res.Result == "fail" && auditWarning(auditWarn, rr) {
		res.Result = "warn"
	}
	return res
}

// severity keeps the severities the report schema allows.
func severity(s string) string {
	switch v := strings.ToLower(s); v {
	case "critical", "high", "medium", "low", "info":
		return v
	}
	return ""
}

// WriteReports writes the policy reports as Kyverno 1.19's apply
// --policy-report prints them (its printReports): each a YAML document
// followed by an empty line (or a JSON object on a line), the cluster
// report first, and "---" on a line before each namespaced report in both
// formats.
func WriteReports(w io.Writer, reports []policyreport.PolicyReport, format string) error {
	bw := bufio.NewWriterSize(w, 64*1024)
	if err := writeReports(bw, reports, format); err != nil {
		return err
	}
	return bw.Flush()
}

// writeReports is WriteReports on a buffered writer.
func writeReports(bw *bufio.Writer, reports []policyreport.PolicyReport, format string) error {
	for _, rep := range reports {
		// As Kyverno's printReports: "---" before each namespaced report,
		// in both formats, and each report printed with Println.
		if rep.Kind != policyreport.KindClusterReport {
			bw.WriteString("---\n")
		}
		if format == "json" {
			data, err := json.Marshal(rep.Open())
			if err != nil {
				return fmt.Errorf("write report %s: %w", rep.Metadata.Name, err)
			}
			bw.Write(data)
			bw.WriteByte('\n')
			continue
		}
		writeReportYAML(bw, &rep)
		bw.WriteByte('\n')
	}
	return nil
}

// writeReportYAML writes a report as YAML, keys in alphabetical order as
// Kyverno prints them. It is a direct emitter: a generic YAML encoder takes
// seconds on reports of 100,000 results.
func writeReportYAML(w *bufio.Writer, r *policyreport.PolicyReport) {
	writeReportHeadYAML(w, r.APIVersion, r.Kind, r.Metadata, len(r.Results) > 0)
	for i := range r.Results {
		writeReportResultYAML(w, &r.Results[i])
	}
	writeReportTailYAML(w, r.Summary)
}

// writeReportHeadYAML writes what comes before the results of a report.
func writeReportHeadYAML(w *bufio.Writer, apiVersion, kind string, meta policyreport.Metadata, results bool) {
	writeYAMLKV(w, "", 0, "apiVersion", apiVersion)
	writeYAMLKV(w, "", 0, "kind", kind)
	w.WriteString("metadata:\n")
	writeYAMLKV(w, "  ", 2, "name", meta.Name)
	if meta.Namespace != "" {
		writeYAMLKV(w, "  ", 2, "namespace", meta.Namespace)
	}
	if results {
		w.WriteString("results:\n")
	}
}

// writeReportResultYAML writes one result of a report's results list.
func writeReportResultYAML(w *bufio.Writer, res *policyreport.Result) {
	// prefix starts a key of the result: "- " on its first, "  " after.
	prefix := "- "
	field := func(key, value string) {
		writeYAMLKV(w, prefix, 2, key, value)
		prefix = "  "
	}
	if res.Category != "" {
		field("category", res.Category)
	}
	if res.Message != "" {
		field("message", res.Message)
	}
	field("policy", res.Policy)
	if len(res.Properties) > 0 {
		w.WriteString(prefix)
		w.WriteString("properties:\n")
		prefix = "  "
		keys := slices.Collect(maps.Keys(res.Properties))
		slices.SortFunc(keys, yamlKeyCompare)
		for _, k := range keys {
			writeYAMLKV(w, "    ", 4, k, res.Properties[k])
		}
	}
	if len(res.Resources) > 0 {
		w.WriteString(prefix)
		w.WriteString("resources:\n")
		prefix = "  "
		for _, o := range res.Resources {
			if o == (policyreport.ObjectReference{}) {
				w.WriteString("  - {}\n") // go-yaml's empty mapping
				continue
			}
			dash := "  - "
			ref := func(key, value string) {
				if value == "" {
					return
				}
				writeYAMLKV(w, dash, 4, key, value)
				dash = "    "
			}
			ref("apiVersion", o.APIVersion)
			ref("kind", o.Kind)
			ref("name", o.Name)
			ref("namespace", o.Namespace)
			ref("resourceVersion", o.ResourceVersion)
			ref("uid", o.UID)
		}
	}
	field("result", res.Result)
	if res.Rule != "" {
		field("rule", res.Rule)
	}
	if res.Scored { // omitempty in openreports.io's ReportResult
		w.WriteString("  scored: true\n")
	}
	if res.Severity != "" {
		field("severity", res.Severity)
	}
	field("source", res.Source)
	w.WriteString("  timestamp:\n    nanos: " + strconv.Itoa(int(res.Timestamp.Nanos)) + "\n    seconds: " + strconv.FormatInt(res.Timestamp.Seconds, 10) + "\n")
}

// writeReportTailYAML writes what follows the results of a report: its
// (empty) source and its summary.
func writeReportTailYAML(w *bufio.Writer, s policyreport.Summary) {
	w.WriteString("source: \"\"\nsummary:\n")
	for _, c := range []struct {
		k string
		v int
	}{{"error", s.Error}, {"fail", s.Fail}, {"pass", s.Pass}, {"skip", s.Skip}, {"warn", s.Warn}} {
		w.WriteString("  " + c.k + ": " + strconv.Itoa(c.v) + "\n")
	}
}

// WriteApplyTable writes every result of an Apply in a table (kyverno
// apply --table): "Applying N policy rule(s)...", the mutated resources
// when r.PrintMutated (as WriteMutated), the skipped policies, then a table
// of ID, POLICY, RULE, RESOURCE, RESULT, REASON (empty, as Kyverno's), and
// MESSAGE when detailed. The title of the ID column is "ID (N) " for more
// than 10 rows, as Kyverno's.
func WriteApplyTable(w io.Writer, r *ApplyResult, detailed bool) error {
	return replay(r, &tableOut{applyOut: applyOut{w: w, printMutated: r.PrintMutated}, detailed: detailed})
}

// tableRows are the rows of the results of one resource's responses;
// first is the ID of the first row.
func tableRows(resps []ApplyResponse, auditWarn, detailed bool, first int, row func([]string) error) error {
	id := first
	for _, resp := range resps {
		p := resp.Policy
		policy := p.Name
		if p.Kind == "Policy" && p.Namespace != "" {
			policy = p.Namespace + "/" + p.Name
		}
		res := resp.Resource
		resource := res.Kind + "/" + res.Name
		if res.Namespace != "" {
			resource = res.Namespace + "/" + resource
		}
		for _, rr := range resp.Results {
			status := string(rr.Status)
			if rr.Status == eval.StatusFail && auditWarning(auditWarn, rr) {
				status = string(eval.StatusWarn)
			}
			cells := []string{strconv.Itoa(id), policy, rr.Rule, resource, title(status), ""}
			if detailed {
				cells = append(cells, tableCell(rr.Message))
			}
			if err := row(cells); err != nil {
				return err
			}
			id++
		}
	}
	return nil
}

// title upper-cases the first letter of an ASCII word.
func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
