package reportwriter

import (
	"slices"
	"strings"
	"time"

	"github.com/verdict-policy/verdict/internal/policyreport"
)

// Source says where the results of an intermediary report come from.
type Source string

const (
	// SourceAdmission: admission requests (Kyverno's AdmissionReport and
	// ClusterAdmissionReport).
	SourceAdmission Source = "admission"
	// SourceBackground: background scans (Kyverno's BackgroundScanReport
	// and ClusterBackgroundScanReport).
	SourceBackground Source = "background"
)

// Resource identifies a Kubernetes object.
type Resource struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	UID        string `json:"uid,omitempty"`
}

// Key identifies the resource in the writer: its UID, or
// "apiVersion/kind/namespace/name" for an object without one (read from a
// file).
func (r Resource) Key() string {
	if r.UID != "" {
		return r.UID
	}
	return r.APIVersion + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name
}

// Policy kinds whose results reports hold.
const (
	KindClusterPolicy              = "ClusterPolicy"
	KindPolicy                     = "Policy"
	KindValidatingPolicy           = "ValidatingPolicy"
	KindNamespacedValidatingPolicy = "NamespacedValidatingPolicy"
	KindValidatingAdmissionPolicy  = "ValidatingAdmissionPolicy"
	KindMutatingPolicy             = "MutatingPolicy"
	KindNamespacedMutatingPolicy   = "NamespacedMutatingPolicy"

	KindImageValidatingPolicy           = "ImageValidatingPolicy"
	KindNamespacedImageValidatingPolicy = "NamespacedImageValidatingPolicy"
	KindGeneratingPolicy                = "GeneratingPolicy"
	KindNamespacedGeneratingPolicy      = "NamespacedGeneratingPolicy"
)

// policyKind is how reports name the results of a policy kind.
type policyKind struct {
	// namespaced kinds have a namespace, and their results name the
	// policy "namespace/name".
	namespaced bool
	// reportPrefix starts the name of the final report of a policy (the
	// per-policy layout): cpol-, pol-, vpol-, nvpol-, vap-, mpol-, nmpol-,
	// ivpol-, nivpol-.
	reportPrefix string
	// labelPrefix is Kyverno's label of the policy on reports
	// (reportutils.PolicyLabelPrefix).
	labelPrefix string
	// source is the source of the results (reportutils.ToPolicyReportResult).
	source string
	// unnamedRules: the results may have an empty rule (the validations
	// of a ValidatingPolicy, the mutations of a MutatingPolicy).
	unnamedRules bool
}

// policyKinds are the kinds of policies reports hold. Kyverno labels both
// ValidatingPolicy kinds vpol.kyverno.io, both MutatingPolicy kinds
// mpol.kyverno.io; the report names keep them apart.
// The one result of a ValidatingAdmissionPolicy on a resource has the
// policy's name as rule, as in Kyverno.
var policyKinds = map[string]policyKind{
	KindClusterPolicy:              {reportPrefix: "cpol-", labelPrefix: "cpol.kyverno.io/", source: "kyverno"},
	KindPolicy:                     {namespaced: true, reportPrefix: "pol-", labelPrefix: "pol.kyverno.io/", source: "kyverno"},
	KindValidatingPolicy:           {reportPrefix: "vpol-", labelPrefix: "vpol.kyverno.io/", source: "KyvernoValidatingPolicy", unnamedRules: true},
	KindNamespacedValidatingPolicy: {namespaced: true, reportPrefix: "nvpol-", labelPrefix: "vpol.kyverno.io/", source: "KyvernoValidatingPolicy", unnamedRules: true},
	KindValidatingAdmissionPolicy:  {reportPrefix: "vap-", labelPrefix: "validatingadmissionpolicy.apiserver.io/", source: "ValidatingAdmissionPolicy"},
	KindMutatingPolicy:             {reportPrefix: "mpol-", labelPrefix: "mpol.kyverno.io/", source: "KyvernoMutatingPolicy", unnamedRules: true},
	KindNamespacedMutatingPolicy:   {namespaced: true, reportPrefix: "nmpol-", labelPrefix: "mpol.kyverno.io/", source: "KyvernoMutatingPolicy", unnamedRules: true},
	// The result of an ImageValidatingPolicy has the policy's name as
	// rule (or evaluation, exception, mutateDigest), as in Kyverno.
	KindImageValidatingPolicy:           {reportPrefix: "ivpol-", labelPrefix: "ivpol.kyverno.io/", source: "KyvernoImageValidatingPolicy"},
	KindNamespacedImageValidatingPolicy: {namespaced: true, reportPrefix: "nivpol-", labelPrefix: "ivpol.kyverno.io/", source: "KyvernoImageValidatingPolicy"},
	// A GeneratingPolicy's result names the policy as rule (Kyverno 1.19's
	// gpol engine).
	KindGeneratingPolicy:           {reportPrefix: "gpol-", labelPrefix: "gpol.kyverno.io/", source: "KyvernoGeneratingPolicy"},
	KindNamespacedGeneratingPolicy: {namespaced: true, reportPrefix: "ngpol-", labelPrefix: "gpol.kyverno.io/", source: "KyvernoGeneratingPolicy"},
}

