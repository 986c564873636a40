package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vap"
	"github.com/verdict-policy/verdict/engine/vpol"
	"github.com/verdict-policy/verdict/internal/streamrecv"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/publish"
)

// Evaluate implements verdictv1.DecisionServiceServer. The request was
// validated by the interceptor chain. The request's bytes must not change
// once it is handed over (gRPC decodes each request into its own): the
// decoded object's strings share them, and the result sink may hold them
// after the call.
func (s *Server) Evaluate(ctx context.Context, req *verdictv1.EvaluateRequest) (*verdictv1.EvaluateResponse, error) {
	resp, err := s.evaluate(ctx, req)
	if err != nil {
		return nil, toStatus(err)
	}
	return resp, nil
}

// evaluate decides one validated request.
func (s *Server) evaluate(ctx context.Context, req *verdictv1.EvaluateRequest) (*verdictv1.EvaluateResponse, error) {
	if s.opts.evalHook != nil {
		s.opts.evalHook(req)
	}
	if s.slots != nil {
		var sl *slot
		var err error
		if ctx, sl, err = s.slots.acquire(ctx); err != nil {
			return nil, err
		}
		defer sl.done()
		if s.opts.slotHook != nil {
			s.opts.slotHook(req)
		}
	}
	er, err := requestFromProto(req)
	if err != nil {
		return nil, err
	}
	ctx = withEvalState(ctx, req.GetInlinePolicies() != nil)
	policies, force, err := s.policiesFor(ctx, req)
	if err != nil {
		return nil, err
	}
	if req.GetInlinePolicies() != nil && !s.opts.ImageVerifyInlinePolicies && slices.ContainsFunc(policies, func(p *policy.Policy) bool { return p.ImageValidating != nil }) {
		if st, ok := ctx.Value(evalStateKey{}).(*evalState); ok {
			st.noImages = true
		}
	}
	if er.Mode == eval.Admission {
		policies = admissionPolicies(policies)
	}
	er.Exceptions, er.CELExceptions, er.VAPBindings = force.exceptions, force.celExceptions, force.vapBindings
	start := time.Now()
	res := s.runEngine(ctx, policies, er)
	elapsed := time.Since(start)
	if err := ctx.Err(); err != nil {
		// The engine stops early on a done context: the results are
		// incomplete.
		return nil, err
	}
	groups := groupResults(policies, res.Results)
	resp, err := responseToProto(er, groups, res)
	if err != nil {
		return nil, err
	}
	s.metrics.countResults(er, groups, req.GetInlinePolicies() != nil, elapsed)
	// Replays of existing triggers (generateExisting, mutateExisting) are
	// not scan results: the scanner reports the trigger's own evaluation.
	if s.opts.Reports != nil && !er.GenerateExisting && !er.MutateExisting && !req.GetSkipReport() {
		s.report(publish.Evaluation{
			Time:       time.Now(),
			Resource:   resourceRef(er.Object, er.OldObject),
			Background: req.GetMode() == verdictv1.Mode_MODE_BACKGROUND,
			Operation:  er.Operation,
			DryRun:     er.DryRun,
			Complete:   req.GetPolicies() == nil,
			Inline:     req.GetInlinePolicies() != nil,
			Response:   resp,
		})
	}
	return resp, nil
}

// admissionPolicies returns policies without the MutatingPolicies that
// have targetMatchConstraints: Kyverno's webhook skips them at admission
// (mpolengine.NoTargetMatchConstraintPolicy); they mutate existing
// resources only. It returns policies itself when none is dropped.
func admissionPolicies(policies []*policy.Policy) []*policy.Policy {
	drop := func(p *policy.Policy) bool {
		if p.Mutating == nil {
			return false
		}
		tmc := p.Mutating.Document().Spec.TargetMatchConstraints
		return tmc != nil && (len(tmc.ResourceRules) > 0 || tmc.Expression != "")
	}
	if !slices.ContainsFunc(policies, drop) {
		return policies
	}
	return slices.DeleteFunc(slices.Clone(policies), drop)
}

// inForce are the PolicyExceptions (of both groups) and the
// ValidatingAdmissionPolicyBindings in force for one request.
type inForce struct {
	exceptions    []*policy.Exception
	celExceptions []*vpol.Exception
	vapBindings   []*vap.Binding
}

