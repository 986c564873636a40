package kyvernotest

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/verdict-policy/verdict/internal/policyreport"
	"github.com/verdict-policy/verdict/internal/spool"
)

// This file writes the outputs of kyverno apply as Apply goes, resource by
// resource (ApplyWrite). What kyverno apply prints first is known last
// (the number of resources in the first line, the widths of the table's
// columns, the summaries of the reports), so each output is kept in a
// spool (internal/spool) until the end: in memory up to ApplySpoolMemory
// (256 KiB), then in an
// unlinked temporary file. The writers of an ApplyResult (WriteApplyText,
// WriteApplyTable, WriteMutatedTo) replay it through the same code.

// ApplyFormat is what ApplyWrite prints.
type ApplyFormat int

// Formats of ApplyWrite.
const (
	// ApplyText is kyverno apply's output (WriteApplyText).
	ApplyText ApplyFormat = iota
	// ApplyTable is kyverno apply --table (WriteApplyTable).
	ApplyTable
	// ApplyReportYAML and ApplyReportJSON are kyverno apply
	// --policy-report (WriteReports of ApplyResult.Reports).
	ApplyReportYAML
	ApplyReportJSON
	// ApplyExceptionsYAML and ApplyExceptionsJSON are kyverno apply
	// --generate-exceptions (applyexceptions.go): the mutated resources,
	// the skipped policies, then a PolicyException per failure of a
	// cluster-wide policy.
	ApplyExceptionsYAML
	ApplyExceptionsJSON
)

// ApplyOutput says what ApplyWrite writes.
type ApplyOutput struct {
	// Format of the output. Default ApplyText.
	Format ApplyFormat
	// Detailed adds the MESSAGE column to ApplyTable.
	Detailed bool
	// Color colours ApplyTable as kyverno apply --table does on a
	// terminal: the header, policy, rule, resource and result.
	Color bool
	// PrintMutated prints the mutated and generated resources before the
	// rest (every format: Kyverno prints them with --policy-report and
	// --generate-exceptions too), as WriteMutated does.
	PrintMutated bool
	// Stdin, as kyverno apply -i/--stdin, drops the lines that would
	// keep the output from being piped to kubectl: "Applying N policy
	// rule(s)..." and the "policy <p> applied to <resource>:" before
	// each mutated or generated resource.
	Stdin bool
	// MutatedPath, when set, is the file or folder the mutated and
	// generated resources are written to, as WriteMutatedTo does.
	MutatedPath string
	// TempDir is where a spool larger than ApplySpoolMemory goes. Default
	// os.TempDir().
	TempDir string
	// ExceptionTTL is the cleanup.kyverno.io/ttl label of the exceptions
	// of ApplyExceptionsYAML and ApplyExceptionsJSON (none when 0).
	ExceptionTTL time.Duration
	// Warnings receives a line per failure ApplyExceptionsYAML and
	// ApplyExceptionsJSON write no exception for. Default: none.
	Warnings io.Writer
}

// ApplyWrite evaluates as Apply does and writes its outputs to w (and
// out.MutatedPath) byte for byte as WriteApplyText, WriteApplyTable or
// WriteReports, and WriteMutatedTo, would write Apply's result, without
// keeping the resources, responses and outputs: each resource is read,
// evaluated, written to a spool and dropped, so that memory does not
// grow with the size of the resource files. Nothing is written to w when
// it fails. The result has no Resources, Responses and Outputs.
func ApplyWrite(ctx context.Context, opts ApplyOptions, w io.Writer, out ApplyOutput) (*ApplyResult, error) {
	var main applyEmitter
	switch out.Format {
	case ApplyTable:
		main = &tableOut{applyOut: applyOut{w: w, printMutated: out.PrintMutated, bare: out.Stdin, tempDir: out.TempDir}, detailed: out.Detailed, color: out.Color}
	case ApplyReportYAML, ApplyReportJSON:
		main = &reportOut{applyOut: applyOut{w: w, printMutated: out.PrintMutated, bare: out.Stdin, tempDir: out.TempDir}, json: out.Format == ApplyReportJSON}
	case ApplyExceptionsYAML, ApplyExceptionsJSON:
		main = &exceptionsOut{applyOut: applyOut{w: w, printMutated: out.PrintMutated, bare: out.Stdin, tempDir: out.TempDir},
			json: out.Format == ApplyExceptionsJSON, ttl: out.ExceptionTTL}
	default:
		main = &textOut{applyOut: applyOut{w: w, printMutated: out.PrintMutated, bare: out.Stdin, tempDir: out.TempDir}}
	}
	emitters := multiEmitter{main}
	if out.MutatedPath != "" {
		emitters = append(emitters, &mutatedFiles{path: out.MutatedPath})
	}
	defer emitters.close()
	return apply(ctx, opts, emitters)
}

