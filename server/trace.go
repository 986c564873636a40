package server

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/policy"
)

// tracerName names the spans the server starts itself.
const tracerName = "github.com/verdict-policy/verdict/server"

// runEngine evaluates the request, in a span "verdict.evaluate" when
// tracing is on: the span says how many policies ran and how many rule
// results came out, by result.
func (s *Server) runEngine(ctx context.Context, policies []*policy.Policy, req *eval.Request) *eval.Response {
	if s.opts.TracerProvider == nil {
		return s.engine.Evaluate(ctx, policies, req)
	}
	ctx, span := s.opts.TracerProvider.Tracer(tracerName).Start(ctx, "verdict.evaluate", trace.WithAttributes(
		attribute.String("verdict.operation", req.Operation),
		attribute.Int("verdict.policies", len(policies)),
	))
	defer span.End()
	res := s.engine.Evaluate(ctx, policies, req)
	counts := map[eval.Status]int{}
	for _, r := range res.Results {
		counts[r.Status]++
	}
	span.SetAttributes(
		attribute.Int("verdict.results.pass", counts[eval.StatusPass]),
		attribute.Int("verdict.results.fail", counts[eval.StatusFail]),
		attribute.Int("verdict.results.warn", counts[eval.StatusWarn]),
		attribute.Int("verdict.results.error", counts[eval.StatusError]),
		attribute.Int("verdict.results.skip", counts[eval.StatusSkip]),
	)
	return res
}
