package reportwriter

import (
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/verdict-policy/verdict/internal/policyreport"
)

// Report API version and kinds.
const (
	APIVersion              = policyreport.APIVersion
	KindPolicyReport        = policyreport.KindPolicyReport
	KindClusterPolicyReport = policyreport.KindClusterPolicyReport
)

// Labels of final reports.
const (
	// LabelManagedBy is set to ManagedBy on every final report.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "verdict"
	// Kyverno's policy labels (policyKinds: "cpol.kyverno.io/<name>",
	// "pol.kyverno.io/<name>", "vpol.kyverno.io/<name>") are valued with
	// the first characters of the policy's content hash.
)

// ReportKey names a final report: a PolicyReport in Namespace, or a
// ClusterPolicyReport when Namespace is empty.
type ReportKey struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// Kind is PolicyReport or ClusterPolicyReport.
func (k ReportKey) Kind() string {
	if k.Namespace == "" {
		return KindClusterPolicyReport
	}
	return KindPolicyReport
}

// reportKeyOf names the final report that holds the results of policy p
// for owner: "cpol-<name>" for a ClusterPolicy, "pol-<name>" for a Policy,
// "vpol-<name>" for a ValidatingPolicy, "nvpol-<name>" for a
// NamespacedValidatingPolicy, in the owner's namespace.
func reportKeyOf(p PolicyVersion, owner Resource) ReportKey {
	return ReportKey{Namespace: owner.Namespace, Name: policyKinds[p.Kind].reportPrefix + p.Name}
}

// The final report model, internal/policyreport's (shared with verdict
// apply --policy-report).
type (
	PolicyReport    = policyreport.PolicyReport
	ReportMetadata  = policyreport.Metadata
	ReportResult    = policyreport.Result
	ObjectReference = policyreport.ObjectReference
	Timestamp       = policyreport.Timestamp
)

// row is one result of a final report, before rendering. It points into
// the intermediary report the result comes from, which is never modified
// once the model holds it (changes replace it with a modified clone, and
// refresh then points the rows at the clone), so that a row costs three
// pointers instead of a copy of the entry, the policy and the resource.
type row struct {
	entry    *Entry
	policy   *PolicyVersion
	resource *Resource
}

// finalReport is a final report in the making: its rows per resource.
type finalReport struct {
	key              ReportKey
	rows             map[string][]row // by resource key
	created, updated time.Time
	// stored: the store holds a rendering of the report, whose JSON has
	// the SHA-256 sum (the JSON itself is the store's: kept here for
	// every report, it would be the largest part of the writer's memory).
	stored bool
	sum    [sha256.Size]byte
}

// messageOverrides are the reportProperties that replace a result's
// message, by result (Kyverno's ToPolicyReportResult).
var messageOverrides = map[string]string{"pass": "passMessage", "fail": "failMessage", "warn": "warnMessage", "error": "errorMessage", "skip": "skipMessage"}

// result renders a row as Kyverno's ToPolicyReportResult does.
func (r row) result() ReportResult {
	e := r.entry
	out := ReportResult{
		Source:    policyKinds[r.policy.Kind].source,
		Policy:    e.Policy,
		Rule:      e.Rule,
		Category:  e.Category,
		Severity:  e.Severity,
		Timestamp: Timestamp{Seconds: r.policy.Time.Unix()},
		Result:    e.Result,
		Scored:    e.Scored,
		Message:   e.Message,
		Resources: []ObjectReference{{
			APIVersion: r.resource.APIVersion,
			Kind:       r.resource.Kind,
			Namespace:  r.resource.Namespace,
			Name:       r.resource.Name,
			UID:        r.resource.UID,
		}},
	}
	props := maps.Clone(e.Properties)
	if props == nil {
		props = map[string]string{}
	}
	if msg := props[messageOverrides[out.Result]]; msg != "" {
		out.Message = msg
	}
	if msg := props["message"]; msg != "" {
		out.Message = msg
	}
	// Kyverno names the process from the policy's settings, not from the
	// source of the result.
	if r.policy.Background {
		props["process"] = "background scan"
	} else {
		props["process"] = "admission review"
	}
	out.Properties = props
	if out.Result == "fail" && !out.Scored {
		out.Result = "warn"
	}
	return out
}