// replay writes an ApplyResult through an emitter.
func replay(r *ApplyResult, e applyEmitter) error {
	if c, ok := e.(io.Closer); ok {
		defer c.Close()
	}
	if err := e.start(r); err != nil {
		return err
	}
	// The emitters take outputs and responses each in order, apart.
	if err := e.resource(nil, r.Responses, r.Outputs); err != nil {
		return err
	}
	return e.finish(r, len(r.Resources))
}

// multiEmitter hands everything to each emitter.
type multiEmitter []applyEmitter

func (m multiEmitter) start(r *ApplyResult) error {
	for _, e := range m {
		if err := e.start(r); err != nil {
			return err
		}
	}
	return nil
}

func (m multiEmitter) resource(res *Resource, resps []ApplyResponse, outs []PolicyOutput) error {
	for _, e := range m {
		if err := e.resource(res, resps, outs); err != nil {
			return err
		}
	}
	return nil
}

func (m multiEmitter) finish(r *ApplyResult, n int) error {
	for _, e := range m {
		if err := e.finish(r, n); err != nil {
			return err
		}
	}
	return nil
}

func (m multiEmitter) close() {
	for _, e := range m {
		if c, ok := e.(io.Closer); ok {
			c.Close()
		}
	}
}

// ApplySpoolMemory is how much of each of its outputs ApplyWrite keeps in
// memory until the end (the rest goes to an unlinked temporary file in
// ApplyOutput.TempDir): 256 KiB. The output is written once, at the end,
// so a file costs one more write and read of each byte, while what stays
// in memory is live heap that the collector's target doubles: with
// spool.DefaultMemory (4 MiB) the output of `verdict apply` of the 30
// benchmark policies to 2,000 resources (8 MB) took 8 MB more peak.
const ApplySpoolMemory = 256 << 10

// spoolThreshold is the memory of the spools (ApplySpoolMemory), lowered
// by tests.
var spoolThreshold = ApplySpoolMemory

func newSpool(dir string) *spool.Spool { return &spool.Spool{Dir: dir, Memory: spoolThreshold} }

// applyOut is what kyverno apply's text and table outputs share: the
// mutated resources, spooled until the end, and the lines before the
// results.
type applyOut struct {
	w            io.Writer
	printMutated bool
	bare         bool // ApplyOutput.Stdin
	tempDir      string
	mutated      *spool.Spool
	auditWarn    bool
	scratch      []byte // errWriter.scratch, kept between resources
}

func (a *applyOut) start(r *ApplyResult) {
	a.mutated = newSpool(a.tempDir)
	a.auditWarn = r.AuditWarn
}

// spoolMutated spools the mutated and generated resources of outs, as
// WriteMutated writes them, when they are printed.
func (a *applyOut) spoolMutated(outs []PolicyOutput) error {
	if !a.printMutated {
		return nil
	}
	bw := &errWriter{w: a.mutated, scratch: a.scratch}
	writeMutatedOutputs(bw, outs, a.bare)
	a.scratch = bw.scratch
	return bw.err
}

// writeHead writes what comes before the results of n resources: the
// "Applying" line (unless bare), the mutated resources and the skipped
// policies.
func (a *applyOut) writeHead(r *ApplyResult, n int) *errWriter {
	bw := &errWriter{w: a.w}
	if !a.bare {
		writeApplying(bw, r, n)
	}
	if a.printMutated && bw.err == nil {
		bw.err = a.mutated.CopyTo(a.w)
	}
	writeSkipped(bw, r.Skipped)
	return bw
}

// textOut is kyverno apply's output (WriteApplyText).
type textOut struct {
	applyOut
	body *spool.Spool
}

func (t *textOut) start(r *ApplyResult) error {
	t.applyOut.start(r)
	t.body = newSpool(t.tempDir)
	return nil
}

