package policyreport

import "fmt"

// API version and kinds of reports.
const (
	APIVersion              = "wgpolicyk8s.io/v1alpha2"
	KindPolicyReport        = "PolicyReport"
	KindClusterPolicyReport = "ClusterPolicyReport"
)

// The openreports.io/v1alpha1 kinds, which Kyverno 1.19 writes with
// --openreportsEnabled (and its CLI always prints). Their results have the
// fields and JSON names of the wgpolicyk8s.io ones (openreports.io's
// Go type calls resources "Subjects" and message "Description", with the
// same JSON names), so a report is the same object under another
// apiVersion and kind.
const (
	OpenReportsAPIVersion = "openreports.io/v1alpha1"
	KindReport            = "Report"
	KindClusterReport     = "ClusterReport"
)

// KindCLINamespaced is the kind of the report of a namespaced Policy that
// Kyverno 1.19's CLI prints under OpenReportsAPIVersion: PolicyReport (its
// report.ComputePolicyReports), not Report.
const KindCLINamespaced = KindPolicyReport

// OpenReport is a report as openreports.io's Go types (Report,
// ClusterReport) encode it, which is what Kyverno 1.19's CLI prints:
// their JSON field order, no creationTimestamp (metav1.ObjectMeta's
// omitzero leaves out a zero one), an empty source, and scored left out
// when false.
type OpenReport struct {
	Kind       string       `json:"kind"`
	APIVersion string       `json:"apiVersion"`
	Metadata   OpenMetadata `json:"metadata"`
	Source     string       `json:"source"`
	Summary    Summary      `json:"summary"`
	Results    []Result     `json:"results,omitempty"`
}

// OpenMetadata is the metadata of an OpenReport (metav1.ObjectMeta's
// fields and order).
type OpenMetadata struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// Open is the OpenReport form of r: the same content, r's apiVersion and
// kind.
func (r *PolicyReport) Open() OpenReport {
	out := OpenReport{
		Kind: r.Kind, APIVersion: r.APIVersion,
		Metadata: OpenMetadata{Name: r.Metadata.Name, Namespace: r.Metadata.Namespace},
		Summary:  r.Summary,
	}
	out.Results = r.Results
	return out
}

// PolicyReport is a PolicyReport or ClusterPolicyReport.
type PolicyReport struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Results    []Result `json:"results,omitempty"`
	Summary    Summary  `json:"summary"`
}

// Metadata is the metadata of a report.
type Metadata struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	CreationTimestamp string            `json:"creationTimestamp,omitempty"`
}

// Result is one result of a report.
type Result struct {
	Source     string            `json:"source"`
	Policy     string            `json:"policy"`
	Rule       string            `json:"rule,omitempty"`
	Category   string            `json:"category,omitempty"`
	Severity   string            `json:"severity,omitempty"`
	Timestamp  Timestamp         `json:"timestamp"`
	Result     string            `json:"result,omitempty"`
	Scored     bool              `json:"scored,omitempty"`
	Resources  []ObjectReference `json:"resources,omitempty"`
	Message    string            `json:"message,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
}

// ObjectReference is the corev1.ObjectReference of a result's resource.
type ObjectReference struct {
	Kind            string `json:"kind,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name,omitempty"`
	UID             string `json:"uid,omitempty"`
	APIVersion      string `json:"apiVersion,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// Timestamp is a protobuf timestamp, as reports write it.
type Timestamp struct {
	Seconds int64 `json:"seconds"`
	Nanos   int32 `json:"nanos"`
}

// Summary counts rule results.
type Summary struct {
	Pass  int `json:"pass"`
	Fail  int `json:"fail"`
	Warn  int `json:"warn"`
	Error int `json:"error"`
	Skip  int `json:"skip"`
}

// Add counts one result: "pass", "fail", "warn", "error" or "skip"
// (anything else is not counted).
func (s *Summary) Add(result string) {
	switch result {
	case "pass":
		s.Pass++
	case "fail":
		s.Fail++
	case "warn":
		s.Warn++
	case "error":
		s.Error++
	case "skip":
		s.Skip++
	}
}

// String is the counts line of kyverno apply: "pass: N, fail: N, warn: N,
// error: N, skip: N".
func (s Summary) String() string {
	return fmt.Sprintf("pass: %d, fail: %d, warn: %d, error: %d, skip: %d", s.Pass, s.Fail, s.Warn, s.Error, s.Skip)
}
