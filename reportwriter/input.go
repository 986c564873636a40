package reportwriter

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// evaluation is a checked ResourceEvaluation.
type evaluation struct {
	resource        Resource
	resourceVersion string
	hash            string
	source          Source
	operation       verdictv1.Operation
	time            time.Time
	policies        []PolicyVersion
	results         []Entry
	denied, dryRun  bool
	complete        bool
	// raw is the item as received, for Options.Events.
	raw *verdictv1.ResourceEvaluation
}

// scanDone is a checked BackgroundScanDone.
type scanDone struct {
	started                time.Time
	shardIndex, shardCount uint32
	namespaces, kinds      map[string]bool
	seen                   map[string]bool
}

// inScope reports whether r is in the scan's scope.
func (s *scanDone) inScope(r Resource) bool {
	if s.shardCount > 0 && ShardOf(r.Namespace, s.shardCount) != s.shardIndex {
		return false
	}
	if len(s.namespaces) > 0 && !s.namespaces[r.Namespace] {
		return false
	}
	if len(s.kinds) > 0 && !s.kinds[r.Kind] {
		return false
	}
	return true
}

// item is one checked PublishItem: exactly one of eval, scan, policy is
// set.
type item struct {
	index  int // in its batch
	eval   *evaluation
	scan   *scanDone
	policy *PolicySet
}

// violation builds a field violation of items[i].
func violation(i int, field, format string, args ...any) *verdictv1.PublishRejection {
	f := fmt.Sprintf("items[%d]", i)
	if field != "" {
		f += "." + field
	}
	return &verdictv1.PublishRejection{
		Index:     uint32(i),
		Violation: &verdictv1.FieldViolation{Field: f, Description: fmt.Sprintf(format, args...), Reason: "invalid_argument"},
	}
}

// checker checks the items of a batch against the writer's limits.
type checker struct {
	// now is the writer's clock; a time later than now + maxSkew is
	// refused.
	now     time.Time
	maxSkew time.Duration
	// future counts an item refused for its time (field: the field's
	// path without the item index).
	future func(field string)
}

// checkItems converts the items of a batch, and lists those that are not
// valid.
func (c checker) checkItems(items []*verdictv1.PublishItem) ([]item, []*verdictv1.PublishRejection) {
	out := make([]item, 0, len(items))
	var bad []*verdictv1.PublishRejection
	for i, it := range items {
		var (
			x   = item{index: i}
			rej *verdictv1.PublishRejection
		)
		switch {
		case it.GetEvaluation() != nil:
			x.eval, rej = c.checkEvaluation(i, it.GetEvaluation())
		case it.GetScanDone() != nil:
			x.scan, rej = c.checkScanDone(i, it.GetScanDone())
		case it.GetPolicySet() != nil:
			x.policy, rej = c.checkPolicySet(i, it.GetPolicySet())
		default:
			rej = violation(i, "", "empty item: one of evaluation, scan_done, policy_set is required")
		}
		if rej != nil {
			bad = append(bad, rej)
			continue
		}
		out = append(out, x)
	}
	return out, bad
}

// checkTime checks a required time of item i: set, valid, and not later
// than the writer's clock plus the max clock skew (a time in the future
// would make every later item look older, and hold forever).
func (c checker) checkTime(i int, field string, ts *timestamppb.Timestamp) (time.Time, *verdictv1.PublishRejection) {
	if ts == nil || !ts.IsValid() || ts.AsTime().IsZero() {
		return time.Time{}, violation(i, field, "required")
	}
	t := ts.AsTime()
	if limit := c.now.Add(c.maxSkew); t.After(limit) {
		if c.future != nil {
			c.future(field)
		}
		return time.Time{}, violation(i, field, "%s is %s ahead of the report writer's clock (%s), more than the max clock skew %s",
			t.Format(time.RFC3339Nano), t.Sub(c.now).Round(time.Second), c.now.Format(time.RFC3339), c.maxSkew)
	}
	return t, nil
}

func checkResource(i int, field string, r *verdictv1.ObjectReference) (Resource, *verdictv1.PublishRejection) {
	if r == nil {
		return Resource{}, violation(i, field, "required")
	}
	switch {
	case r.GetApiVersion() == "":
		return Resource{}, violation(i, field+".api_version", "required")
	case r.GetKind() == "":
		return Resource{}, violation(i, field+".kind", "required")
	case r.GetName() == "":
		return Resource{}, violation(i, field+".name", "required")
	}
	return Resource{APIVersion: r.GetApiVersion(), Kind: r.GetKind(), Namespace: r.GetNamespace(), Name: r.GetName(), UID: r.GetUid()}, nil
}

func checkPolicyVersion(i int, field string, p *verdictv1.PolicyVersion) (PolicyVersion, *verdictv1.PublishRejection) {
	switch {
	case p == nil:
		return PolicyVersion{}, violation(i, field, "required")
	case p.GetName() == "":
		return PolicyVersion{}, violation(i, field+".name", "required")
	}
	pk, ok := policyKinds[p.GetKind()]
	switch {
	case !ok:
		return PolicyVersion{}, violation(i, field+".kind", "%q: want ClusterPolicy, Policy, ValidatingPolicy, NamespacedValidatingPolicy, ValidatingAdmissionPolicy, MutatingPolicy, NamespacedMutatingPolicy, ImageValidatingPolicy, NamespacedImageValidatingPolicy, GeneratingPolicy or NamespacedGeneratingPolicy", p.GetKind())
	case pk.namespaced && p.GetNamespace() == "":
		return PolicyVersion{}, violation(i, field+".namespace", "required for a %s", p.GetKind())
	case !pk.namespaced && p.GetNamespace() != "":
		return PolicyVersion{}, violation(i, field+".namespace", "must be empty for a %s", p.GetKind())
	}
	return PolicyVersion{Kind: p.GetKind(), Namespace: p.GetNamespace(), Name: p.GetName(), Hash: p.GetContentHash(), Background: p.GetBackground()}, nil
}

