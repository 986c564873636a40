package reportwriter_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/publish"
)

// BenchmarkPublish measures evaluations through a Publisher, Publish on a
// loopback gRPC stream, the writer and a bbolt file: one op is one
// background evaluation of a Pod against 17 single-rule policies (17
// entries), Pods spread over 50 namespaces.
func BenchmarkPublish(b *testing.B) {
	const policies, namespaces = 17, 50
	var pols []pol
	var vers []*verdictv1.PolicyVersion
	for i := range policies {
		p := pol{fmt.Sprintf("pss-%02d", i), fmt.Sprintf("hash-%02d", i), true, "Pod Security Standards (Baseline)", "medium"}
		pols = append(pols, p)
		vers = append(vers, p.version())
	}
	results := make([]*verdictv1.RuleResult, policies)
	for i, p := range pols {
		r := pass
		if i%5 == 0 {
			r = fail
		}
		results[i] = rr(p, "check", r, "validation rule 'check' passed.")
	}
	e := startWriterB(b)
	p, err := publish.New(e.conn, publish.Options{Window: 8, MaxBatchItems: 100})
	if err != nil {
		b.Fatal(err)
	}
	items := make([]*verdictv1.PublishItem, b.N)
	for i := range items {
		items[i] = &verdictv1.PublishItem{Item: &verdictv1.PublishItem_Evaluation{Evaluation: &verdictv1.ResourceEvaluation{
			Resource: &verdictv1.ObjectReference{ApiVersion: "v1", Kind: "Pod", Namespace: fmt.Sprintf("ns-%02d", i%namespaces), Name: fmt.Sprintf("pod-%d", i), Uid: fmt.Sprintf("uid-%d", i)},
			Source:   verdictv1.ReportSource_REPORT_SOURCE_BACKGROUND,
			Time:     at(0),
			Policies: vers,
			Results:  results,
			Complete: true,
		}}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	if err := p.Publish(ctx, items...); err != nil {
		b.Fatal(err)
	}
	if err := p.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	if err := e.writer.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*policies)/time.Since(start).Seconds(), "entries/s")
	p.Close(ctx)
}
