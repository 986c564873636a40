package kubestore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/verdict-policy/verdict/reportwriter"
)

// encodeTombstones renders the annotation of the tombstone Lease: the
// newest tombstones whose JSON fits in max bytes. It returns how many were
// left out.
func encodeTombstones(tombs map[string]time.Time, max int) (string, int) {
	keys := slices.Collect(maps.Keys(tombs))
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(tombs[b].Compare(tombs[a]), cmp.Compare(a, b))
	})
	kept := map[string]int64{}
	size := 2 // {}
	for _, k := range keys {
		kb, _ := json.Marshal(k)
		n := len(kb) + 1 + len(fmt.Sprint(tombs[k].UnixNano())) + 1 // "key":123,
		if size+n > max {
			break
		}
		size += n
		kept[k] = tombs[k].UnixNano()
	}
	b, _ := json.Marshal(kept)
	return string(b), len(tombs) - len(kept)
}

// decodeTombstones parses the annotation of the tombstone Lease.
func decodeTombstones(v string) (map[string]time.Time, error) {
	var m map[string]int64
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return nil, err
	}
	out := make(map[string]time.Time, len(m))
	for k, ns := range m {
		out[k] = time.Unix(0, ns).UTC()
	}
	return out, nil
}

// applyTombstones writes tombs to the tombstone Lease.
func (s *Store) applyTombstones(ctx context.Context, tombs map[string]time.Time) error {
	v, left := encodeTombstones(tombs, s.opts.MaxTombstoneBytes)
	s.metrics.tombsLeftOut.Set(float64(left))
	if left > 0 {
		s.log.Warn("tombstones left out of the tombstone Lease (max tombstone bytes)", "left_out", left, "max_bytes", s.opts.MaxTombstoneBytes)
	}
	o := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "coordination.k8s.io/v1",
		"kind":       "Lease",
		"metadata": map[string]any{
			"name":        s.opts.TombstoneName,
			"namespace":   s.opts.TombstoneNamespace,
			"labels":      map[string]any{reportwriter.LabelManagedBy: reportwriter.ManagedBy},
			"annotations": map[string]any{AnnotationTombstones: v},
		},
	}}
	ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	s.metrics.writes.WithLabelValues("apply", "Lease").Inc()
	_, err := s.opts.Client.Resource(Leases).Namespace(s.opts.TombstoneNamespace).Apply(ctx, s.opts.TombstoneName, o, metav1.ApplyOptions{FieldManager: s.opts.FieldManager, Force: true})
	if err != nil {
		s.metrics.errors.WithLabelValues("apply", "Lease").Inc()
		return fmt.Errorf("apply Lease %s/%s: %w", s.opts.TombstoneNamespace, s.opts.TombstoneName, err)
	}
	return nil
}

// loadTombstones adds the tombstones of the tombstone Lease (the previous
// leader's) to st's, keeping the later time of a resource in both, and
// makes them the store's.
func (s *Store) loadTombstones(ctx context.Context, st *reportwriter.State) error {
	if st.Tombstones == nil {
		st.Tombstones = map[string]time.Time{}
	}
	if s.opts.TombstoneName != "" {
		ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
		o, err := s.opts.Client.Resource(Leases).Namespace(s.opts.TombstoneNamespace).Get(ctx, s.opts.TombstoneName, metav1.GetOptions{})
		cancel()
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("get Lease %s/%s: %w", s.opts.TombstoneNamespace, s.opts.TombstoneName, err)
		default:
			if v, ok := o.GetAnnotations()[AnnotationTombstones]; ok {
				found, err := decodeTombstones(v)
				if err != nil {
					return fmt.Errorf("lease %s/%s: annotation %s: %w", s.opts.TombstoneNamespace, s.opts.TombstoneName, AnnotationTombstones, err)
				}
				for k, t := range found {
					if cur, ok := st.Tombstones[k]; !ok || t.After(cur) {
						st.Tombstones[k] = t
					}
				}
			}
		}
	}
	s.mu.Lock()
	s.tombs = maps.Clone(st.Tombstones)
	s.mu.Unlock()
	return nil
}
