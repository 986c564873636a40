package kubestore

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/verdict-policy/verdict/internal/ctxtime"
	"github.com/verdict-policy/verdict/internal/promreg"
	"github.com/verdict-policy/verdict/reportwriter"
)

type metrics struct {
	writes  *prometheus.CounterVec
	errors  *prometheus.CounterVec
	pending prometheus.Gauge
	foreign prometheus.Counter
	rebuild prometheus.Counter

	tombsLeftOut prometheus.Gauge
}

func newMetrics(reg *prometheus.Registry) (*metrics, error) {
	b := promreg.New(reg)
	m := &metrics{
		writes:       b.CounterVec("verdict_reports_api_writes_total", "Writes of report objects to the API server (apply, delete), failed ones included, by verb and kind.", "verb", "kind"),
		errors:       b.CounterVec("verdict_reports_api_write_errors_total", "Writes of report objects that failed (retried with backoff), by verb and kind.", "verb", "kind"),
		pending:      b.Gauge("verdict_reports_api_pending", "Reports changed and not yet written to the API server."),
		foreign:      b.Counter("verdict_reports_foreign_total", "Report writes left out because the report's namespace belongs to another shard."),
		rebuild:      b.Counter("verdict_reports_rebuilds_total", "Loads that rebuilt the state from the report objects of the API server."),
		tombsLeftOut: b.Gauge("verdict_reports_tombstones_left_out", "Tombstones (the oldest) left out of the tombstone Lease at its last write because of the max tombstone bytes."),
	}
	return m, b.Err()
}

// run applies the pending reports, one round per FlushInterval at most,
// or after a backoff when a round failed.
func (s *Store) run(ctx context.Context) {
	defer close(s.done)
	backoff := s.opts.BackoffMin
	for {
		select {
		case <-s.wake:
		case <-s.now:
		case <-ctx.Done():
			return
		}
		// Writes within the interval are coalesced into this round; Flush
		// cuts the wait short.
		t := time.NewTimer(s.opts.FlushInterval)
		select {
		case <-t.C:
		case <-s.now:
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			return
		}
		failed := s.round(ctx)
		if !failed {
			backoff = s.opts.BackoffMin
			continue
		}
		s.log.Warn("report writes failed, retrying", "retry_in", backoff, "error", s.err())
		if ctxtime.Sleep(ctx, backoff) != nil {
			return
		}
		backoff = min(2*backoff, s.opts.BackoffMax)
		s.signal()
	}
}

func (s *Store) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// round applies every pending report once; a report that fails stays
// pending unless a newer content replaced it meanwhile. It reports whether
// a write failed.
func (s *Store) round(ctx context.Context) bool {
	s.mu.Lock()
	batch := s.pending
	s.pending = map[reportwriter.ReportKey]struct{}{}
	for k := range batch {
		s.inflight[k] = s.pendingSeq[k]
	}
	s.pendingSeq = map[reportwriter.ReportKey]uint64{}
	var tombs map[string]time.Time
	if s.tombDirty {
		tombs = maps.Clone(s.tombs)
		s.tombDirty, s.tombFlight, s.tombFlightSeq = false, true, s.tombSeq
	}
	s.mu.Unlock()
	var lastErr error
	changed := false
	keys := make(chan reportwriter.ReportKey)
	var wg sync.WaitGroup
	for range min(s.opts.Concurrency, max(len(batch), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range keys {
				hash, err := s.write(ctx, k)
				s.mu.Lock()
				q := s.inflight[k]
				delete(s.inflight, k)
				if err != nil {
					lastErr = err
					s.pending[k] = struct{}{}
					s.pendingSeq[k] = q // not after the newer content's
				} else {
					changed = true
					if hash == "" {
						delete(s.applied, k)
					} else {
						s.applied[k] = hash
					}
				}
				s.mu.Unlock()
			}
		}()
	}
	for k := range batch {
		keys <- k
	}
	close(keys)
	wg.Wait()
	if tombs != nil {
		err := s.applyTombstones(ctx, tombs)
		s.mu.Lock()
		s.tombFlight = false
		if err != nil {
			lastErr = err
			s.tombDirty, s.tombSeq = true, s.tombFlightSeq
		}
		s.mu.Unlock()
	}
	if changed {
		if err := s.saveApplied(); err != nil {
			s.log.Error("record applied reports", "error", err)
		}
	}
	s.mu.Lock()
	s.lastErr = lastErr
	s.rounds++
	close(s.roundDone)
	s.roundDone = make(chan struct{})
	s.metrics.pending.Set(float64(len(s.pending)))
	s.mu.Unlock()
	return lastErr != nil
}

