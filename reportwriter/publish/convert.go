package publish

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
	"github.com/verdict-policy/verdict/server"
)

var operations = map[string]verdictv1.Operation{
	"CREATE":  verdictv1.Operation_OPERATION_CREATE,
	"UPDATE":  verdictv1.Operation_OPERATION_UPDATE,
	"DELETE":  verdictv1.Operation_OPERATION_DELETE,
	"CONNECT": verdictv1.Operation_OPERATION_CONNECT,
}

// Item turns an evaluation of the decision server into a Publish item. It
// returns nil for what reports never hold: evaluations of inline policies
// (they are not the cluster's policies) and of objects without a kind or
// name.
func Item(ev server.Evaluation) *verdictv1.PublishItem {
	r := ev.Resource
	if ev.Inline || ev.Response == nil || r.Kind == "" || r.Name == "" || r.APIVersion == "" {
		return nil
	}
	out := &verdictv1.ResourceEvaluation{
		Resource: &verdictv1.ObjectReference{
			ApiVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Uid: r.UID,
		},
		ResourceVersion: r.ResourceVersion,
		Source:          verdictv1.ReportSource_REPORT_SOURCE_ADMISSION,
		Operation:       operations[ev.Operation],
		Time:            timestamppb.New(ev.Time),
		Policies:        ev.Response.GetPolicies(),
		Results:         ev.Response.GetResults(),
		Complete:        ev.AllPolicies,
	}
	if ev.Mode == verdictv1.Mode_MODE_BACKGROUND {
		out.Source = verdictv1.ReportSource_REPORT_SOURCE_BACKGROUND
	} else {
		out.Denied = !ev.Response.GetAllowed()
		out.DryRun = ev.DryRun
	}
	return &verdictv1.PublishItem{Item: &verdictv1.PublishItem_Evaluation{Evaluation: out}}
}

// Items converts a batch of evaluations (see Item).
func Items(evs []server.Evaluation) []*verdictv1.PublishItem {
	out := make([]*verdictv1.PublishItem, 0, len(evs))
	for _, ev := range evs {
		if it := Item(ev); it != nil {
			out = append(out, it)
		}
	}
	return out
}

// PolicyLister is the ListPolicies call of a decision server; the
// *server.Server and a DecisionServiceClient (with a bound context) both
// provide it.
type PolicyLister func(ctx context.Context, req *verdictv1.ListPoliciesRequest) (*verdictv1.ListPoliciesResponse, error)

// reportKinds are the policy kinds whose results reports hold.
var reportKinds = map[string]bool{
	reportwriter.KindClusterPolicy: true, reportwriter.KindPolicy: true,
	reportwriter.KindValidatingPolicy: true, reportwriter.KindNamespacedValidatingPolicy: true,
	reportwriter.KindValidatingAdmissionPolicy: true,
	reportwriter.KindImageValidatingPolicy:     true, reportwriter.KindNamespacedImageValidatingPolicy: true,
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