// policiesFor returns the policies a request evaluates and what is in
// force for them: the server's exceptions and bindings, and for inline
// policies the exceptions sent with them too.
func (s *Server) policiesFor(ctx context.Context, req *verdictv1.EvaluateRequest) ([]*policy.Policy, inForce, error) {
	set := s.store.current()
	force := inForce{exceptions: set.exceptions, celExceptions: set.celExceptions, vapBindings: set.vapBindings}
	if in := req.GetInlinePolicies(); in != nil {
		got, err := s.store.inline(ctx, in.GetDocuments())
		if err != nil {
			return nil, inForce{}, err
		}
		if len(got.exceptions) > 0 {
			force.exceptions = slices.Concat(force.exceptions, got.exceptions)
		}
		if len(got.celExceptions) > 0 {
			force.celExceptions = slices.Concat(force.celExceptions, got.celExceptions)
		}
		return got.policies, force, nil
	}
	select {
	case <-s.store.Ready():
	default:
		return nil, inForce{}, errNotReady
	}
	ps, err := set.selectPolicies(req.GetPolicySelector())
	return ps, force, err
}

// EvaluateStream implements verdictv1.DecisionServiceServer: it answers
// each batch in order. One goroutine reads ahead at most one batch while
// the current one is evaluated, so a fast client is held back by gRPC flow
// control; another sends the answers, so that a batch is evaluated while
// the answer to the one before it is marshalled and sent. When the server
// shuts down, the stream ends with UNAVAILABLE after the batch in progress
// is answered; the client resends the batches it got no answer for.
func (s *Server) EvaluateStream(stream verdictv1.DecisionService_EvaluateStreamServer) error {
	ctx := stream.Context()
	batches, recvErr := streamrecv.Start(ctx, stream.Recv)
	answers := make(chan *verdictv1.EvaluateStreamResponse, 1)
	sendFailed := make(chan struct{})
	sendErr := make(chan error, 1)
	go func() {
		var err error
		for a := range answers {
			if err != nil {
				continue
			}
			if err = stream.Send(a); err != nil {
				close(sendFailed)
			}
		}
		sendErr <- err
	}()
	// finish ends the stream with err once the answers queued so far are
	// sent (the handler must not return while the stream is in use), or
	// with the error of sending them.
	finish := func(err error) error {
		close(answers)
		if e := <-sendErr; err == nil {
			err = e
		}
		return err
	}
	for {
		select {
		case <-s.draining:
			return finish(toStatus(errShuttingDown))
		default:
		}
		select {
		case <-s.draining:
			return finish(toStatus(errShuttingDown))
		case <-ctx.Done():
			return finish(toStatus(ctx.Err()))
		case <-sendFailed:
			return finish(nil)
		case err := <-recvErr:
			if errors.Is(err, io.EOF) {
				return finish(nil)
			}
			return finish(err)
		case b := <-batches:
			if n := len(b.GetItems()); n > s.opts.MaxBatchSize {
				return finish(toStatus(&limitError{field: "items", description: fmt.Sprintf("%d requests in one batch; the limit is %d", n, s.opts.MaxBatchSize)}))
			}
			a := s.evaluateBatch(ctx, b.GetItems())
			if b.GetSharedPolicyVersions() {
				sharePolicyVersions(a)
			}
			select {
			case answers <- a:
			case <-sendFailed:
				return finish(nil)
			case <-ctx.Done():
				return finish(toStatus(ctx.Err()))
			}
		}
	}
}

// evaluateBatch evaluates the items of a batch, StreamWorkers at a time,
// within CallTimeout.
func (s *Server) evaluateBatch(ctx context.Context, items []*verdictv1.EvaluateStreamItem) *verdictv1.EvaluateStreamResponse {
	ctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
	defer cancel()
	out := &verdictv1.EvaluateStreamResponse{Results: make([]*verdictv1.EvaluateStreamResult, len(items))}
	workers := min(s.opts.StreamWorkers, len(items))
	if workers <= 1 {
		for i, it := range items {
			out.Results[i] = s.evaluateItem(ctx, i, it)
		}
		return out
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(items) {
					return
				}
				out.Results[i] = s.evaluateItem(ctx, i, items[i])
			}
		}()
	}
	wg.Wait()
	return out
}

// evaluateItem evaluates one item of a batch. A bad request or a panic
// becomes the item's error; the stream goes on.
func (s *Server) evaluateItem(ctx context.Context, i int, it *verdictv1.EvaluateStreamItem) (res *verdictv1.EvaluateStreamResult) {
	res = &verdictv1.EvaluateStreamResult{Id: it.GetId()}
	// The field prefix of the item's errors, built only for an error.
	prefix := func() string { return fmt.Sprintf("items[%d].request.", i) }
	defer func() {
		if p := recover(); p != nil {
			s.log.ErrorContext(ctx, "panic in stream item", "panic", p, "id", it.GetId(), "stack", string(debug.Stack()))
			res.Outcome = &verdictv1.EvaluateStreamResult_Error{Error: itemError(status.Error(codes.Internal, "internal error"), prefix())}
		}
	}()
	req := it.GetRequest()
	if req == nil {
		res.Outcome = &verdictv1.EvaluateStreamResult_Error{Error: itemError(fieldError("request", "required"), fmt.Sprintf("items[%d].", i))}
		return res
	}
	err := req.Validate()
	var resp *verdictv1.EvaluateResponse
	if err == nil {
		resp, err = s.evaluate(ctx, req)
	}
	if err != nil {
		res.Outcome = &verdictv1.EvaluateStreamResult_Error{Error: itemError(err, prefix())}
		return res
	}
	res.Outcome = &verdictv1.EvaluateStreamResult_Response{Response: resp}
	return res
}