func (s *Store) resource(k reportwriter.ReportKey) dynamic.ResourceInterface {
	return s.api().resource(s.opts.Client, k)
}

// write applies report k as the local file holds it, with its parts, or
// deletes it when the file has none; it returns the content hash of what
// it applied ("": deleted).
func (s *Store) write(ctx context.Context, k reportwriter.ReportKey) (string, error) {
	report, err := s.local.ReadReport(ctx, k)
	if err != nil {
		return "", fmt.Errorf("report %s: %w", name(k.Namespace, k.Name), err)
	}
	s.mu.Lock()
	had := max(s.parts[k], 1)
	s.mu.Unlock()
	n, hash := 0, ""
	if report != nil {
		hash = contentHash(report)
		objs, err := s.objects(k, report, hash)
		if err != nil {
			return "", err
		}
		for _, o := range objs {
			if err := s.apply(ctx, k, o); err != nil {
				return "", err
			}
		}
		n = len(objs)
	}
	// Parts no longer needed, or every part of a deleted report.
	for i := had; i > n; i-- {
		if err := s.delete(ctx, k, partName(k.Name, i)); err != nil {
			return "", err
		}
	}
	s.mu.Lock()
	if n == 0 {
		delete(s.parts, k)
	} else {
		s.parts[k] = n
	}
	s.mu.Unlock()
	return hash, nil
}

func (s *Store) apply(ctx context.Context, k reportwriter.ReportKey, o *unstructured.Unstructured) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	kind := s.api().kind(k)
	s.metrics.writes.WithLabelValues("apply", kind).Inc()
	_, err := s.resource(k).Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: s.opts.FieldManager, Force: true})
	if err != nil {
		s.metrics.errors.WithLabelValues("apply", kind).Inc()
		return fmt.Errorf("apply %s %s: %w", kind, name(k.Namespace, o.GetName()), err)
	}
	return nil
}

func (s *Store) delete(ctx context.Context, k reportwriter.ReportKey, n string) error {
	return s.deleteIn(ctx, s.api(), k, n)
}

// deleteIn deletes the object n of report k in the group api.
func (s *Store) deleteIn(ctx context.Context, api reportAPI, k reportwriter.ReportKey, n string) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	kind := api.kind(k)
	s.metrics.writes.WithLabelValues("delete", kind).Inc()
	err := api.resource(s.opts.Client, k).Delete(ctx, n, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		s.metrics.errors.WithLabelValues("delete", kind).Inc()
		return fmt.Errorf("delete %s %s: %w", kind, name(k.Namespace, n), err)
	}
	return nil
}

func name(ns, n string) string {
	if ns == "" {
		return n
	}
	return ns + "/" + n
}

// partName is the name of part i (from 1) of report name.
func partName(name string, i int) string {
	if i <= 1 {
		return name
	}
	return name + "-" + strconv.Itoa(i)
}

