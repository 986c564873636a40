package publish

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/verdict-policy/verdict/engine/ivpol"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/vap"
	"github.com/verdict-policy/verdict/engine/vpol"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// Evaluation is one evaluated resource, as the report writer takes it: a
// request the decision server answered (admission, or background from a
// caller of its own), or a resource of a background scan.
type Evaluation struct {
	// Resource identifies the evaluated object (the old object for a
	// DELETE).
	Resource Resource
	// Background is true for a background evaluation (a scan, or a call
	// in background mode), false for an admission request.
	Background bool
	// Operation is CREATE, UPDATE, DELETE or CONNECT (admission).
	Operation string
	// DryRun is the admission request's dry_run flag.
	DryRun bool
	// Time is when the evaluation finished.
	Time time.Time
	// Complete is true when every policy of the server was evaluated (no
	// policy selector, not a policy rescan): a policy without results has
	// none for the resource.
	Complete bool
	// Inline is true when the request carried its own policies: they are
	// not the cluster's, and reports never hold their results.
	Inline bool
	// Deleted is true when a scanner's watch saw the resource deleted:
	// every entry of the resource goes (Response is ignored).
	Deleted bool
	// Response is the decision server's answer. The item shares its
	// results and policies: neither may be modified afterwards.
	Response *verdictv1.EvaluateResponse
}

// Resource identifies a Kubernetes object.
type Resource struct {
	APIVersion, Kind, Namespace, Name, UID, ResourceVersion string
}

func (r Resource) ref() *verdictv1.ObjectReference {
	return &verdictv1.ObjectReference{ApiVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Uid: r.UID}
}

var operations = map[string]verdictv1.Operation{
	"CREATE":  verdictv1.Operation_OPERATION_CREATE,
	"UPDATE":  verdictv1.Operation_OPERATION_UPDATE,
	"DELETE":  verdictv1.Operation_OPERATION_DELETE,
	"CONNECT": verdictv1.Operation_OPERATION_CONNECT,
}

// Item is the one builder of the report path: it turns an evaluation into
// a Publish item. It returns nil for what reports never hold: evaluations
// of inline policies, evaluations without an answer (a resource the
// server could not evaluate), and objects without an apiVersion, kind or
// name.
func Item(ev Evaluation) *verdictv1.PublishItem {
	r := ev.Resource
	if ev.Inline || r.Kind == "" || r.Name == "" || r.APIVersion == "" {
		return nil
	}
	out := &verdictv1.ResourceEvaluation{
		Resource: r.ref(),
		Source:   verdictv1.ReportSource_REPORT_SOURCE_ADMISSION,
		Time:     timestamppb.New(ev.Time),
	}
	if ev.Background {
		out.Source = verdictv1.ReportSource_REPORT_SOURCE_BACKGROUND
	}
	switch {
	case ev.Deleted:
		// Every entry of the resource goes.
		out.Operation = verdictv1.Operation_OPERATION_DELETE
	case ev.Response == nil:
		return nil
	default:
		out.ResourceVersion = r.ResourceVersion
		out.Operation = operations[ev.Operation]
		out.Policies = ev.Response.GetPolicies()
		out.Results = ev.Response.GetResults()
		out.Complete = ev.Complete
		if !ev.Background {
			out.Denied = !ev.Response.GetAllowed()
			out.DryRun = ev.DryRun
		}
	}
	return &verdictv1.PublishItem{Item: &verdictv1.PublishItem_Evaluation{Evaluation: out}}
}

// ScanDone is the end of a background scan of a shard (see
// verdictv1.BackgroundScanDone).
type ScanDone struct {
	// Started is when the scan began.
	Started time.Time
	// ShardIndex of ShardCount is the scope of the scan.
	ShardIndex, ShardCount int
	// Kinds are the kinds the scan listed completely.
	Kinds []string
	// Seen are the resources the scan saw.
	Seen []Resource
}

// Item is the BackgroundScanDone item of d.
func (d ScanDone) Item() *verdictv1.PublishItem {
	done := &verdictv1.BackgroundScanDone{
		Started:    timestamppb.New(d.Started),
		ShardIndex: uint32(d.ShardIndex),
		ShardCount: uint32(d.ShardCount),
		Kinds:      d.Kinds,
	}
	for _, r := range d.Seen {
		done.Seen = append(done.Seen, r.ref())
	}
	return &verdictv1.PublishItem{Item: &verdictv1.PublishItem_ScanDone{ScanDone: done}}
}

// PolicyLister is the ListPolicies call of a decision server; the
// *server.Server and a DecisionServiceClient (with a bound context) both
// provide it.
type PolicyLister func(ctx context.Context, req *verdictv1.ListPoliciesRequest) (*verdictv1.ListPoliciesResponse, error)

// reportKinds are the policy kinds whose results reports hold.
var reportKinds = map[string]bool{
	kyverno.KindClusterPolicy: true, kyverno.KindPolicy: true,
	vpol.KindValidatingPolicy: true, vpol.KindNamespacedValidatingPolicy: true,
	ivpol.KindImageValidatingPolicy: true, ivpol.KindNamespacedImageValidatingPolicy: true,
	vap.KindPolicy: true,
}

// PolicySet reads the policies in use from a decision server and returns
// them as a PolicySet item, timed now. Policies that are not ready (never
// compiled) are left out; PolicyExceptions are not policies of reports.
func PolicySet(ctx context.Context, list PolicyLister, now func() *timestamppb.Timestamp) (*verdictv1.PublishItem, error) {
	resp, err := list(ctx, &verdictv1.ListPoliciesRequest{})
	if err != nil {
		return nil, fmt.Errorf("list policies: %w", err)
	}
	ps := &verdictv1.PolicySet{Time: now()}
	for _, p := range resp.GetPolicies() {
		if !p.GetReady() || !reportKinds[p.GetKind()] {
			continue
		}
		ps.Policies = append(ps.Policies, &verdictv1.PolicyState{
			Version: &verdictv1.PolicyVersion{
				Kind: p.GetKind(), Namespace: p.GetNamespace(), Name: p.GetName(),
				ContentHash: p.GetContentHash(), Background: p.GetBackground(),
			},
			Rules: p.GetRules(),
		})
	}
	return &verdictv1.PublishItem{Item: &verdictv1.PublishItem_PolicySet{PolicySet: ps}}, nil
}

// samePolicies reports whether two PolicySet items list the same policies
// (their times aside).
func samePolicies(a, b *verdictv1.PublishItem) bool {
	if a == nil || b == nil {
		return a == b
	}
	return proto.Equal(&verdictv1.PolicySet{Policies: a.GetPolicySet().GetPolicies()}, &verdictv1.PolicySet{Policies: b.GetPolicySet().GetPolicies()})
}
