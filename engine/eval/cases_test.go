package eval_test

import (
	"context"
	"testing"
	"time"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/cases"
	"github.com/verdict-policy/verdict/engine/eval"
)

// runCase evaluates a case of the corpus (engine/cases) with the engine.
func runCase(ctx context.Context, tc cases.Case) cases.Outcome {
	pols, err := tc.Policies()
	if err != nil {
		return cases.Outcome{Error: errorOf(err)}
	}
	req, err := tc.EvalRequest()
	if err != nil {
		return cases.Outcome{Error: errorOf(err)}
	}
	eng := eval.New(eval.Options{
		Lookup:     tc.Lookup(),
		Now:        func() time.Time { return cases.Now },
		CELData:    tc.Sources(),
		KyvernoCLI: tc.KyvernoCLI,
	})
	resp := eng.Evaluate(ctx, pols, req)
	out := cases.Outcome{Patched: resp.Patched, Patch: resp.Patch}
	for _, r := range resp.Results {
		out.Results = append(out.Results, cases.Result{Policy: r.Policy, Rule: r.Rule, Result: string(r.Status), Message: r.Message, Enforce: r.Enforce, Properties: r.Properties, Path: r.Path})
	}
	for _, g := range resp.Generated {
		out.Generated = append(out.Generated, cases.Generated{Rule: g.Rule, Action: string(g.Action), Object: g.Object, Source: g.Source})
	}
	for _, tp := range resp.Targets {
		out.Targets = append(out.Targets, tp.Patched)
	}
	return out
}

func errorOf(err error) *cases.Error {
	es := engine.As(err)
	if len(es) == 0 {
		return &cases.Error{Code: "not an engine error", Path: err.Error()}
	}
	return &cases.Error{Code: string(es[0].Code), Path: es[0].Path}
}

// TestCases runs the case corpus with the engine.
func TestCases(t *testing.T) {
	cases.Runner{Parallel: true}.Run(t, func(t *testing.T, tc cases.Case) cases.Outcome {
		return runCase(t.Context(), tc)
	})
}