// render builds the report object of fr; nil when it has no rows: one
// result per resource and rule, as Kyverno's, or, with grouped, the rows of
// one rule with the same outcome in one result (group).
func (fr *finalReport) render(grouped bool) *PolicyReport {
	var results []ReportResult
	var newest PolicyVersion
	for _, rows := range fr.rows {
		for _, r := range rows {
			results = append(results, r.result())
			if r.policy.Time.After(newest.Time) {
				newest = *r.policy
			}
		}
	}
	if len(results) == 0 {
		return nil
	}
	slices.SortFunc(results, func(a, b ReportResult) int {
		return cmp.Or(
			cmp.Compare(a.Policy, b.Policy),
			cmp.Compare(a.Rule, b.Rule),
			compareResources(&a.Resources[0], &b.Resources[0]),
		)
	})
	rep := &PolicyReport{
		APIVersion: APIVersion,
		Kind:       fr.key.Kind(),
		Metadata: ReportMetadata{
			Name:              fr.key.Name,
			Namespace:         fr.key.Namespace,
			Labels:            map[string]string{LabelManagedBy: ManagedBy},
			CreationTimestamp: fr.created.UTC().Format(time.RFC3339),
		},
	}
	prefix := policyKinds[newest.Kind].labelPrefix
	if len(newest.Name) <= 63 {
		v := newest.Hash
		if len(v) > 12 {
			v = v[:12]
		}
		rep.Metadata.Labels[prefix+newest.Name] = v
	}
	// The summary counts one result per resource and rule, as Kyverno's.
	for _, r := range results {
		rep.Summary.Add(r.Result)
	}
	if grouped {
		rep.Results = group(results)
	} else {
		rep.Results = results
	}
	return rep
}

func compareResources(a, b *ObjectReference) int {
	return cmp.Or(
		cmp.Compare(a.Namespace, b.Namespace),
		cmp.Compare(a.Name, b.Name),
		cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.UID, b.UID),
	)
}

// group merges the results (one resource each, sorted by policy, rule and
// resource) that differ only in their resource and timestamp into one
// result listing the resources in order, with the newest timestamp. A rule
// that passes for a hundred Pods is then one result with a hundred
// resources instead of a hundred results repeating the rest. Groups are in
// the order of their first resource.
func group(results []ReportResult) []ReportResult {
	out := make([]ReportResult, 0, len(results)/4+1)
	// by outcome, for the results of the current policy and rule
	index := map[string]int{}
	for i := range results {
		r := &results[i]
		if i > 0 && (r.Policy != results[i-1].Policy || r.Rule != results[i-1].Rule) {
			clear(index)
		}
		key := outcomeKey(r)
		if j, ok := index[key]; ok {
			g := &out[j]
			g.Resources = append(g.Resources, r.Resources...)
			if r.Timestamp.Seconds > g.Timestamp.Seconds {
				g.Timestamp = r.Timestamp
			}
			continue
		}
		index[key] = len(out)
		first := *r
		first.Resources = slices.Clip(first.Resources) // appends copy, never write into r's array
		out = append(out, first)
	}
	return out
}

// outcomeKey is what results of one policy and rule must share to be
// grouped: everything but the resource and the timestamp.
func outcomeKey(r *ReportResult) string {
	var b strings.Builder
	for _, s := range []string{r.Source, r.Category, r.Severity, r.Result, strconv.FormatBool(r.Scored), r.Message} {
		b.WriteString(strconv.Quote(s))
	}
	for _, k := range slices.Sorted(maps.Keys(r.Properties)) {
		b.WriteString(strconv.Quote(k))
		b.WriteString(strconv.Quote(r.Properties[k]))
	}
	return b.String()
}

// StoredReport is a final report as stored: the report object as JSON and
// what tables need.
type StoredReport struct {
	Key     ReportKey `json:"key"`
	Policy  string    `json:"policy"`
	Summary Summary   `json:"summary"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Report is the PolicyReport or ClusterPolicyReport, as JSON. Stores
	// keep it apart from the rest (not encoded again).
	Report []byte `json:"-"`
}

// store renders fr for the store at time now; nil when the report has no
// rows left. grouped is Options.GroupResults.
func (fr *finalReport) store(now time.Time, grouped bool) (*StoredReport, error) {
	if fr.created.IsZero() {
		fr.created = now
	}
	rep := fr.render(grouped)
	if rep == nil {
		return nil, nil
	}
	b, err := json.Marshal(rep)
	if err != nil {
		return nil, err
	}
	fr.updated = now
	return &StoredReport{
		Key:     fr.key,
		Policy:  rep.Results[0].Policy,
		Summary: rep.Summary,
		Created: fr.created,
		Updated: now,
		Report:  b,
	}, nil
}
