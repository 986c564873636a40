package kyvernotest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yamlv2 "go.yaml.in/yaml/v2"

	"github.com/verdict-policy/verdict/internal/policyreport"
)

// kyvernoReportYAML is the report as Kyverno 1.19's CLI prints it:
// sigs.k8s.io/yaml's Marshal, that is JSON, read back by go-yaml v2 and
// written by go-yaml v2's Marshal.
func kyvernoReportYAML(t testing.TB, rep policyreport.PolicyReport) (string, bool) {
	t.Helper()
	j, err := json.Marshal(rep.Open())
	if err != nil {
		t.Fatalf("json.Marshal() error = %v", err)
	}
	var obj any
	if err := yamlv2.Unmarshal(j, &obj); err != nil {
		return "", false // characters go-yaml v2 does not read: Kyverno fails too
	}
	out, err := yamlv2.Marshal(obj)
	if err != nil {
		t.Fatalf("yaml.Marshal() error = %v", err)
	}
	return string(out), true
}

func verdictReportYAML(rep policyreport.PolicyReport) string {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	writeReportYAML(w, &rep)
	w.Flush()
	return buf.String()
}

// scalarReport is a report with s in every string it has: keys and values
// at each indentation, first key of a list item or not.
func scalarReport(s string) policyreport.PolicyReport {
	return policyreport.PolicyReport{
		APIVersion: policyreport.OpenReportsAPIVersion, Kind: policyreport.KindReport,
		Metadata: policyreport.Metadata{Name: s, Namespace: s},
		Results: []policyreport.Result{{
			Category: s, Message: s, Policy: s, Rule: s, Result: "fail", Severity: s, Source: s,
			Properties: map[string]string{s: s, "k": s, "a" + s: "v"},
			Resources:  []policyreport.ObjectReference{{APIVersion: s, Kind: s, Name: s, Namespace: s, UID: s}},
			Timestamp:  policyreport.Timestamp{Seconds: 1700000000},
		}, {
			Message: s, Policy: "p", Result: "pass", Source: "kyverno",
			Resources: []policyreport.ObjectReference{{Kind: "Pod", Name: s}},
		}},
		Summary: policyreport.Summary{Pass: 1, Fail: 1},
	}
}

