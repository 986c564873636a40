package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/scanner"
)

// The printer of scan before it streamed its results, kept as the
// reference of what printSink must print.

// writeScan prints the results of one scan.
func writeScanBefore(w io.Writer, format string, sum scanner.Summary, rescanned []string, results []scanner.Result) error {
	if format != "table" {
		return writeScanRawBefore(w, format, results)
	}
	what := "resource(s)"
	if len(rescanned) > 0 {
		what = fmt.Sprintf("resource(s) for the changed policies %v", rescanned)
	}
	return writeResultsBefore(w, fmt.Sprintf("Scanned %d %s in background mode (shard %s)...", sum.Resources, what, sum.Shard), sum, results)
}

// writeRound prints the results of one round of watched changes.
func writeRoundBefore(w io.Writer, format string, sum scanner.Summary, results []scanner.Result) error {
	if format != "table" {
		return writeScanRawBefore(w, format, results)
	}
	return writeResultsBefore(w, fmt.Sprintf("Watch: %d changed resource(s) evaluated, %d deleted (shard %s)...", sum.Resources, sum.Deleted, sum.Shard), sum, results)
}

// writeResults prints header, the failed rules of each resource, the
// deleted resources, the resources not evaluated and the counts.
func writeResultsBefore(w io.Writer, header string, sum scanner.Summary, results []scanner.Result) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "\n%s\n", header)
	var notEvaluated []string
	for _, r := range results {
		if r.Deleted {
			fmt.Fprintf(bw, "resource %s deleted\n", r.Resource)
			continue
		}
		if r.Err != nil {
			src := r.Source
			if src == "" {
				src = r.Resource.String()
			}
			notEvaluated = append(notEvaluated, fmt.Sprintf("%s (%s): %s", r.Resource, src, describe(r.Err)))
			continue
		}
		var policy string
		n := 0
		for _, rr := range r.Response.GetResults() {
			if rr.GetResult() != verdictv1.Result_RESULT_FAIL {
				continue
			}
			if name := rr.GetPolicy(); name != policy {
				policy, n = name, 0
				fmt.Fprintf(bw, "policy %s -> resource %s failed:\n", name, r.Resource)
			}
			n++
			msg := rr.GetMessage()
			if msg == "" {
				msg = "validation failed"
			}
			fmt.Fprintf(bw, "%d - %s %s\n", n, rr.GetRule(), msg)
		}
	}
	if len(notEvaluated) > 0 {
		fmt.Fprintf(bw, "\nnot evaluated: %d resource(s)\n", len(notEvaluated))
		for _, s := range notEvaluated {
			fmt.Fprintf(bw, "- %s\n", s)
		}
	}
	if sum.Mutated > 0 {
		fmt.Fprintf(bw, "\nmutateExisting: %d target(s) patched\n", sum.Mutated)
	}
	if sum.Generated > 0 {
		fmt.Fprintf(bw, "\ngenerateExisting: %d resource(s) applied for %d trigger(s)\n", sum.Generated, sum.Triggers)
	}
	fmt.Fprintf(bw, "\n%s\n", sum.Counts)
	return bw.Flush()
}

func writeScanRawBefore(w io.Writer, format string, results []scanner.Result) error {
	list := make([]scanRaw, 0, len(results))
	for _, r := range results {
		e := scanRaw{Resource: r.Resource.String(), APIVersion: r.Resource.APIVersion, UID: r.Resource.UID, Source: r.Source}
		switch {
		case r.Deleted:
			e.Deleted = true
		case r.Err != nil:
			e.Error = describe(r.Err)
		default:
			b, err := protojson.Marshal(r.Response)
			if err != nil {
				return fmt.Errorf("encode response: %w", err)
			}
			e.Response = b
		}
		list = append(list, e)
	}
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if format == "yaml" {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return fmt.Errorf("encode results: %w", err)
		}
	} else {
		b = append(b, '\n')
	}
	_, err = w.Write(b)
	return err
}

// scanResults are results of every kind: evaluated (failures of several
// policies, with and without message), not evaluated, deleted.
func scanResults(n int) []scanner.Result {
	var out []scanner.Result
	for i := range n {
		ref := scanner.ResourceRef{APIVersion: "v1", Kind: "Pod", Namespace: "ns", Name: fmt.Sprintf("p%d", i), UID: fmt.Sprintf("uid-%d", i)}
		r := scanner.Result{Resource: ref, Source: fmt.Sprintf("pods.yaml:%d", 1+9*i), AllPolicies: true}
		switch i % 5 {
		case 3:
			r.Err = status.Error(codes.InvalidArgument, "bad <resource> & \"quote\"")
		case 4:
			r.Deleted, r.Source = true, ""
		default:
			r.Response = &verdictv1.EvaluateResponse{Results: []*verdictv1.RuleResult{
				{Policy: "a", Rule: "r1", Result: verdictv1.Result_RESULT_FAIL, Message: "no <latest> tag: a very long message that goes on and on past eighty characters for YAML to fold it maybe"},
				{Policy: "a", Rule: "r2", Result: verdictv1.Result_RESULT_FAIL},
				{Policy: "b", Rule: "r1", Result: verdictv1.Result_RESULT_PASS},
				{Policy: "c", Rule: "r1", Result: verdictv1.Result_RESULT_FAIL, Message: "x: y\nz"},
			}}
		}
		out = append(out, r)
	}
	return out
}

func TestPrintSinkPrintsAsBefore(t *testing.T) {
	sum := scanner.Summary{Shard: scanner.Shard{Index: 0, Count: 1}, Resources: 40, Failed: 8, Counts: scanner.Counts{Pass: 3, Fail: 9}, Mutated: 2, Generated: 3, Triggers: 1}
	for _, format := range []string{"table", "json", "yaml"} {
		for _, n := range []int{0, 1, 7, 40} {
			for _, memory := range []int{0, 64} {
				results := scanResults(n)
				var want bytes.Buffer
				if err := writeScanBefore(&want, format, sum, []string{"x"}, results); err != nil {
					t.Fatal(err)
				}
				p := &printSink{format: format}
				p.body.Memory, p.notEvaluated.Memory = memory, memory
				for i := 0; i < len(results); i += 3 { // in the sink's batches
					if err := p.Write(context.Background(), results[i:min(i+3, len(results))]); err != nil {
						t.Fatal(err)
					}
				}
				var got bytes.Buffer
				if err := p.print(&got, scanHeader(sum, []string{"x"}), sum); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want.String(), got.String()); diff != "" {
					t.Errorf("printSink(%s, %d results, memory %d) mismatch (-want +got):\n%s", format, n, memory, diff)
				}
				var round, roundWant bytes.Buffer // after a print, it starts empty
				if err := p.print(&round, roundHeader(sum), sum); err != nil {
					t.Fatal(err)
				}
				if err := writeRoundBefore(&roundWant, format, sum, nil); err != nil {
					t.Fatal(err)
				}
				if round.String() != roundWant.String() {
					t.Errorf("printSink(%s) second print = %q, want %q", format, round.String(), roundWant.String())
				}
				p.Close()
			}
		}
	}
}
