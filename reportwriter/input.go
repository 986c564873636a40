package reportwriter

import (
	"fmt"
	"maps"
	"strings"
	"time"

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

// PolicySet is the latest set of policies a sender reported.
type PolicySet struct {
	Time     time.Time      `json:"time"`
	Policies []PolicyState  `json:"policies"`
	byKey    map[string]int // index into Policies
}

// PolicyState is one policy of a PolicySet.
type PolicyState struct {
	Version PolicyVersion `json:"version"`
	Rules   []string      `json:"rules"`
}

func (s *PolicySet) index() {
	s.byKey = make(map[string]int, len(s.Policies))
	for i, p := range s.Policies {
		s.byKey[p.Version.Key()] = i
	}
}

func (s *PolicySet) get(key string) (*PolicyState, bool) {
	if s.byKey == nil {
		s.index()
	}
	i, ok := s.byKey[key]
	if !ok {
		return nil, false
	}
	return &s.Policies[i], true
}

func (p *PolicyState) hasRule(rule string) bool {
	for _, r := range p.Rules {
		if r == rule {
			return true
		}
	}
	return false
}

// item is one checked PublishItem: exactly one field is set.
type item struct {
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

// checkItems converts the items of a batch, and lists those that are not
// valid.
func checkItems(items []*verdictv1.PublishItem) ([]item, []*verdictv1.PublishRejection) {
	out := make([]item, 0, len(items))
	var bad []*verdictv1.PublishRejection
	for i, it := range items {
		var (
			x   item
			rej *verdictv1.PublishRejection
		)
		switch {
		case it.GetEvaluation() != nil:
			x.eval, rej = checkEvaluation(i, it.GetEvaluation())
		case it.GetScanDone() != nil:
			x.scan, rej = checkScanDone(i, it.GetScanDone())
		case it.GetPolicySet() != nil:
			x.policy, rej = checkPolicySet(i, it.GetPolicySet())
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
	case p.GetKind() != "ClusterPolicy" && p.GetKind() != "Policy":
		return PolicyVersion{}, violation(i, field+".kind", "%q: want ClusterPolicy or Policy", p.GetKind())
	case p.GetKind() == "Policy" && p.GetNamespace() == "":
		return PolicyVersion{}, violation(i, field+".namespace", "required for a Policy")
	case p.GetKind() == "ClusterPolicy" && p.GetNamespace() != "":
		return PolicyVersion{}, violation(i, field+".namespace", "must be empty for a ClusterPolicy")
	}
	return PolicyVersion{Kind: p.GetKind(), Namespace: p.GetNamespace(), Name: p.GetName(), Hash: p.GetContentHash(), Background: p.GetBackground()}, nil
}

var resultNames = map[verdictv1.Result]string{
	verdictv1.Result_RESULT_PASS:  "pass",
	verdictv1.Result_RESULT_FAIL:  "fail",
	verdictv1.Result_RESULT_WARN:  "warn",
	verdictv1.Result_RESULT_ERROR: "error",
	verdictv1.Result_RESULT_SKIP:  "skip",
}

func checkEvaluation(i int, ev *verdictv1.ResourceEvaluation) (*evaluation, *verdictv1.PublishRejection) {
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
	}
	switch ev.GetSource() {
	case verdictv1.ReportSource_REPORT_SOURCE_ADMISSION:
		out.source = SourceAdmission
	case verdictv1.ReportSource_REPORT_SOURCE_BACKGROUND:
		out.source = SourceBackground
	default:
		return nil, violation(i, "evaluation.source", "%v: want REPORT_SOURCE_ADMISSION or REPORT_SOURCE_BACKGROUND", ev.GetSource())
	}
	if ev.GetTime() == nil || !ev.GetTime().IsValid() || ev.GetTime().AsTime().IsZero() {
		return nil, violation(i, "evaluation.time", "required")
	}
	out.time = ev.GetTime().AsTime()
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
		if r.GetRule() == "" {
			return nil, violation(i, field+".rule", "required")
		}
		result, ok := resultNames[r.GetResult()]
		if !ok {
			return nil, violation(i, field+".result", "%v: want pass, fail, warn, error or skip", r.GetResult())
		}
		k := r.GetPolicy()
		if r.GetPolicyNamespace() != "" {
			k = r.GetPolicyNamespace() + "/" + k
		}
		if _, ok := byName[k]; !ok || r.GetPolicy() == "" {
			return nil, violation(i, field+".policy", "%q is not listed in evaluation.policies", k)
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

func checkScanDone(i int, s *verdictv1.BackgroundScanDone) (*scanDone, *verdictv1.PublishRejection) {
	if s.GetStarted() == nil || !s.GetStarted().IsValid() || s.GetStarted().AsTime().IsZero() {
		return nil, violation(i, "scan_done.started", "required")
	}
	if s.GetShardCount() > 0 && s.GetShardIndex() >= s.GetShardCount() {
		return nil, violation(i, "scan_done.shard_index", "%d: want less than shard_count %d", s.GetShardIndex(), s.GetShardCount())
	}
	out := &scanDone{
		started:    s.GetStarted().AsTime(),
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

func checkPolicySet(i int, s *verdictv1.PolicySet) (*PolicySet, *verdictv1.PublishRejection) {
	if s.GetTime() == nil || !s.GetTime().IsValid() || s.GetTime().AsTime().IsZero() {
		return nil, violation(i, "policy_set.time", "required")
	}
	out := &PolicySet{Time: s.GetTime().AsTime()}
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
