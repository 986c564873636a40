package kyvernotest

import (
	"encoding/xml"
	"io"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// Output formats of verdict test, as kyverno test's --output-format names
// them.
const (
	FormatText     = "text"
	FormatJSON     = "json"
	FormatYAML     = "yaml"
	FormatMarkdown = "markdown"
	FormatJUnit    = "junit"
)

// Formats lists the output formats Write accepts.
var Formats = []string{FormatText, FormatJSON, FormatYAML, FormatMarkdown, FormatJUnit}

// Write writes a report in one of Formats.
func Write(w io.Writer, format string, rep *Report, o OutputOptions) error {
	switch format {
	case FormatText, "":
		return WriteText(w, rep, o)
	case FormatJSON:
		return WriteJSON(w, rep, o)
	case FormatYAML:
		return WriteYAML(w, rep, o)
	case FormatMarkdown:
		return WriteMarkdown(w, rep, o)
	case FormatJUnit:
		return WriteJUnit(w, rep, o)
	}
	return &FormatError{Format: format}
}

// FormatError is an output format Write does not know.
type FormatError struct {
	Format string
}

func (e *FormatError) Error() string {
	return "invalid output format " + strconv.Quote(e.Format) + ", expected (" + strings.Join(Formats, ", ") + ")"
}

// jsonRows is the report as WriteJSON and WriteYAML print it.
func jsonRows(rep *Report, o OutputOptions) jsonReport {
	out := jsonReport{Passed: rep.Passed, Failed: rep.Failed, Results: []Result{}}
	for _, r := range rep.Results() {
		if o.FailOnly && r.OK {
			continue
		}
		if !o.Detailed {
			r.Message = ""
		}
		out.Results = append(out.Results, r)
	}
	return out
}

// WriteYAML writes the object of WriteJSON as YAML.
func WriteYAML(w io.Writer, rep *Report, o OutputOptions) error {
	b, err := yaml.Marshal(jsonRows(rep, o))
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// resultWord is the RESULT column as kyverno test prints it: Pass, Fail,
// or Skip for the results of a policy that does not load.
func resultWord(r Result) string {
	switch {
	case r.OK && r.Reason == ReasonInvalidPolicy:
		return "Skip"
	case r.OK:
		return "Pass"
	}
	return "Fail"
}

// shownRule is the RULE column: the rule that produced the result (an
// autogen rule for a pod controller), as kyverno test prints it.
func shownRule(r Result) string {
	if r.ActualRule != "" {
		return r.ActualRule
	}
	return r.Rule
}

// WriteMarkdown writes, per test, kyverno test's markdown table (ID,
// POLICY, RULE, RESOURCE, RESULT, REASON, and MESSAGE when detailed); a
// test that could not run is preceded by its error. The last line is
// "N passed, N failed". A "|" in a cell is escaped, a line break folded.
func WriteMarkdown(w io.Writer, rep *Report, o OutputOptions) error {
	bw := &errWriter{w: w}
	cell := func(s string) string { return strings.ReplaceAll(oneLine(s), "|", `\|`) }
	for _, s := range rep.Suites {
		var rows []string
		for i, r := range s.Results {
			if o.FailOnly && r.OK {
				continue
			}
			row := "| " + strconv.Itoa(i+1) + " | " + cell(r.Policy) + " | " + cell(shownRule(r)) + " | " + cell(r.Resource) + " | " + resultWord(r) + " | " + cell(r.Reason) + " |"
			if o.Detailed {
				row += " " + cell(r.Message) + " |"
			}
			rows = append(rows, row)
		}
		if len(rows) == 0 {
			continue
		}
		headers := []string{"ID", "POLICY", "RULE", "RESOURCE", "RESULT", "REASON"}
		if o.Detailed {
			headers = append(headers, "MESSAGE")
		}
		bw.printf("\n")
		if s.Err != nil {
			bw.printf("Error in %s: %s\n\n", s.Path, cell(s.Err.Error()))
		}
		bw.printf("| %s | \n", strings.Join(headers, " | "))
		bw.printf("|%s\n", strings.Repeat("----|", len(headers)))
		for _, r := range rows {
			bw.printf("%s\n", r)
		}
	}
	bw.printf("\n%d passed, %d failed\n", rep.Passed, rep.Failed)
	return bw.err
}

// JUnit XML, as kyverno test -o junit writes it: a testsuite per policy,
// a testcase per expected result and resource (classname the rule, name
// the resource), a failure whose message is the reason.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		File     string      `xml:"file,attr,omitempty"`
		Cases    []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Classname string        `xml:"classname,attr"`
		Name      string        `xml:"name,attr"`
		Failure   *junitFailure `xml:"failure"`
		SystemOut *junitOut     `xml:"system-out"`
	}
	junitFailure struct {
		Message string `xml:"message,attr"`
		Body    string `xml:",cdata"`
	}
	junitOut struct {
		Body string `xml:",cdata"`
	}
)

// WriteJUnit writes the report as one JUnit XML document: a testsuite per
// policy of each test file (in the order of the results), a testcase per
// result (classname the rule, name the resource); a failed result has a
// failure whose message is the reason and whose text names the policy,
// rule, resource and result (and the engine's message when detailed); a
// passed one has the same as system-out. Unlike kyverno test's, the
// document is one per run and well-formed (escaped, every element closed).
func WriteJUnit(w io.Writer, rep *Report, o OutputOptions) error {
	doc := junitSuites{}
	for _, s := range rep.Suites {
		index := map[string]int{}
		for _, r := range s.Results {
			if o.FailOnly && r.OK {
				continue
			}
			name := r.Policy
			if name == "" {
				name = s.Path
			}
			i, ok := index[name]
			if !ok {
				i = len(doc.Suites)
				index[name] = i
				doc.Suites = append(doc.Suites, junitSuite{Name: name, File: s.Path})
			}
			body := "Policy: " + r.Policy + "\nRule: " + shownRule(r) + "\nResource: " + r.Resource + "\nResult: " + resultWord(r) + "\n"
			if o.Detailed {
				body += "Message: " + r.Message + "\n"
			}
			c := junitCase{Classname: shownRule(r), Name: r.Resource}
			if r.OK {
				c.SystemOut = &junitOut{Body: "\nReason: " + r.Reason + "\n" + body}
			} else {
				c.Failure = &junitFailure{Message: r.Reason, Body: "\n" + body}
				doc.Suites[i].Failures++
				doc.Failures++
			}
			doc.Suites[i].Tests++
			doc.Suites[i].Cases = append(doc.Suites[i].Cases, c)
			doc.Tests++
		}
	}
	b, err := xml.MarshalIndent(doc, "", " ")
	if err != nil {
		return err
	}
	bw := &errWriter{w: w}
	bw.printf("%s%s\n", xml.Header, b)
	return bw.err
}
