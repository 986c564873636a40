package server

import (
	"slices"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/verdict-policy/verdict/client"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// TestTracing checks that a traced client's call continues on the server:
// the server's call span and its engine span share the client's trace.
func TestTracing(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	_, src := policyFolder(t, map[string]string{"ns.yaml": nsPurposePolicy})
	ts := startServer(t, Options{Sources: []PolicySource{src}, TracerProvider: tp})
	waitServing(t, dial(t, ts.addr))

	c, err := client.Dial(ts.addr, client.Options{TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ns := mustJSON(t, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "dev"}})
	if _, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{Object: ns}); err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	if err := tp.ForceFlush(t.Context()); err != nil {
		t.Fatal(err)
	}

	byName := map[string]sdktrace.ReadOnlySpan{}
	var names []string
	for _, s := range spans.Ended() {
		byName[s.Name()+"/"+s.SpanKind().String()] = s
		names = append(names, s.Name()+"/"+s.SpanKind().String())
	}
	clientSpan, ok1 := byName["verdict.v1.DecisionService/Evaluate/client"]
	serverSpan, ok2 := byName["verdict.v1.DecisionService/Evaluate/server"]
	engineSpan, ok3 := byName["verdict.evaluate/internal"]
	if !ok1 || !ok2 || !ok3 {
		slices.Sort(names)
		t.Fatalf("spans = %v, want the client and server spans of Evaluate and verdict.evaluate", names)
	}
	trace := clientSpan.SpanContext().TraceID()
	for _, s := range []sdktrace.ReadOnlySpan{serverSpan, engineSpan} {
		if got := s.SpanContext().TraceID(); got != trace {
			t.Errorf("span %s trace = %s, want the client's %s", s.Name(), got, trace)
		}
	}
	if got, want := engineSpan.Parent().SpanID(), serverSpan.SpanContext().SpanID(); got != want {
		t.Errorf("verdict.evaluate parent = %s, want the server span %s", got, want)
	}
	attrs := map[string]int64{}
	for _, a := range engineSpan.Attributes() {
		attrs[string(a.Key)] = a.Value.AsInt64()
	}
	if attrs["verdict.policies"] != 1 || attrs["verdict.results.fail"] != 1 {
		t.Errorf("verdict.evaluate attributes = %v, want 1 policy and 1 fail", attrs)
	}
}
