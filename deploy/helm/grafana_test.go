package helm

import (
	"bytes"
	"os"
	"testing"
)

const (
	// chartDashboard is the chart's copy of Kyverno's Grafana dashboard;
	// upstreamDashboard the published file, in the shared folder next to
	// the repository.
	chartDashboard    = "verdict/dashboards/kyverno-dashboard.json"
	upstreamDashboard = "../../../shared/kyverno-docs/grafana/kyverno-dashboard.json"
)

// TestDashboardIsUpstream checks that the chart ships Kyverno's dashboard
// unchanged.
func TestDashboardIsUpstream(t *testing.T) {
	want, err := os.ReadFile(upstreamDashboard)
	if err != nil {
		t.Skipf("Kyverno's dashboard not found (%v): the chart's copy is not compared", err)
	}
	got, err := os.ReadFile(chartDashboard)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s: copy it again (cp %s %s)", chartDashboard, upstreamDashboard, upstreamDashboard, "deploy/helm/"+chartDashboard)
	}
}

// TestGrafanaDashboard renders the chart with and without grafana.enabled:
// off by default; on, one ConfigMap with the sidecar's label and the
// dashboard, in the release namespace or grafana.namespace.
func TestGrafanaDashboard(t *testing.T) {
	dashboard, err := os.ReadFile(chartDashboard)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		set           []string
		wantNamespace string // "": no ConfigMap
	}{
		{name: "default", wantNamespace: ""},
		{name: "enabled", set: []string{"grafana.enabled=true"}, wantNamespace: "verdict"},
		{name: "other namespace", set: []string{"grafana.enabled=true", "grafana.namespace=monitoring", "grafana.annotations.grafana_folder=Kyverno"}, wantNamespace: "monitoring"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := Render(Options{Set: tt.set})
			if err != nil {
				t.Fatalf("Render(%v): %v", tt.set, err)
			}
			found := 0
			for _, o := range objs {
				if o.GetKind() != "ConfigMap" || o.GetLabels()["grafana_dashboard"] == "" {
					continue
				}
				found++
				if o.GetName() != "verdict-grafana" || o.GetNamespace() != tt.wantNamespace {
					t.Errorf("Render(%v): ConfigMap %s/%s, want %s/verdict-grafana", tt.set, o.GetNamespace(), o.GetName(), tt.wantNamespace)
				}
				if got := o.GetLabels()["grafana_dashboard"]; got != "1" {
					t.Errorf("Render(%v): label grafana_dashboard = %q, want \"1\"", tt.set, got)
				}
				data, _ := o.Object["data"].(map[string]any)
				if got, _ := data["kyverno-dashboard.json"].(string); got != string(dashboard) {
					t.Errorf("Render(%v): data[kyverno-dashboard.json] is not %s (%d bytes, want %d)", tt.set, chartDashboard, len(got), len(dashboard))
				}
				if tt.name == "other namespace" && o.GetAnnotations()["grafana_folder"] != "Kyverno" {
					t.Errorf("Render(%v): annotations %v, want grafana_folder: Kyverno", tt.set, o.GetAnnotations())
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tt.wantNamespace != ""]; found != want {
				t.Errorf("Render(%v): %d dashboard ConfigMaps, want %d", tt.set, found, want)
			}
		})
	}
}
