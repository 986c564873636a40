package kubestore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/verdict-policy/verdict/reportwriter"
)

// apiReport is a report of the shard as found in the API server: its
// parts, merged.
type apiReport struct {
	key     reportwriter.ReportKey
	hash    string // of the first part; "" when the parts disagree
	parts   int
	labels  map[string]string
	results []reportResult
}

// reportResult is the part of a report result the store reads back.
type reportResult struct {
	Policy    string `json:"policy"`
	Rule      string `json:"rule"`
	Category  string `json:"category"`
	Severity  string `json:"severity"`
	Timestamp struct {
		Seconds int64 `json:"seconds"`
	} `json:"timestamp"`
	Result     string                  `json:"result"`
	Scored     bool                    `json:"scored"`
	Message    string                  `json:"message"`
	Properties map[string]string       `json:"properties"`
	Resources  []reportwriter.Resource `json:"resources"`
}

// list reads the shard's report objects of the group api written by
// Verdict. With optional, a resource the API server does not serve (its
// CRD is not installed) or the writer may not list (logged) has none.
func (s *Store) list(ctx context.Context, api reportAPI, optional bool) (map[reportwriter.ReportKey]*apiReport, error) {
	out := map[reportwriter.ReportKey]*apiReport{}
	sel := metav1.ListOptions{LabelSelector: reportwriter.LabelManagedBy + "=" + reportwriter.ManagedBy}
	for _, gvr := range []schema.GroupVersionResource{api.namespaced, api.cluster} {
		lctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
		l, err := s.opts.Client.Resource(gvr).List(lctx, sel)
		cancel()
		if optional && apierrors.IsNotFound(err) {
			continue
		}
		if optional && apierrors.IsForbidden(err) {
			s.log.Warn("cannot list the reports of the other API group: those Verdict wrote before a switch of group stay", "resource", gvr.Resource+"."+gvr.Group, "error", err)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list %s.%s: %w", gvr.Resource, gvr.Group, err)
		}
		for i := range l.Items {
			o := &l.Items[i]
			if !s.owns(o.GetNamespace()) {
				continue
			}
			if err := add(out, o); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func add(out map[reportwriter.ReportKey]*apiReport, o *unstructured.Unstructured) error {
	base := o.GetLabels()[LabelReport]
	part := 1
	if p := o.GetAnnotations()[AnnotationPart]; p != "" {
		i, _, _ := strings.Cut(p, "/")
		part, _ = strconv.Atoi(i)
	}
	if base == "" || part > 1 && strings.TrimSuffix(o.GetName(), "-"+strconv.Itoa(part)) == o.GetName() {
		base = o.GetName() // written by an older version, or not by this store
	} else if part > 1 {
		base = strings.TrimSuffix(o.GetName(), "-"+strconv.Itoa(part))
	} else {
		base = o.GetName()
	}
	k := reportwriter.ReportKey{Namespace: o.GetNamespace(), Name: base}
	r := out[k]
	if r == nil {
		r = &apiReport{key: k, hash: o.GetAnnotations()[AnnotationContentHash]}
		out[k] = r
	}
	if h := o.GetAnnotations()[AnnotationContentHash]; h != r.hash {
		r.hash = ""
	}
	if part == 1 {
		r.labels = o.GetLabels()
	}
	r.parts = max(r.parts, part)
	var body struct {
		Results []reportResult `json:"results"`
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(map[string]any{"results": o.Object["results"]}, &body); err != nil {
		return fmt.Errorf("%s %s: results: %w", o.GetKind(), name(o.GetNamespace(), o.GetName()), err)
	}
	r.results = append(r.results, body.Results...)
	return nil
}

// Load implements reportwriter.Store (see the package documentation).
func (s *Store) Load(ctx context.Context) (*reportwriter.State, error) {
	st, err := s.local.Load(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.loadTombstones(ctx, st); err != nil {
		return nil, err
	}
	applied, err := s.loadApplied()
	if err != nil {
		return nil, err
	}
	found, err := s.list(ctx, s.api(), false)
	if err != nil {
		return nil, err
	}
	// The objects of the other group: Verdict's, from before a switch of
	// Options.OpenReports. They are deleted below; when the chosen group
	// has none yet, the state is rebuilt from them first.
	stale, err := s.list(ctx, s.other(), true)
	if err != nil {
		return nil, err
	}
	migrate := len(found) == 0 && len(stale) > 0
	if migrate {
		st, err := s.rebuild(ctx, st, stale, false)
		if err != nil {
			return nil, err
		}
		if err := s.deleteStale(ctx, stale); err != nil {
			return nil, err
		}
		return st, nil
	}
	if err := s.deleteStale(ctx, stale); err != nil {
		return nil, err
	}
	s.mu.Lock()
	for k, r := range found {
		s.parts[k] = r.parts
	}
	s.mu.Unlock()
	consistent := len(found) == len(applied)
	for k, r := range found {
		if applied[k] == "" || applied[k] != r.hash {
			consistent = false
		}
	}
	if consistent {
		// The file knows what the API server holds: apply what it had not.
		s.mu.Lock()
		s.applied = applied
		inFile := map[reportwriter.ReportKey]bool{}
		for _, sr := range st.Reports {
			inFile[sr.Key] = true
			if s.owns(sr.Key.Namespace) && applied[sr.Key] != contentHash(sr.Report) {
				s.pending[sr.Key] = struct{}{}
			}
		}
		for k := range applied {
			if !inFile[k] {
				s.pending[k] = struct{}{}
			}
		}
		n := len(s.pending)
		s.mu.Unlock()
		if n > 0 {
			s.signal()
		}
		return st, nil
	}
	s.metrics.rebuild.Inc()
	s.log.Info("rebuilding the report state from the API server", "reports", len(found), "file_reports", len(st.Reports))
	return s.rebuild(ctx, st, found, true)
}

// deleteStale deletes every part of the reports of the other group
// (list), logged.
func (s *Store) deleteStale(ctx context.Context, stale map[reportwriter.ReportKey]*apiReport) error {
	if len(stale) == 0 {
		return nil
	}
	s.log.Info("deleting the reports of the other API group", "group", s.other().name, "reports", len(stale), "writing", s.api().name)
	for k, r := range stale {
		for i := 1; i <= max(r.parts, 1); i++ {
			if err := s.deleteIn(ctx, s.other(), k, partName(k.Name, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// rebuild replaces the file's intermediaries and reports by those of the
// API server's objects; tombstones and the policy set stay. With
// applied, found are the objects of the store's group, recorded as
// applied; without (found are the other group's), nothing is, so that
// every report is applied again.
func (s *Store) rebuild(ctx context.Context, old *reportwriter.State, found map[reportwriter.ReportKey]*apiReport, recordApplied bool) (*reportwriter.State, error) {
	c := &reportwriter.Changes{}
	for _, in := range old.Intermediaries {
		c.DeleteIntermediaries = append(c.DeleteIntermediaries, reportwriter.IntermediaryKey{Source: in.Source, Resource: in.Owner.Key()})
	}
	for _, sr := range old.Reports {
		c.DeleteReports = append(c.DeleteReports, sr.Key)
	}
	type ikey struct {
		source reportwriter.Source
		res    string
	}
	inters := map[ikey]*reportwriter.Intermediary{}
	applied := map[reportwriter.ReportKey]string{}
	for k, r := range found {
		if recordApplied {
			applied[k] = r.hash
		}
		kind, labelPrefix, ok := reportwriter.PolicyOfReport(k.Name)
		if !ok {
			kind, labelPrefix = reportwriter.KindClusterPolicy, "cpol.kyverno.io/"
		}
		pns := ""
		if reportwriter.NamespacedKind(kind) {
			pns = k.Namespace
		}
		for _, res := range r.results {
			// A result lists one resource (Kyverno's layout) or every
			// resource with the same outcome of the rule (grouped).
			for _, owner := range res.Resources {
				bg := res.Properties["process"] == "background scan"
				source := reportwriter.SourceAdmission
				if bg {
					source = reportwriter.SourceBackground
				}
				ik := ikey{source, owner.Key()}
				in := inters[ik]
				if in == nil {
					in = &reportwriter.Intermediary{Source: source, Owner: owner}
					inters[ik] = in
				}
				pname := res.Policy
				if reportwriter.NamespacedKind(kind) {
					_, pname, _ = strings.Cut(res.Policy, "/")
				}
				pv := reportwriter.PolicyVersion{Kind: kind, Namespace: pns, Name: pname, Background: bg, Time: time.Unix(res.Timestamp.Seconds, 0).UTC()}
				if v := r.labels[labelPrefix+pname]; v != "" {
					pv.Hash = v
				}
				seen := false
				for _, p := range in.Policies {
					if p.Key() == pv.Key() {
						seen = true
					}
				}
				if !seen {
					in.Policies = append(in.Policies, pv)
				}
				props := map[string]string{}
				for k, v := range res.Properties {
					if k != "process" {
						props[k] = v
					}
				}
				if len(props) == 0 {
					props = nil
				}
				in.Results = append(in.Results, reportwriter.Entry{
					Policy: res.Policy, Rule: res.Rule, Result: res.Result, Message: res.Message,
					Category: res.Category, Severity: res.Severity, Scored: res.Scored, Properties: props,
				})
				in.Summary.Add(res.Result)
			}
		}
	}
	st := &reportwriter.State{Tombstones: old.Tombstones, Policies: old.Policies}
	for _, in := range inters {
		st.Intermediaries = append(st.Intermediaries, in)
		c.PutIntermediaries = append(c.PutIntermediaries, in)
	}
	// Written before the deletes of the same keys would be wrong: drop
	// the deletes of keys written again.
	put := map[reportwriter.IntermediaryKey]bool{}
	for _, in := range c.PutIntermediaries {
		put[reportwriter.IntermediaryKey{Source: in.Source, Resource: in.Owner.Key()}] = true
	}
	dels := c.DeleteIntermediaries[:0]
	for _, k := range c.DeleteIntermediaries {
		if !put[k] {
			dels = append(dels, k)
		}
	}
	c.DeleteIntermediaries = dels
	if err := s.local.Write(ctx, c); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.applied = applied
	s.mu.Unlock()
	if err := s.saveApplied(); err != nil {
		return nil, err
	}
	// The reports are rendered again by the writer from the rebuilt
	// intermediaries and applied when they differ.
	return st, nil
}
