package kubestore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/reportwriter"
)

func storedReport(ns string, n int) *reportwriter.StoredReport {
	var rs []string
	for i := range n {
		rs = append(rs, fmt.Sprintf(`{"policy":"p","rule":"r","result":"fail","resources":[{"kind":"Pod","name":"pod-%03d"}],"message":"%s"}`, i, strings.Repeat("x", 200)))
	}
	b := fmt.Sprintf(`{"apiVersion":"wgpolicyk8s.io/v1alpha2","kind":"PolicyReport","metadata":{"name":"cpol-p","namespace":%q,"labels":{"app.kubernetes.io/managed-by":"verdict"}},"results":[%s]}`, ns, strings.Join(rs, ","))
	return &reportwriter.StoredReport{Key: reportwriter.ReportKey{Namespace: ns, Name: "cpol-p"}, Report: []byte(b)}
}

// TestObjectsSplit checks the parts of a report: names, labels, counts and
// summaries, by size limit.
func TestObjectsSplit(t *testing.T) {
	tests := []struct {
		results, maxBytes int
		want              []string // name:results:fail
	}{
		{0, 64 << 10, []string{"cpol-p:0:0"}},
		{10, 64 << 10, []string{"cpol-p:10:10"}},
		// ~290 bytes a result, 2 KiB of overhead: 10 results per 5 KiB.
		{25, 5 << 10, []string{"cpol-p:10:10", "cpol-p-2:10:10", "cpol-p-3:5:5"}},
		// A result larger than the limit gets a part of its own.
		{2, 100, []string{"cpol-p:1:1", "cpol-p-2:1:1"}},
	}
	for _, tt := range tests {
		s := &Store{opts: Options{MaxReportBytes: tt.maxBytes}.withDefaults()}
		sr := storedReport("shop", tt.results)
		objs, err := s.objects(sr.Key, sr.Report, contentHash(sr.Report))
		if err != nil {
			t.Fatalf("objects(%d results, max %d) error = %v", tt.results, tt.maxBytes, err)
		}
		var got []string
		for i, o := range objs {
			rs, _, _ := unstructuredSlice(o.Object, "results")
			fail := o.Object["summary"].(map[string]any)["fail"]
			got = append(got, fmt.Sprintf("%s:%d:%d", o.GetName(), rs, fail))
			if o.GetLabels()[LabelReport] != "cpol-p" || o.GetLabels()[reportwriter.LabelManagedBy] != "verdict" || o.GetNamespace() != "shop" {
				t.Errorf("objects(%d results, max %d)[%d] = %s/%s labels %v, want shop/... labelled %s=cpol-p and managed by verdict",
					tt.results, tt.maxBytes, i, o.GetNamespace(), o.GetName(), o.GetLabels(), LabelReport)
			}
			if got, want := o.GetAnnotations()[AnnotationPart], fmt.Sprintf("%d/%d", i+1, len(objs)); got != want {
				t.Errorf("objects(%d results, max %d)[%d] part = %q, want %q", tt.results, tt.maxBytes, i, got, want)
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("objects(%d results, max %d) (-want +got):\n%s", tt.results, tt.maxBytes, diff)
		}
		// The same content splits the same way.
		again, _ := s.objects(sr.Key, sr.Report, contentHash(sr.Report))
		if diff := cmp.Diff(objs, again); diff != "" {
			t.Errorf("objects(%d results, max %d) twice differ (-first +second):\n%s", tt.results, tt.maxBytes, diff)
		}
	}
}

func unstructuredSlice(o map[string]any, k string) (int, bool, error) {
	rs, ok := o[k].([]any)
	return len(rs), ok, nil
}

func TestLabelValue(t *testing.T) {
	long := "cpol-" + strings.Repeat("a", 70)
	tests := []struct{ in, want string }{
		{"cpol-p", "cpol-p"},
		{long, long[:50] + "-" + contentHash([]byte(long))[:12]},
	}
	for _, tt := range tests {
		if got := labelValue(tt.in); got != tt.want || len(got) > 63 {
			t.Errorf("labelValue(%q) = %q, want %q (63 characters at most)", tt.in, got, tt.want)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(Options{}); err == nil || !strings.Contains(err.Error(), "no local store") {
		t.Errorf("Open(no local store) = %v, want an error naming it", err)
	}
}

func TestOptionsDefaults(t *testing.T) {
	got := Options{}.withDefaults()
	want := Options{ShardCount: 1, FlushInterval: DefaultFlushInterval, MaxReportBytes: DefaultMaxReportBytes,
		BackoffMin: DefaultBackoffMin, BackoffMax: DefaultBackoffMax, Concurrency: DefaultConcurrency,
		RequestTimeout: DefaultRequestTimeout, FieldManager: DefaultFieldManager, MaxTombstoneBytes: DefaultMaxTombstoneBytes}
	got.Logger, got.Registry = nil, nil
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Options{})); diff != "" {
		t.Errorf("Options{}.withDefaults() (-want +got):\n%s", diff)
	}
	set := Options{ShardIndex: 1, ShardCount: 3, FlushInterval: time.Minute, MaxReportBytes: 1, BackoffMin: time.Second, BackoffMax: time.Millisecond, Concurrency: 9}.withDefaults()
	if set.ShardIndex != 1 || set.ShardCount != 3 || set.FlushInterval != time.Minute || set.MaxReportBytes != 1 || set.Concurrency != 9 || set.BackoffMax != DefaultBackoffMax {
		t.Errorf("withDefaults() changed set options: %+v", set)
	}
}

// groupedReport is a report with one grouped result listing n Pods.
func groupedReport(ns string, n int) *reportwriter.StoredReport {
	var res []string
	for i := range n {
		res = append(res, fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","namespace":%q,"name":"pod-%04d","uid":"%036d"}`, ns, i, i))
	}
	b := fmt.Sprintf(`{"apiVersion":"wgpolicyk8s.io/v1alpha2","kind":"PolicyReport","metadata":{"name":"cpol-p","namespace":%q},"results":[{"policy":"p","rule":"r","result":"pass","message":"validation rule 'r' passed.","resources":[%s]}]}`, ns, strings.Join(res, ","))
	return &reportwriter.StoredReport{Key: reportwriter.ReportKey{Namespace: ns, Name: "cpol-p"}, Report: []byte(b)}
}

// TestObjectsSplitGroup cuts a grouped result larger than a part into
// results with fewer resources: every part within the limit, every
// resource once, in order, and the summaries counting resources.
func TestObjectsSplitGroup(t *testing.T) {
	for _, tt := range []struct {
		resources, maxBytes, wantParts int
	}{
		{10, 64 << 10, 1},
		{1000, 64 << 10, 2}, // ~106 bytes a resource, 62 KiB a part
		{1, 100, 1},         // a single resource is never cut
	} {
		s := &Store{opts: Options{MaxReportBytes: tt.maxBytes}.withDefaults()}
		sr := groupedReport("shop", tt.resources)
		objs, err := s.objects(sr.Key, sr.Report, contentHash(sr.Report))
		if err != nil {
			t.Fatalf("objects(%d resources, max %d) error = %v", tt.resources, tt.maxBytes, err)
		}
		if len(objs) != tt.wantParts {
			t.Errorf("objects(%d resources, max %d) = %d parts, want %d", tt.resources, tt.maxBytes, len(objs), tt.wantParts)
		}
		var names []string
		pass := int64(0)
		for _, o := range objs {
			b, err := o.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if tt.resources > 1 && len(b) > tt.maxBytes {
				t.Errorf("objects(%d resources, max %d): part %s is %d bytes", tt.resources, tt.maxBytes, o.GetName(), len(b))
			}
			pass += o.Object["summary"].(map[string]any)["pass"].(int64)
			for _, r := range o.Object["results"].([]any) {
				r := r.(map[string]any)
				if r["message"] != "validation rule 'r' passed." || r["rule"] != "r" {
					t.Errorf("objects(%d resources, max %d): result %v lost its outcome", tt.resources, tt.maxBytes, r)
				}
				for _, res := range r["resources"].([]any) {
					names = append(names, res.(map[string]any)["name"].(string))
				}
			}
		}
		var want []string
		for i := range tt.resources {
			want = append(want, fmt.Sprintf("pod-%04d", i))
		}
		if diff := cmp.Diff(want, names); diff != "" {
			t.Errorf("objects(%d resources, max %d) resources (-want +got):\n%s", tt.resources, tt.maxBytes, diff)
		}
		if pass != int64(tt.resources) {
			t.Errorf("objects(%d resources, max %d) summaries count %d passes, want %d", tt.resources, tt.maxBytes, pass, tt.resources)
		}
	}
}
