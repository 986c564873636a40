package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/internal/spool"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/scanner"
)

// printSink prints the results of a scan like verdict apply: the header
// (with the number of resources), the failed rules of each resource, the
// deleted resources, the resources not evaluated and the counts; or, with
// -o json or yaml, every result. It writes each result as it comes into a
// spool (internal/spool: memory, then a temporary file) and prints the
// spools when the scan ends, so that its memory does not grow with the
// number of resources.
type printSink struct {
	format string // table, yaml or json

	mu sync.Mutex
	// body holds the failed rules and deleted resources (table), or the
	// entries (json, yaml); notEvaluated the lines of the resources the
	// server could not evaluate.
	body, notEvaluated spool.Spool
	entries, failed    int
}

func (p *printSink) Write(_ context.Context, rs []scanner.Result) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.format != "table" {
		return p.writeRaw(rs)
	}
	bw := bufio.NewWriter(&p.body)
	for _, r := range rs {
		if r.Deleted {
			fmt.Fprintf(bw, "resource %s deleted\n", r.Resource)
			continue
		}
		if r.Err != nil {
			src := r.Source
			if src == "" {
				src = r.Resource.String()
			}
			p.failed++
			if _, err := fmt.Fprintf(&p.notEvaluated, "- %s (%s): %s\n", r.Resource, src, describe(r.Err)); err != nil {
				return err
			}
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
	return bw.Flush()
}

// scanRaw is one entry of -o json / -o yaml.
type scanRaw struct {
	Resource   string          `json:"resource"`
	APIVersion string          `json:"apiVersion"`
	UID        string          `json:"uid,omitempty"`
	Source     string          `json:"source,omitempty"`
	Response   json.RawMessage `json:"response,omitempty"`
	Deleted    bool            `json:"deleted,omitempty"`
	Error      string          `json:"error,omitempty"`
}

// writeRaw spools the entries of results: each as an element of the JSON
// array json.MarshalIndent writes, or the YAML sequence item
// yaml.JSONToYAML writes.
func (p *printSink) writeRaw(results []scanner.Result) error {
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
		var b []byte
		var err error
		if p.format == "yaml" {
			if b, err = json.Marshal([]scanRaw{e}); err == nil {
				b, err = yaml.JSONToYAML(b)
			}
		} else {
			sep := ",\n  "
			if p.entries == 0 {
				sep = "[\n  "
			}
			if b, err = json.MarshalIndent(e, "  ", "  "); err == nil {
				b = append([]byte(sep), b...)
			}
		}
		if err != nil {
			return fmt.Errorf("encode results: %w", err)
		}
		if _, err := p.body.Write(b); err != nil {
			return err
		}
		p.entries++
	}
	return nil
}

func (p *printSink) ScanDone(context.Context, scanner.ScanDone) error { return nil }

// scanHeader is the first line of the results of one scan.
func scanHeader(sum scanner.Summary, rescanned []string) string {
	what := "resource(s)"
	if len(rescanned) > 0 {
		what = fmt.Sprintf("resource(s) for the changed policies %v", rescanned)
	}
	return fmt.Sprintf("Scanned %d %s in background mode (shard %s)...", sum.Resources, what, sum.Shard)
}

// roundHeader is the first line of the results of one round of watched
// changes.
func roundHeader(sum scanner.Summary) string {
	return fmt.Sprintf("Watch: %d changed resource(s) evaluated, %d deleted (shard %s)...", sum.Resources, sum.Deleted, sum.Shard)
}

// print writes the results kept since the last print to w, under header
// (table only), and starts again empty.
func (p *printSink) print(w io.Writer, header string, sum scanner.Summary) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.reset()
	bw := bufio.NewWriter(w)
	switch {
	case p.format != "table" && p.entries == 0:
		bw.WriteString("[]\n")
	case p.format != "table":
		if err := p.body.CopyTo(bw); err != nil {
			return err
		}
		if p.format == "json" {
			bw.WriteString("\n]\n")
		}
	default:
		fmt.Fprintf(bw, "\n%s\n", header)
		if err := p.body.CopyTo(bw); err != nil {
			return err
		}
		if p.failed > 0 {
			fmt.Fprintf(bw, "\nnot evaluated: %d resource(s)\n", p.failed)
			if err := p.notEvaluated.CopyTo(bw); err != nil {
				return err
			}
		}
		if sum.Mutated > 0 {
			fmt.Fprintf(bw, "\nmutateExisting: %d target(s) patched\n", sum.Mutated)
		}
		if sum.Generated > 0 {
			fmt.Fprintf(bw, "\ngenerateExisting: %d resource(s) applied for %d trigger(s)\n", sum.Generated, sum.Triggers)
		}
		fmt.Fprintf(bw, "\n%s\n", sum.Counts)
	}
	return bw.Flush()
}

// reset drops what was kept (after a print, or a scan that failed).
func (p *printSink) reset() {
	p.body.Reset()
	p.notEvaluated.Reset()
	p.entries, p.failed = 0, 0
}

// Close removes the spools' temporary files.
func (p *printSink) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reset()
	return nil
}
