package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseOnly(t *testing.T) {
	tests := []struct {
		only           string
		systems, parts map[string]bool
		err            bool
	}{
		{only: "both", systems: map[string]bool{}, parts: map[string]bool{"admission": true}},
		{only: "kyverno", systems: map[string]bool{"kyverno": true}, parts: map[string]bool{"admission": true}},
		{only: "scan", systems: map[string]bool{}, parts: map[string]bool{"scan": true}},
		{only: "scan,verdict", systems: map[string]bool{"verdict": true}, parts: map[string]bool{"scan": true}},
		{only: "all", systems: map[string]bool{}, parts: map[string]bool{"admission": true, "scan": true}},
		{only: "scans", err: true},
	}
	for _, tt := range tests {
		o := options{only: tt.only}
		err := o.parseOnly()
		if (err != nil) != tt.err {
			t.Fatalf("parseOnly(%q) = %v, want error %t", tt.only, err, tt.err)
		}
		if err != nil {
			continue
		}
		if diff := cmp.Diff(tt.systems, o.systems); diff != "" {
			t.Errorf("parseOnly(%q) systems (-want +got):\n%s", tt.only, diff)
		}
		if diff := cmp.Diff(tt.parts, o.parts); diff != "" {
			t.Errorf("parseOnly(%q) parts (-want +got):\n%s", tt.only, diff)
		}
	}
}

// Both layouts of PolicyReports: Kyverno's reports controller writes one
// per resource (scope, results without resources); a writer in Kyverno's
// admission layout lists each result's resources.
func TestCountEntries(t *testing.T) {
	perResource := `{"scope":{"kind":"Pod","namespace":"a","name":"p1"},"results":[
		{"policy":"x","rule":"r","result":"pass"},{"policy":"y","rule":"r","result":"fail"}]}`
	perPolicy := `{"results":[
		{"policy":"x","rule":"r","result":"pass","resources":[{"kind":"Pod","namespace":"a","name":"p2"}]},
		{"policy":"x","rule":"r","result":"skip","resources":[{"kind":"Pod","namespace":"b","name":"p1"},{"kind":"Pod","namespace":"b","name":"p2"}]}]}`
	tests := []struct {
		name           string
		kvs            []kv
		want           map[string]map[string]int
		total, covered int
	}{
		{"per resource", []kv{{"/registry/wgpolicyk8s.io/policyreports/a/u1", []byte(perResource)}},
			map[string]map[string]int{"x": {"pass": 1}, "y": {"fail": 1}}, 2, 1},
		{"per policy", []kv{{"/registry/wgpolicyk8s.io/policyreports/a/cpol-x", []byte(perPolicy)}},
			map[string]map[string]int{"x": {"pass": 1, "skip": 2}}, 3, 3},
		{"cluster reports not counted", []kv{{"/registry/wgpolicyk8s.io/clusterpolicyreports/u1", []byte(perResource)}},
			map[string]map[string]int{}, 0, 0},
	}
	for _, tt := range tests {
		got, total, covered := countEntries(tt.kvs)
		if diff := cmp.Diff(tt.want, got); diff != "" || total != tt.total || covered != tt.covered {
			t.Errorf("countEntries(%s) = %d entries, %d Pods, want %d, %d; (-want +got):\n%s", tt.name, total, covered, tt.total, tt.covered, diff)
		}
	}
}

func TestParseLabels(t *testing.T) {
	got := parseLabels(`code="201",component="apiserver",group="wgpolicyk8s.io",resource="policyreports",subresource="",verb="APPLY"`)
	want := map[string]string{"code": "201", "component": "apiserver", "group": "wgpolicyk8s.io", "resource": "policyreports", "subresource": "", "verb": "APPLY"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseLabels (-want +got):\n%s", diff)
	}
}