func (t *textOut) resource(_ *Resource, resps []ApplyResponse, outs []PolicyOutput) error {
	if err := t.spoolMutated(outs); err != nil {
		return err
	}
	bw := &errWriter{w: t.body, scratch: t.scratch}
	writeFailures(bw, resps, t.auditWarn)
	t.scratch = bw.scratch
	return bw.err
}

func (t *textOut) finish(r *ApplyResult, n int) error {
	bw := t.writeHead(r, n)
	if bw.err == nil {
		bw.err = t.body.CopyTo(t.w)
	}
	writeCounts(bw, r.Counts)
	return bw.err
}

func (t *textOut) Close() error {
	return errors.Join(closeSpool(t.mutated), closeSpool(t.body))
}

func closeSpool(s *spool.Spool) error {
	if s == nil {
		return nil
	}
	return s.Close()
}

// tableOut is kyverno apply --table (WriteApplyTable). Its rows are
// spooled, each cell a length and its bytes, while the table learns their
// widths.
type tableOut struct {
	applyOut
	detailed bool
	color    bool
	rows     *spool.Spool
	table    *table
	n        int // rows
	enc      []byte
}

func (t *tableOut) header() []string {
	// REASON is Kyverno's column, empty in apply's table.
	h := []string{"ID", "POLICY", "RULE", "RESOURCE", "RESULT", "REASON"}
	if t.detailed {
		h = append(h, "MESSAGE")
	}
	return h
}

func (t *tableOut) start(r *ApplyResult) error {
	t.applyOut.start(r)
	t.rows = newSpool(t.tempDir)
	t.table = newTable(t.header())
	return nil
}

func (t *tableOut) resource(_ *Resource, resps []ApplyResponse, outs []PolicyOutput) error {
	if err := t.spoolMutated(outs); err != nil {
		return err
	}
	return tableRows(resps, t.auditWarn, t.detailed, t.n+1, func(cells []string) error {
		t.n++
		t.table.fit(cells)
		t.enc = t.enc[:0]
		for _, c := range cells {
			t.enc = binary.AppendUvarint(t.enc, uint64(len(c)))
			t.enc = append(t.enc, c...)
		}
		_, err := t.rows.Write(t.enc)
		return err
	})
}

func (t *tableOut) finish(res *ApplyResult, n int) error {
	bw := t.writeHead(res, n)
	if bw.err != nil {
		return bw.err
	}
	if t.color {
		t.table.paint = applyPainter
	}
	t.table.countRows(t.n)
	r, err := t.rows.Reader()
	if err != nil {
		return err
	}
	br := bufio.NewReaderSize(r, 64<<10)
	t.table.writeHead(bw)
	cells := make([]string, len(t.table.header))
	for range t.n {
		for i := range cells {
			n, err := binary.ReadUvarint(br)
			if err != nil {
				return fmt.Errorf("spool output: %w", err)
			}
			b := make([]byte, n)
			if _, err := io.ReadFull(br, b); err != nil {
				return fmt.Errorf("spool output: %w", err)
			}
			cells[i] = string(b)
		}
		t.table.writeRow(bw, cells)
	}
	t.table.writeEnd(bw)
	return bw.err
}

func (t *tableOut) Close() error {
	return errors.Join(closeSpool(t.mutated), closeSpool(t.rows))
}

// reportOut is kyverno apply --policy-report (WriteReports of
// ApplyResult.Reports): the results of each report are spooled, encoded,
// while its summary is counted. As Kyverno's, the mutated and generated
// resources (when printed) and the skipped policies come first.
type reportOut struct {
	applyOut
	json    bool
	now     time.Time
	cluster *reportSpool
	// namespaced are the reports of namespaced Policies, written whole,
	// one resource at a time (namespacedReports).
	namespaced   *spool.Spool
	namespacedBw *bufio.Writer
}

type reportSpool struct {
	kind    string
	meta    policyreport.Metadata
	results *spool.Spool
	bw      *bufio.Writer
	n       int
	summary policyreport.Summary
}

func (o *reportOut) newReport(kind string, meta policyreport.Metadata) *reportSpool {
	s := newSpool(o.tempDir)
	return &reportSpool{kind: kind, meta: meta, results: s, bw: bufio.NewWriterSize(s, 16<<10)}
}

