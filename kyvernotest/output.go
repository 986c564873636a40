package kyvernotest

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// OutputOptions shape the text and JSON output of a report.
type OutputOptions struct {
	// Detailed adds the engine's message to each row.
	Detailed bool
	// FailOnly shows only the failed results (the counts stay complete).
	FailOnly bool
	// Color colours the tables as kyverno test does on a terminal: the
	// header, the policy, rule and resource, the result, and the
	// reasons Excluded, Not found and Invalid Policy.
	Color bool
}

// WriteText writes a report as kyverno test does: per test, a table of
// ID, POLICY, RULE, RESOURCE, RESULT and REASON. The last line is
// "N passed, N failed".
func WriteText(w io.Writer, rep *Report, o OutputOptions) error {
	bw := &errWriter{w: w}
	for _, s := range rep.Suites {
		var rows [][]string
		for i, r := range s.Results {
			if o.FailOnly && r.OK {
				continue
			}
			rule := r.ActualRule
			if rule == "" {
				rule = r.Rule
			}
			row := []string{strconv.Itoa(i + 1), r.Policy, rule, r.Resource, resultWord(r), tableCell(r.Reason)}
			if o.Detailed {
				row = append(row, tableCell(r.Message))
			}
			rows = append(rows, row)
		}
		if len(rows) == 0 && !(s.Err != nil && !o.FailOnly) {
			continue
		}
		name := s.Name
		if name == "" {
			name = "-"
		}
		bw.printf("\nTest %s (%s)\n", name, s.Path)
		if s.Err != nil {
			bw.printf("  Error: %s\n", oneLine(s.Err.Error()))
		}
		if len(rows) == 0 {
			continue
		}
		header := []string{"ID", "POLICY", "RULE", "RESOURCE", "RESULT", "REASON"}
		if o.Detailed {
			header = append(header, "MESSAGE")
		}
		var p painter
		if o.Color {
			p = testPainter
		}
		writeTable(bw, header, rows, p)
	}
	bw.printf("\n%d passed, %d failed\n", rep.Passed, rep.Failed)
	return bw.err
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// writeTable draws a table with the box characters of Kyverno's tables,
// its cells coloured by p when p is not nil.
func writeTable(w *errWriter, header []string, rows [][]string, p painter) {
	t := newTable(header)
	for _, r := range rows {
		t.fit(r)
	}
	t.paint = p
	t.countRows(len(rows))
	t.writeHead(w)
	for _, r := range rows {
		t.writeRow(w, r)
	}
	t.writeEnd(w)
}

// titledRows: a table of more rows than this has its number of rows in
// the title of its first column, "ID (N) " (with the trailing space), as
// Kyverno's table printer (lensesio/tableprinter with RowLengthTitle
// "more than 10") writes it.
const titledRows = 10

// table is a table whose column widths are learnt from its rows (fit)
// before it is written.
type table struct {
	header []string
	widths []int
	paint  painter // nil: no colour
}

// countRows titles the first column with the number of rows, as Kyverno
// does for more than titledRows rows.
func (t *table) countRows(n int) {
	if n > titledRows {
		t.header[0] = fmt.Sprintf("%s (%d) ", t.header[0], n)
		t.fit(t.header)
	}
}

func newTable(header []string) *table {
	t := &table{header: slices.Clone(header), widths: make([]int, len(header))}
	t.fit(header)
	return t
}

// fit widens the columns to a row.
func (t *table) fit(row []string) {
	for i, c := range row {
		for line := range strings.SplitSeq(c, "\n") {
			if n := utf8.RuneCountInString(line); n > t.widths[i] {
				t.widths[i] = n
			}
		}
	}
}

// cellCharLimit is the RowCharLimit of Kyverno's table printer: a cell
// longer than this, in bytes, is wrapped (tableCell).
const cellCharLimit = 300

// tableCell is a cell as Kyverno's table printer (lensesio/tableprinter's
// rowText and cellText) makes it: as written, line breaks included (each
// line of a cell is a line of the table), and a single-line cell longer
// than cellCharLimit wrapped at spaces, with that printer's count of the
// room left (each word after the first costs two more than its length).
// A multi-line cell ending with a line break loses its last two bytes.
func tableCell(s string) string {
	if len(s) <= cellCharLimit {
		return s
	}
	return wrapCell(s, cellCharLimit)
}

func wrapCell(cell string, limit int) string {
	if strings.Contains(cell, "\n") {
		if strings.HasSuffix(cell, "\n") {
			cell = cell[:len(cell)-2]
			if len(cell) > limit {
				return wrapCell(cell, limit)
			}
		}
		return cell
	}
	words := strings.Fields(strings.TrimSpace(cell))
	if len(words) == 0 {
		return cell
	}
	var b strings.Builder
	b.WriteString(words[0])
	rem := limit - len(words[0])
	for _, w := range words[1:] {
		if c := len(w) + 1; c <= rem {
			b.WriteString(" " + w)
			rem -= c + 1
			continue
		}
		b.WriteString("\n" + w)
		rem = limit - len(w)
	}
	return b.String()
}

func (t *table) separator() string {
	var sep strings.Builder
	sep.WriteString("│")
	for _, n := range t.widths {
		sep.WriteString(strings.Repeat("─", n+2))
		sep.WriteString("│")
	}
	return sep.String()
}

// writeHead writes the top line, the header and the line below it.
func (t *table) writeHead(w *errWriter) {
	w.printf("%s\n", t.separator())
	var b strings.Builder
	b.WriteString("│")
	for i, c := range t.header {
		pad := strings.Repeat(" ", t.widths[i]-utf8.RuneCountInString(c))
		if t.paint != nil {
			// tablewriter colours the padding of a header cell too.
			b.WriteString(" " + ansiHeader + c + pad + ansiHeadX + " │")
			continue
		}
		b.WriteString(" " + c + pad + " │")
	}
	w.printf("%s\n", b.String())
	w.printf("%s\n", t.separator())
}

// writeRow writes a row: as many lines as its cell of most lines, the
// other cells blank below their last line.
func (t *table) writeRow(w *errWriter, cells []string) {
	height := 1
	for _, c := range cells {
		height = max(height, strings.Count(c, "\n")+1)
	}
	if height == 1 {
		t.writeLine(w, cells, t.paint)
		return
	}
	lines := make([][]string, len(cells))
	for i, c := range cells {
		lines[i] = strings.Split(c, "\n")
	}
	line := make([]string, len(cells))
	for j := range height {
		for i := range cells {
			line[i] = ""
			if j < len(lines[i]) {
				line[i] = lines[i][j]
			}
		}
		// Colour only the cells of one line (policy, rule, resource,
		// result), on the first line: below them the cells are blank.
		first := j == 0
		t.writeLine(w, line, func(col int, c string) string {
			if t.paint == nil || !first || len(lines[col]) > 1 {
				return c
			}
			return t.paint(col, c)
		})
	}
}

func (t *table) writeLine(w *errWriter, cells []string, paint painter) {
	var b strings.Builder
	b.WriteString("│")
	for i, c := range cells {
		pad := strings.Repeat(" ", t.widths[i]-utf8.RuneCountInString(c))
		if paint != nil {
			c = paint(i, c)
		}
		b.WriteString(" " + c + pad + " │")
	}
	w.printf("%s\n", b.String())
}

// writeEnd writes the bottom line.
func (t *table) writeEnd(w *errWriter) {
	w.printf("%s\n", t.separator())
}

// jsonReport is the JSON form of a report.
type jsonReport struct {
	Passed  int      `json:"passed"`
	Failed  int      `json:"failed"`
	Results []Result `json:"results"`
}

// WriteJSON writes a report as one JSON object: the counts and one entry
// per expected result per resource.
func WriteJSON(w io.Writer, rep *Report, o OutputOptions) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(jsonRows(rep, o))
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
	// scratch is a buffer its callers reuse to build what they write.
	scratch []byte
}

func (e *errWriter) write(b []byte) {
	if e.err != nil {
		return
	}
	_, e.err = e.w.Write(b)
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err != nil {
		return
	}
	_, e.err = fmt.Fprintf(e.w, format, args...)
}
