package kubestore

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/reportwriter"
)

// TestObjectsOpenReports checks the objects of a report in each API
// group: the apiVersion and kind change with Options.OpenReports, the
// names, labels and results do not.
func TestObjectsOpenReports(t *testing.T) {
	tests := []struct {
		openReports bool
		namespace   string
		wantVersion string
		wantKind    string
	}{
		{false, "shop", "wgpolicyk8s.io/v1alpha2", "PolicyReport"},
		{false, "", "wgpolicyk8s.io/v1alpha2", "ClusterPolicyReport"},
		{true, "shop", "openreports.io/v1alpha1", "Report"},
		{true, "", "openreports.io/v1alpha1", "ClusterReport"},
	}
	for _, tt := range tests {
		s := &Store{opts: Options{OpenReports: tt.openReports}.withDefaults()}
		sr := storedReport(tt.namespace, 3)
		objs, err := s.objects(sr.Key, sr.Report, contentHash(sr.Report))
		if err != nil {
			t.Fatalf("objects(OpenReports %v, namespace %q) error = %v", tt.openReports, tt.namespace, err)
		}
		if len(objs) != 1 {
			t.Fatalf("objects(OpenReports %v, namespace %q) = %d objects, want 1", tt.openReports, tt.namespace, len(objs))
		}
		o := objs[0]
		if o.GetAPIVersion() != tt.wantVersion || o.GetKind() != tt.wantKind {
			t.Errorf("objects(OpenReports %v, namespace %q) = %s %s, want %s %s", tt.openReports, tt.namespace, o.GetAPIVersion(), o.GetKind(), tt.wantVersion, tt.wantKind)
		}
		if o.GetName() != "cpol-p" || o.GetNamespace() != tt.namespace || o.GetLabels()[reportwriter.LabelManagedBy] != reportwriter.ManagedBy {
			t.Errorf("objects(OpenReports %v, namespace %q) = %s/%s labels %v, want %s/cpol-p managed by verdict", tt.openReports, tt.namespace, o.GetNamespace(), o.GetName(), o.GetLabels(), tt.namespace)
		}
		results, _ := o.Object["results"].([]any)
		want := map[string]any{"policy": "p", "rule": "r", "result": "fail", "resources": []any{map[string]any{"kind": "Pod", "name": "pod-000"}}}
		if len(results) != 3 {
			t.Fatalf("objects(OpenReports %v, namespace %q): %d results, want 3", tt.openReports, tt.namespace, len(results))
		}
		got := results[0].(map[string]any)
		delete(got, "message")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("objects(OpenReports %v, namespace %q) first result (-want +got):\n%s", tt.openReports, tt.namespace, diff)
		}
	}
}