// PolicyVersion is a policy that gave results, the version that gave them
// and when.
type PolicyVersion struct {
	// ClusterPolicy, Policy, ValidatingPolicy,
	// NamespacedValidatingPolicy, ValidatingAdmissionPolicy,
	// MutatingPolicy or NamespacedMutatingPolicy.
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Hash      string `json:"hash,omitempty"`
	// Background is the policy's spec.background.
	Background bool `json:"background"`
	// Time of the evaluation that gave the policy's results.
	Time time.Time `json:"time"`
}

// Key is the policy's name as reports write it: "name" for a ClusterPolicy,
// ValidatingPolicy or ValidatingAdmissionPolicy, "namespace/name" for a
// Policy or NamespacedValidatingPolicy.
func (p PolicyVersion) Key() string { return policyKey(p.Kind, p.Namespace, p.Name) }

func policyKey(kind, namespace, name string) string {
	if policyKinds[kind].namespaced && namespace != "" {
		return namespace + "/" + name
	}
	return name
}

// Entry is the result of one rule of a policy on the owner of an
// intermediary report.
type Entry struct {
	// Policy is the policy key (see PolicyVersion.Key).
	Policy string `json:"policy"`
	Rule   string `json:"rule"`
	// Result is pass, fail, warn, error or skip.
	Result     string            `json:"result"`
	Message    string            `json:"message,omitempty"`
	Category   string            `json:"category,omitempty"`
	Severity   string            `json:"severity,omitempty"`
	Scored     bool              `json:"scored"`
	Properties map[string]string `json:"properties,omitempty"`
}

// Summary counts results (internal/policyreport).
type Summary = policyreport.Summary

// Intermediary is the intermediary report of one resource and source:
// the content of Kyverno's AdmissionReport / BackgroundScanReport (and
// their Cluster variants), kept in the writer's store instead of etcd.
type Intermediary struct {
	Source Source `json:"source"`
	// Owner is the resource the results are about.
	Owner           Resource `json:"owner"`
	ResourceVersion string   `json:"resourceVersion,omitempty"`
	Hash            string   `json:"hash,omitempty"`
	// Complete is the time of the latest evaluation that covered every
	// policy of its sender: results older than it are gone.
	Complete time.Time `json:"complete,omitzero"`
	// Policies that gave the results, sorted by key.
	Policies []PolicyVersion `json:"policies,omitempty"`
	// Results, sorted by policy and rule.
	Results []Entry `json:"results,omitempty"`
	Summary Summary `json:"summary"`
}

// Kind is the Kyverno kind of the intermediary report.
func (in *Intermediary) Kind() string {
	kind := "AdmissionReport"
	if in.Source == SourceBackground {
		kind = "BackgroundScanReport"
	}
	if in.Owner.Namespace == "" {
		kind = "Cluster" + kind
	}
	return kind
}

// policy returns the version of the policy with key k.
func (in *Intermediary) policy(k string) (PolicyVersion, bool) {
	if in == nil {
		return PolicyVersion{}, false
	}
	for _, p := range in.Policies {
		if p.Key() == k {
			return p, true
		}
	}
	return PolicyVersion{}, false
}

// latest is the time of the newest evaluation the intermediary holds.
func (in *Intermediary) latest() time.Time {
	t := in.Complete
	for _, p := range in.Policies {
		if p.Time.After(t) {
			t = p.Time
		}
	}
	return t
}

func (in *Intermediary) clone() *Intermediary {
	if in == nil {
		return nil
	}
	out := *in
	out.Policies = slices.Clone(in.Policies)
	out.Results = slices.Clone(in.Results)
	return &out
}

// drop removes the policies (and their results) for which keep returns
// false.
func (in *Intermediary) drop(keep func(PolicyVersion) bool) {
	gone := map[string]bool{}
	in.Policies = slices.DeleteFunc(in.Policies, func(p PolicyVersion) bool {
		if keep(p) {
			return false
		}
		gone[p.Key()] = true
		return true
	})
	if len(gone) > 0 {
		in.Results = slices.DeleteFunc(in.Results, func(e Entry) bool { return gone[e.Policy] })
	}
}

// normalize sorts policies and results and recomputes the summary.
func (in *Intermediary) normalize() {
	slices.SortFunc(in.Policies, func(a, b PolicyVersion) int { return strings.Compare(a.Key(), b.Key()) })
	slices.SortStableFunc(in.Results, func(a, b Entry) int {
		if c := strings.Compare(a.Policy, b.Policy); c != 0 {
			return c
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	in.Summary = Summary{}
	for _, e := range in.Results {
		in.Summary.Add(e.Result)
	}
}

// PolicyOfReport returns the kind of the policy whose results the final
// report name holds (by its prefix: cpol-, pol-, vpol-, nvpol-, vap-,
// mpol-, nmpol-), and
// Kyverno's label prefix of that kind on the report. ok is false for a
// name of another layout.
func PolicyOfReport(name string) (kind, labelPrefix string, ok bool) {
	for k, pk := range policyKinds {
		if strings.HasPrefix(name, pk.reportPrefix) {
			// No prefix is a prefix of another kind's: nvpol- and vpol-,
			// nmpol- and mpol-, cpol- and pol-, vap- are told apart.
			return k, pk.labelPrefix, true
		}
	}
	return "", "", false
}

// NamespacedKind reports whether policies of kind are namespaced (Policy,
// NamespacedValidatingPolicy): their results name them "namespace/name".
func NamespacedKind(kind string) bool { return policyKinds[kind].namespaced }
