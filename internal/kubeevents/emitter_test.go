package kubeevents

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// emitted is what the test reads of an Event.
type emitted struct {
	Namespace, Object, Reason, Type, Action, Message, Controller string
	Count                                                        int32
}

func list(t *testing.T, cs *fake.Clientset) []emitted {
	t.Helper()
	l, err := cs.CoreV1().Events("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []emitted
	for _, e := range l.Items {
		out = append(out, emitted{e.Namespace, e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name, e.Reason, e.Type, e.Action, e.Message, e.ReportingController, e.Count})
	}
	return out
}

// drain runs the emitter until its queue is empty and the writes done
// (Flush).
func drain(t *testing.T, e *Emitter) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	fctx, fcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer fcancel()
	if err := e.Flush(fctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	cancel()
	<-done
}

func violation(msg string) Info {
	return Info{Regarding: podRef, Reason: PolicyViolation, Source: AdmissionController, Action: ResourcePassed, Message: msg}
}

func TestEmitter(t *testing.T) {
	applied := Info{Regarding: cpolRef, Reason: PolicyApplied, Source: AdmissionController, Action: ResourcePassed, Message: "Pod team-a/web: pass"}
	tests := []struct {
		name    string
		opts    Options
		add     []Info
		want    []emitted
		dropped map[string]float64
		omitted float64
	}{
		{
			name:    "written as Kyverno's; PolicyApplied omitted by default",
			add:     []Info{violation("policy p/r fail: m"), applied},
			want:    []emitted{{"team-a", "Pod/web", "PolicyViolation", "Warning", "Resource Passed", "policy p/r fail: m", "kyverno-admission", 1}},
			omitted: 1,
		},
		{
			name: "the same event twice is counted on one Event",
			opts: Options{Workers: 1},
			add:  []Info{violation("policy p/r fail: m"), violation("policy p/r fail: m")},
			want: []emitted{{"team-a", "Pod/web", "PolicyViolation", "Warning", "Resource Passed", "policy p/r fail: m", "kyverno-admission", 2}},
		},
		{
			name: "nothing omitted: PolicyApplied is Normal",
			opts: Options{Omit: []string{}},
			add:  []Info{applied},
			want: []emitted{{"default", "ClusterPolicy/require-labels", "PolicyApplied", "Normal", "Resource Passed", "Pod team-a/web: pass", "kyverno-admission", 1}},
		},
		{
			name: "the same message from two sources: two Events",
			opts: Options{Workers: 1},
			add:  []Info{violation("policy p/r fail: m"), {Regarding: podRef, Reason: PolicyViolation, Source: PolicyController, Action: ResourcePassed, Message: "policy p/r fail: m"}},
			want: []emitted{
				{"team-a", "Pod/web", "PolicyViolation", "Warning", "Resource Passed", "policy p/r fail: m", "kyverno-admission", 1},
				{"team-a", "Pod/web", "PolicyViolation", "Warning", "Resource Passed", "policy p/r fail: m", "kyverno-scan", 1},
			},
		},
		{
			name:    "at the spam filter's burst, then over it",
			opts:    Options{Workers: 1, Burst: 2, AggregateMaxEvents: 100},
			add:     []Info{violation("a"), violation("b"), violation("c")},
			want:    []emitted{{"team-a", "Pod/web", "PolicyViolation", "Warning", "Resource Passed", "a", "kyverno-admission", 1}, {"team-a", "Pod/web", "PolicyViolation", "Warning", "Resource Passed", "b", "kyverno-admission", 1}},
			dropped: map[string]float64{"rate_limited": 1},
		},
		{
			name:    "at the max queued events, then over it",
			opts:    Options{MaxQueued: 2},
			add:     []Info{violation("a"), violation("b"), violation("c")},
			want:    []emitted{{"team-a", "Pod/web", "PolicyViolation", "Warning", "Resource Passed", "a", "kyverno-admission", 1}, {"team-a", "Pod/web", "PolicyViolation", "Warning", "Resource Passed", "b", "kyverno-admission", 1}},
			dropped: map[string]float64{"queue_full": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset()
			o := tt.opts
			o.Client, o.Host = cs, "h"
			o.Registry = prometheus.NewRegistry()
			e, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			// Queued before Run: the queue's limit is what is tested.
			e.Add(tt.add...)
			drain(t, e)
			got := list(t, cs)
			sortEmitted(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Events mismatch (-want +got):\n%s", diff)
			}
			for _, cause := range []string{"queue_full", "rate_limited", "rejected", "failed", "stopped"} {
				if got := testutil.ToFloat64(e.metrics.dropped.WithLabelValues(cause)); got != tt.dropped[cause] {
					t.Errorf("verdict_events_dropped_total{cause=%q} = %v, want %v", cause, got, tt.dropped[cause])
				}
			}
			if got := testutil.ToFloat64(e.metrics.omitted.WithLabelValues(PolicyApplied)); got != tt.omitted {
				t.Errorf("verdict_events_omitted_total{reason=PolicyApplied} = %v, want %v", got, tt.omitted)
			}
		})
	}
}

func sortEmitted(es []emitted) {
	for i := range es {
		for j := i + 1; j < len(es); j++ {
			if es[j].Message+es[j].Controller < es[i].Message+es[i].Controller {
				es[i], es[j] = es[j], es[i]
			}
		}
	}
}

func TestEmitterRetries(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		retries int
		calls   int
		cause   string
	}{
		{name: "unreachable: tried again, then dropped", err: errors.New("connection refused"), retries: 2, calls: 3, cause: "failed"},
		{name: "refused by the API server: not tried again", err: apierrorsInvalid(), retries: 2, calls: 1, cause: "rejected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset()
			calls := 0
			cs.PrependReactor("create", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
				calls++
				return true, nil, tt.err
			})
			e, err := New(Options{Client: cs, Retries: tt.retries, RetryDelay: time.Millisecond, Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			e.Add(violation("m"))
			drain(t, e)
			if calls != tt.calls {
				t.Errorf("creates = %d, want %d", calls, tt.calls)
			}
			if got := testutil.ToFloat64(e.metrics.dropped.WithLabelValues(tt.cause)); got != 1 {
				t.Errorf("verdict_events_dropped_total{cause=%q} = %v, want 1", tt.cause, got)
			}
		})
	}
}

