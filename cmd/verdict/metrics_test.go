package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMetricsRegistryInfo checks kyverno_info: one series of value 1 with
// the version and the OpenTelemetry scope labels of Kyverno's.
func TestMetricsRegistryInfo(t *testing.T) {
	mfs, err := newMetricsRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]string
	for _, mf := range mfs {
		if mf.GetName() != "kyverno_info" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			if v := m.GetGauge().GetValue(); v != 1 {
				t.Errorf("kyverno_info = %v, want 1", v)
			}
			got = append(got, l)
		}
	}
	want := []map[string]string{{"version": versionString(), "otel_scope_name": "kyverno", "otel_scope_version": "", "otel_scope_schema_url": ""}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kyverno_info series (-want +got):\n%s", diff)
	}
}