// objects renders the objects of report k (its JSON, whose content hash is
// hash): one, or its parts when larger
// than MaxReportBytes. The split is a function of the content only: the
// results in their report order, cut greedily by size.
func (s *Store) objects(k reportwriter.ReportKey, report []byte, hash string) ([]*unstructured.Unstructured, error) {
	var rep struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Results []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(report, &rep); err != nil {
		return nil, fmt.Errorf("report %s: %w", name(k.Namespace, k.Name), err)
	}
	const overhead = 2 << 10 // metadata and summary
	// A result listing more resources than a part can hold is cut into
	// results with fewer resources.
	var pieces []json.RawMessage
	for _, r := range rep.Results {
		if len(r)+1+overhead <= s.opts.MaxReportBytes {
			pieces = append(pieces, r)
			continue
		}
		split, err := splitResult(r, s.opts.MaxReportBytes-overhead)
		if err != nil {
			return nil, fmt.Errorf("report %s: %w", name(k.Namespace, k.Name), err)
		}
		pieces = append(pieces, split...)
	}
	var groups [][]json.RawMessage
	size := 0
	for _, r := range pieces {
		if len(groups) == 0 || (size+len(r)+1+overhead > s.opts.MaxReportBytes && len(groups[len(groups)-1]) > 0) {
			groups = append(groups, nil)
			size = 0
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], r)
		size += len(r) + 1
	}
	if len(groups) == 0 {
		groups = [][]json.RawMessage{nil}
	}
	objs := make([]*unstructured.Unstructured, 0, len(groups))
	for i, g := range groups {
		results := make([]any, 0, len(g))
		var sum reportwriter.Summary
		for _, r := range g {
			var v map[string]any
			if err := json.Unmarshal(r, &v); err != nil {
				return nil, fmt.Errorf("report %s: %w", name(k.Namespace, k.Name), err)
			}
			// One count per resource, as the report's summary.
			res, _ := v["result"].(string)
			resources, _ := v["resources"].([]any)
			for range max(len(resources), 1) {
				sum.Add(res)
			}
			results = append(results, v)
		}
		labels := maps.Clone(rep.Metadata.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		labels[reportwriter.LabelManagedBy] = reportwriter.ManagedBy
		labels[LabelReport] = labelValue(k.Name)
		md := map[string]any{
			"name":   partName(k.Name, i+1),
			"labels": toAny(labels),
			"annotations": map[string]any{
				AnnotationContentHash: hash,
				AnnotationPart:        fmt.Sprintf("%d/%d", i+1, len(groups)),
			},
		}
		if k.Namespace != "" {
			md["namespace"] = k.Namespace
		}
		objs = append(objs, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": s.api().apiVersion,
			"kind":       s.api().kind(k),
			"metadata":   md,
			"results":    results,
			"summary": map[string]any{
				"pass": int64(sum.Pass), "fail": int64(sum.Fail), "warn": int64(sum.Warn), "error": int64(sum.Error), "skip": int64(sum.Skip),
			},
		}})
	}
	return objs, nil
}

// splitResult cuts a result whose resources[] lists several resources
// into results of the same outcome with fewer resources each, every one at
// most limit bytes of JSON when its resources allow it (a single resource
// is never cut).
func splitResult(raw json.RawMessage, limit int) ([]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	var resources []json.RawMessage
	if r, ok := m["resources"]; ok {
		if err := json.Unmarshal(r, &resources); err != nil {
			return nil, fmt.Errorf("resources: %w", err)
		}
	}
	if len(resources) <= 1 {
		return []json.RawMessage{raw}, nil
	}
	delete(m, "resources")
	base, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	const listOverhead = len(`,"resources":[]`)
	var out []json.RawMessage
	flush := func(part []json.RawMessage) error {
		m["resources"], err = json.Marshal(part)
		if err != nil {
			return err
		}
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		out = append(out, b)
		return nil
	}
	var part []json.RawMessage
	size := len(base) + listOverhead
	for _, r := range resources {
		if len(part) > 0 && size+len(r)+1 > limit {
			if err := flush(part); err != nil {
				return nil, err
			}
			part, size = nil, len(base)+listOverhead
		}
		part = append(part, r)
		size += len(r) + 1
	}
	if err := flush(part); err != nil {
		return nil, err
	}
	return out, nil
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// labelValue is name when it is a valid label value (63 characters at
// most), else its first 50 characters and a hash.
func labelValue(name string) string {
	if len(name) <= 63 {
		return name
	}
	return name[:50] + "-" + contentHash([]byte(name))[:12]
}