// TestEmitterStopped: what is still queued when Run stops is counted.
func TestEmitterStopped(t *testing.T) {
	e, err := New(Options{Client: fake.NewClientset()})
	if err != nil {
		t.Fatal(err)
	}
	e.Add(violation("a"), violation("b"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e.Run(ctx) // stopped before any write
	written := testutil.ToFloat64(e.metrics.written.WithLabelValues(PolicyViolation))
	stopped := testutil.ToFloat64(e.metrics.dropped.WithLabelValues("stopped"))
	if written+stopped != 2 || testutil.ToFloat64(e.metrics.queued) != 0 {
		t.Errorf("after Run stopped: written %v + stopped %v, queued %v; want 2 in all, none queued", written, stopped, testutil.ToFloat64(e.metrics.queued))
	}
}

func TestParseOmit(t *testing.T) {
	tests := []struct {
		in      []string
		want    []string
		wantErr string
	}{
		{in: nil, want: []string{}},
		{in: []string{""}, want: []string{}},
		{in: []string{"PolicyApplied", " PolicySkipped"}, want: []string{"PolicyApplied", "PolicySkipped"}},
		{in: []string{"PolicyViolation", "PolicyApplied", "PolicyError", "PolicySkipped"}, want: []string{"PolicyViolation", "PolicyApplied", "PolicyError", "PolicySkipped"}},
		{in: []string{"Applied"}, wantErr: `"Applied": want PolicyViolation, PolicyApplied, PolicyError, PolicySkipped`},
	}
	for _, tt := range tests {
		got, err := ParseOmit(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseOmit(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !cmp.Equal(got, tt.want) {
			t.Errorf("ParseOmit(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestNewRequiresClient(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("New(Options{}) = nil error, want one naming Client")
	}
}

func apierrorsInvalid() error {
	return apierrors.NewInvalid(schema.GroupKind{Kind: "Event"}, "x", nil)
}