func (o *reportOut) start(r *ApplyResult) error {
	o.applyOut.start(r)
	o.now = r.now
	o.cluster = o.newReport(policyreport.KindClusterReport, policyreport.Metadata{Name: "merged"})
	o.namespaced = newSpool(o.tempDir)
	o.namespacedBw = bufio.NewWriterSize(o.namespaced, 16<<10)
	return nil
}

func (o *reportOut) resource(_ *Resource, resps []ApplyResponse, outs []PolicyOutput) error {
	if err := o.spoolMutated(outs); err != nil {
		return err
	}
	format := "yaml"
	if o.json {
		format = "json"
	}
	for _, resp := range resps {
		if namespacedPolicy(resp.Policy) {
			if err := writeReports(o.namespacedBw, namespacedReports(resp, o.now, o.auditWarn), format); err != nil {
				return err
			}
			continue
		}
		target := o.cluster
		for _, rr := range resp.Results {
			res := reportResultOf(resp, rr, o.now, o.auditWarn)
			if o.json {
				data, err := json.Marshal(res)
				if err != nil {
					return fmt.Errorf("write report %s: %w", target.meta.Name, err)
				}
				if target.n > 0 {
					target.bw.WriteByte(',')
				}
				target.bw.Write(data)
			} else {
				writeReportResultYAML(target.bw, &res)
			}
			target.n++
			target.summary.Add(res.Result)
		}
	}
	return nil
}

func (o *reportOut) finish(r *ApplyResult, _ int) error {
	head := &errWriter{w: o.w}
	if o.printMutated {
		head.err = o.mutated.CopyTo(o.w)
	}
	writeSkipped(head, r.Skipped)
	if head.err != nil {
		return head.err
	}
	bw := bufio.NewWriterSize(o.w, 64<<10)
	if rep := o.cluster; rep.n > 0 {
		if err := rep.bw.Flush(); err != nil {
			return err
		}
		// As Kyverno's printReports: the cluster report first, then the
		// namespaced ones, each after "---", in both formats, and each
		// report printed with Println.
		if o.json {
			if err := writeReportJSON(bw, rep); err != nil {
				return err
			}
		} else {
			writeReportHeadYAML(bw, policyreport.OpenReportsAPIVersion, rep.kind, rep.meta, rep.n > 0)
			if err := rep.results.CopyTo(bw); err != nil {
				return err
			}
			writeReportTailYAML(bw, rep.summary)
			bw.WriteByte('\n')
		}
	}
	if err := o.namespacedBw.Flush(); err != nil {
		return err
	}
	if err := o.namespaced.CopyTo(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// writeReportJSON writes a report as json.Marshal writes its
// policyreport.OpenReport form (Kyverno 1.19's CLI), its results from the
// spool.
func writeReportJSON(w *bufio.Writer, rep *reportSpool) error {
	head := policyreport.OpenReport{
		Kind: rep.kind, APIVersion: policyreport.OpenReportsAPIVersion,
		Metadata: policyreport.OpenMetadata{Name: rep.meta.Name, Namespace: rep.meta.Namespace},
		Summary:  rep.summary,
	}
	b, err := json.Marshal(head) // no results: they end the object
	if err != nil {
		return fmt.Errorf("write report %s: %w", rep.meta.Name, err)
	}
	w.Write(b[:len(b)-1])
	if rep.n > 0 {
		w.WriteString(`,"results":[`)
		if err := rep.results.CopyTo(w); err != nil {
			return err
		}
		w.WriteByte(']')
	}
	w.WriteString("}\n")
	return nil
}

func (o *reportOut) Close() error {
	errs := []error{closeSpool(o.mutated), closeSpool(o.namespaced)}
	if o.cluster != nil {
		errs = append(errs, o.cluster.results.Close())
	}
	return errors.Join(errs...)
}

// writeApplying writes kyverno apply's first line, with the number of
// exceptions when there are any.
func writeApplying(bw *errWriter, r *ApplyResult, n int) {
	if r.ExceptionCount > 0 {
		bw.printf("\nApplying %d policy rule(s) to %d resource(s) with %d exception(s)...\n", r.RuleCount, n, r.ExceptionCount)
		return
	}
	bw.printf("\nApplying %d policy rule(s) to %d resource(s)...\n", r.RuleCount, n)
}