func TestWriteReportYAMLScalarsAsGoYAMLv2(t *testing.T) {
	long := "validation error: The label `app.kubernetes.io/name` is required. rule check-for-labels failed at path /metadata/labels/"
	tests := []struct {
		name string
		give string
	}{
		{name: "empty", give: ""},
		{name: "word", give: "kyverno"},
		{name: "sentence", give: "validation rule 'check' passed."},
		{name: "long message", give: long},
		{name: "long message double spaces", give: strings.ReplaceAll(long, " ", "  ")},
		{name: "long without spaces", give: strings.Repeat("abcdefghij", 20)},
		{name: "long plain", give: strings.Repeat("word ", 40) + "end"},
		{name: "long double-quoted", give: strings.Repeat("tab\there ", 20)},
		{name: "long double-quoted double spaces", give: strings.Repeat("x\t  y", 40)},
		{name: "long single with quotes", give: "a: " + strings.Repeat("it's ", 30)},
		{name: "space at the fold", give: strings.Repeat("a", 75) + " b c d e f g h i j k"},
		{name: "colon space", give: "key: value"},
		{name: "colon end", give: "key:"},
		{name: "colon no space", give: "a:b"},
		{name: "comment", give: "a #b"},
		{name: "hash no space", give: "a#b"},
		{name: "leading hash", give: "#a"},
		{name: "leading dash space", give: "- a"},
		{name: "leading dash", give: "-a"},
		{name: "document start", give: "---"},
		{name: "document end", give: "... x"},
		{name: "single quote", give: "'a'"},
		{name: "inner single quote", give: "it's"},
		{name: "double quote", give: `say "hi"`},
		{name: "leading double quote", give: `"hi"`},
		{name: "backslash", give: `a\b`},
		{name: "braces", give: "{{ request.object.metadata.name }}"},
		{name: "brackets", give: "[a, b]"},
		{name: "flow chars inside", give: "a, b [c] {d}"},
		{name: "unicode", give: "über naïve 日本"},
		{name: "emoji", give: "ok 👍"},
		{name: "nbsp", give: "a\u00a0b"},
		{name: "line separator", give: "a\u2028b"},
		{name: "bom", give: "\ufeffabc"},
		{name: "control", give: "a\x01b\x1b"},
		{name: "invalid utf-8", give: "a\xffb\xc3"},
		{name: "newline", give: "line1\nline2"},
		{name: "trailing newline", give: "line1\nline2\n"},
		{name: "two trailing newlines", give: "line1\n\n"},
		{name: "only newline", give: "\n"},
		{name: "leading newline", give: "\nx"},
		{name: "leading space multi-line", give: " a\nb"},
		{name: "space before newline", give: "a \nb"},
		{name: "space after newline", give: "a\n b"},
		{name: "carriage return", give: "a\rb"},
		{name: "crlf", give: "a\r\nb"},
		{name: "tab", give: "a\tb"},
		{name: "leading space", give: " a"},
		{name: "trailing space", give: "a "},
		{name: "only spaces", give: "   "},
		{name: "true", give: "true"},
		{name: "True", give: "True"},
		{name: "yes", give: "yes"},
		{name: "y", give: "y"},
		{name: "on", give: "On"},
		{name: "o", give: "o"},
		{name: "null", give: "null"},
		{name: "tilde", give: "~"},
		{name: "int", give: "123"},
		{name: "negative", give: "-12"},
		{name: "octal", give: "0o17"},
		{name: "hex", give: "0x1F"},
		{name: "binary", give: "0b101"},
		{name: "underscore int", give: "1_000"},
		{name: "float", give: "1.5e3"},
		{name: "dot float", give: ".5"},
		{name: "inf", give: ".inf"},
		{name: "neg inf", give: "-.Inf"},
		{name: "nan", give: ".NaN"},
		{name: "sexagesimal", give: "1:20"},
		{name: "time-like", give: "12:30:45"},
		{name: "date", give: "2024-01-02"},
		{name: "timestamp", give: "2024-01-02T10:00:00Z"},
		{name: "not a date", give: "2024-13-45"},
		{name: "version", give: "1.2.3"},
		{name: "merge", give: "<<"},
		{name: "percent", give: "%a"},
		{name: "at", give: "@a"},
		{name: "backtick", give: "`a`"},
		{name: "question", give: "? a"},
		{name: "question no space", give: "?a"},
		{name: "key longer than 128", give: strings.Repeat("k", 129)},
		{name: "key of 128", give: strings.Repeat("k", 128)},
		{name: "long key with spaces", give: strings.Repeat("key ", 40)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := scalarReport(tt.give)
			want, ok := kyvernoReportYAML(t, rep)
			if !ok {
				t.Fatalf("go-yaml v2 does not read the report of %q back", tt.give)
			}
			if diff := cmp.Diff(want, verdictReportYAML(rep)); diff != "" {
				t.Errorf("writeReportYAML(%q) mismatch with go-yaml v2 (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

func TestYAMLKeyOrderAsGoYAMLv2(t *testing.T) {
	props := map[string]string{}
	for _, k := range []string{"a10", "a9", "a09", "a0", "a", "A", "b", "_x", "1", "10", "2", "x-1", "x_1", "x.1", "é", "a b", "a00", "a01"} {
		props[k] = "v"
	}
	rep := policyreport.PolicyReport{
		APIVersion: policyreport.OpenReportsAPIVersion, Kind: policyreport.KindReport,
		Metadata: policyreport.Metadata{Name: "r"},
		Results:  []policyreport.Result{{Policy: "p", Result: "pass", Source: "kyverno", Properties: props}},
	}
	want, _ := kyvernoReportYAML(t, rep)
	if diff := cmp.Diff(want, verdictReportYAML(rep)); diff != "" {
		t.Errorf("writeReportYAML() properties order mismatch with go-yaml v2 (-want +got):\n%s", diff)
	}
}

func FuzzWriteReportYAMLAsGoYAMLv2(f *testing.F) {
	f.Add("validation error: The label `app.kubernetes.io/name` is required. rule check-for-labels failed at path /metadata/labels/", "k")
	f.Add("a\nb \n", " x")
	f.Add("it's a \"test\" \\ with\ttab", "1:20")
	f.Add(strings.Repeat("x ", 60), "")
	f.Fuzz(func(t *testing.T, s, k string) {
		rep := scalarReport(s)
		rep.Results[1].Properties = map[string]string{k: s, s + k: k}
		rep.Results[1].Rule = k
		want, ok := kyvernoReportYAML(t, rep)
		if !ok {
			t.Skip()
		}
		if got := verdictReportYAML(rep); got != want {
			t.Errorf("writeReportYAML(%q, %q) = %q, want %q", s, k, got, want)
		}
	})
}
