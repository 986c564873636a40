package reportwriter_test

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
)

// eventLog records what the writer hands to Options.Events.
type eventLog struct {
	mu  sync.Mutex
	got []string
}

func (l *eventLog) Evaluation(ev *verdictv1.ResourceEvaluation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := ev.GetResource().GetName() + " " + ev.GetSource().String()
	if ev.GetDenied() {
		s += " denied"
	}
	l.got = append(l.got, s)
}

// TestEvents: the writer hands every evaluation it applied to
// Options.Events (denied and dry-run admission requests too, which
// change no report), and never one that changed nothing.
func TestEvents(t *testing.T) {
	tests := []struct {
		name    string
		batches [][]*verdictv1.PublishItem
		want    []string
	}{
		{
			name: "admission, denied, dry run and background",
			batches: [][]*verdictv1.PublishItem{items(
				evaluation(podA, 0, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad")}, []pol{polLatest}),
				evaluation(podB, 1, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad")}, []pol{polLatest}, denied),
				evaluation(podC, 2, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad")}, []pol{polLatest}, dryRun),
				evaluation(podA, 3, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad")}, []pol{polLatest}, background),
			)},
			want: []string{
				"web REPORT_SOURCE_ADMISSION",
				"debug REPORT_SOURCE_ADMISSION denied",
				"api REPORT_SOURCE_ADMISSION",
				"web REPORT_SOURCE_BACKGROUND",
			},
		},
		{
			name: "a batch sent again and an older evaluation give none",
			batches: [][]*verdictv1.PublishItem{
				items(evaluation(podA, 5, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad")}, []pol{polLatest})),
				items(evaluation(podA, 5, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad")}, []pol{polLatest})),
				items(evaluation(podA, 4, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", pass, "ok")}, []pol{polLatest})),
			},
			want: []string{"web REPORT_SOURCE_ADMISSION"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &eventLog{}
			e := startWriter(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{Events: log})
			sendBatches(t, e.client, tt.batches...)
			log.mu.Lock()
			defer log.mu.Unlock()
			if diff := cmp.Diff(tt.want, log.got); diff != "" {
				t.Errorf("evaluations handed to Events mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