// ListPolicies implements verdictv1.DecisionServiceServer.
func (s *Server) ListPolicies(context.Context, *verdictv1.ListPoliciesRequest) (*verdictv1.ListPoliciesResponse, error) {
	set := s.store.current()
	resp := &verdictv1.ListPoliciesResponse{
		Policies:     make([]*verdictv1.PolicyInfo, len(set.entries)),
		SourceErrors: set.sourceErrors,
	}
	for i, e := range set.entries {
		resp.Policies[i] = e.info()
	}
	return resp, nil
}

// GetPolicy implements verdictv1.DecisionServiceServer.
func (s *Server) GetPolicy(_ context.Context, req *verdictv1.GetPolicyRequest) (*verdictv1.GetPolicyResponse, error) {
	e := s.store.current().byKey[policyKey(req.GetNamespace(), req.GetName())]
	if e == nil {
		return nil, toStatus(&notFoundError{violations: []*verdictv1.FieldViolation{{
			Field:       "name",
			Description: fmt.Sprintf("the server holds no policy %q", policyKey(req.GetNamespace(), req.GetName())),
			Reason:      reasonNotFound,
		}}})
	}
	doc := e.servedJSON
	if doc == nil {
		doc = e.json
	}
	return &verdictv1.GetPolicyResponse{Policy: e.info(), Document: doc}, nil
}

// resourceRef identifies obj (or old, when obj is empty).
func resourceRef(obj, old map[string]any) publish.Resource {
	if len(obj) == 0 {
		obj = old
	}
	var r publish.Resource
	r.APIVersion, _ = obj["apiVersion"].(string)
	r.Kind, _ = obj["kind"].(string)
	if meta, ok := obj["metadata"].(map[string]any); ok {
		r.Namespace, _ = meta["namespace"].(string)
		r.Name, _ = meta["name"].(string)
		r.UID, _ = meta["uid"].(string)
		r.ResourceVersion, _ = meta["resourceVersion"].(string)
	}
	return r
}

// sharePolicyVersions rewrites the answer to a batch sent with
// shared_policy_versions: each version once in the answer's policies, and
// each item's response with policy_indexes instead of policies. The
// responses themselves are not changed (the result sink holds them): an
// item gets a copy that shares everything else with its response.
func sharePolicyVersions(a *verdictv1.EvaluateStreamResponse) {
	// Responses share the message of each policy version (versionOf): a
	// version is found by its pointer. (Should the cache be emptied during
	// the batch, a version may be listed twice, which changes nothing.)
	index := map[*verdictv1.PolicyVersion]uint32{}
	for _, r := range a.GetResults() {
		o, ok := r.GetOutcome().(*verdictv1.EvaluateStreamResult_Response)
		if !ok || o.Response == nil {
			continue
		}
		versions := o.Response.GetPolicies()
		idx := make([]uint32, len(versions))
		for j, v := range versions {
			i, found := index[v]
			if !found {
				i = uint32(len(a.Policies))
				index[v] = i
				a.Policies = append(a.Policies, v)
			}
			idx[j] = i
		}
		r.Outcome = &verdictv1.EvaluateStreamResult_Response{Response: withPolicyIndexes(o.Response, idx)}
	}
}

// withPolicyIndexes returns a copy of r with policy_indexes idx and no
// policies; the copy shares r's fields (TestWithPolicyIndexes checks that
// every field is copied).
func withPolicyIndexes(r *verdictv1.EvaluateResponse, idx []uint32) *verdictv1.EvaluateResponse {
	return &verdictv1.EvaluateResponse{
		Allowed:          r.GetAllowed(),
		Message:          r.GetMessage(),
		Results:          r.GetResults(),
		JsonPatch:        r.GetJsonPatch(),
		Warnings:         r.GetWarnings(),
		Generates:        r.GetGenerates(),
		PolicyIndexes:    idx,
		GenerateFailures: r.GetGenerateFailures(),
		TargetPatches:    r.GetTargetPatches(),
	}
}