func (c checker) checkEvaluation(i int, ev *verdictv1.ResourceEvaluation) (*evaluation, *verdictv1.PublishRejection) {
	res, rej := checkResource(i, "evaluation.resource", ev.GetResource())
	if rej != nil {
		return nil, rej
	}
	out := &evaluation{
		resource:        res,
		resourceVersion: ev.GetResourceVersion(),
		hash:            ev.GetResourceHash(),
		operation:       ev.GetOperation(),
		denied:          ev.GetDenied(),
		dryRun:          ev.GetDryRun(),
		complete:        ev.GetComplete(),
		raw:             ev,
	}
	switch ev.GetSource() {
	case verdictv1.ReportSource_REPORT_SOURCE_ADMISSION:
		out.source = SourceAdmission
	case verdictv1.ReportSource_REPORT_SOURCE_BACKGROUND:
		out.source = SourceBackground
	default:
		return nil, violation(i, "evaluation.source", "%v: want REPORT_SOURCE_ADMISSION or REPORT_SOURCE_BACKGROUND", ev.GetSource())
	}
	if out.time, rej = c.checkTime(i, "evaluation.time", ev.GetTime()); rej != nil {
		return nil, rej
	}
	byName := map[string]int{}
	for j, p := range ev.GetPolicies() {
		pv, rej := checkPolicyVersion(i, fmt.Sprintf("evaluation.policies[%d]", j), p)
		if rej != nil {
			return nil, rej
		}
		pv.Time = out.time
		byName[pv.Key()] = len(out.policies)
		out.policies = append(out.policies, pv)
	}
	out.results = make([]Entry, 0, len(ev.GetResults()))
	for j, r := range ev.GetResults() {
		field := fmt.Sprintf("evaluation.results[%d]", j)
		k := r.GetPolicy()
		if r.GetPolicyNamespace() != "" {
			k = r.GetPolicyNamespace() + "/" + k
		}
		result := r.GetResult().Name()
		if result == "" {
			return nil, violation(i, field+".result", "%v: want pass, fail, warn, error or skip", r.GetResult())
		}
		pj, ok := byName[k]
		if !ok || r.GetPolicy() == "" {
			return nil, violation(i, field+".policy", "%q is not listed in evaluation.policies", k)
		}
		// The validations of a ValidatingPolicy report an empty rule, as
		// in Kyverno.
		if r.GetRule() == "" && !policyKinds[out.policies[pj].Kind].unnamedRules {
			return nil, violation(i, field+".rule", "required")
		}
		out.results = append(out.results, Entry{
			Policy:     k,
			Rule:       r.GetRule(),
			Result:     result,
			Message:    r.GetMessage(),
			Category:   r.GetCategory(),
			Severity:   severity(r.GetSeverity()),
			Scored:     r.GetScored(),
			Properties: maps.Clone(r.GetProperties()),
		})
	}
	return out, nil
}

// severity keeps the severities the report schema allows.
func severity(s string) string {
	switch v := strings.ToLower(s); v {
	case "critical", "high", "medium", "low", "info":
		return v
	}
	return ""
}

func (c checker) checkScanDone(i int, s *verdictv1.BackgroundScanDone) (*scanDone, *verdictv1.PublishRejection) {
	started, rej := c.checkTime(i, "scan_done.started", s.GetStarted())
	if rej != nil {
		return nil, rej
	}
	if s.GetShardCount() > 0 && s.GetShardIndex() >= s.GetShardCount() {
		return nil, violation(i, "scan_done.shard_index", "%d: want less than shard_count %d", s.GetShardIndex(), s.GetShardCount())
	}
	out := &scanDone{
		started:    started,
		shardIndex: s.GetShardIndex(),
		shardCount: s.GetShardCount(),
		namespaces: set(s.GetNamespaces()),
		kinds:      set(s.GetKinds()),
		seen:       make(map[string]bool, len(s.GetSeen())),
	}
	for j, r := range s.GetSeen() {
		res, rej := checkResource(i, fmt.Sprintf("scan_done.seen[%d]", j), r)
		if rej != nil {
			return nil, rej
		}
		out.seen[res.Key()] = true
	}
	return out, nil
}

func set(xs []string) map[string]bool {
	if len(xs) == 0 {
		return nil
	}
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func (c checker) checkPolicySet(i int, s *verdictv1.PolicySet) (*PolicySet, *verdictv1.PublishRejection) {
	t, rej := c.checkTime(i, "policy_set.time", s.GetTime())
	if rej != nil {
		return nil, rej
	}
	if n := len(s.GetSender()); n > MaxSenderBytes {
		return nil, violation(i, "policy_set.sender", "%d bytes, more than %d", n, MaxSenderBytes)
	}
	out := &PolicySet{Sender: s.GetSender(), Time: t, stopping: s.GetStopping()}
	if out.stopping {
		return out, nil
	}
	for j, p := range s.GetPolicies() {
		pv, rej := checkPolicyVersion(i, fmt.Sprintf("policy_set.policies[%d].version", j), p.GetVersion())
		if rej != nil {
			return nil, rej
		}
		out.Policies = append(out.Policies, PolicyState{Version: pv, Rules: p.GetRules()})
	}
	out.index()
	return out, nil
}
