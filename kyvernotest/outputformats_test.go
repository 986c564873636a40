package kyvernotest

import (
	"bytes"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func readGolden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "output", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteMarkdown(t *testing.T) {
	tests := []struct {
		name   string
		give   OutputOptions
		golden string
	}{
		{name: "every result", give: OutputOptions{}, golden: "markdown.md"},
		{name: "failed only, detailed", give: OutputOptions{Detailed: true, FailOnly: true}, golden: "markdown-detailed-failonly.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := outputFixture()
			rep.Suites[0].Results[1].Message = "bad\nlabel | x"
			var buf bytes.Buffer
			if err := Write(&buf, FormatMarkdown, rep, tt.give); err != nil {
				t.Fatalf("Write(markdown) error = %v", err)
			}
			if diff := cmp.Diff(readGolden(t, tt.golden), buf.String()); diff != "" {
				t.Errorf("Write(markdown, %+v) mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

func TestWriteJUnitGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, FormatJUnit, outputFixture(), OutputOptions{}); err != nil {
		t.Fatalf("Write(junit) error = %v", err)
	}
	if diff := cmp.Diff(readGolden(t, "junit.xml"), buf.String()); diff != "" {
		t.Errorf("Write(junit) mismatch (-want +got):\n%s", diff)
	}
}

// The JUnit document as a CI system reads it.
type (
	xmlSuites struct {
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Suites   []xmlSuite `xml:"testsuite"`
	}
	xmlSuite struct {
		Name     string    `xml:"name,attr"`
		Tests    int       `xml:"tests,attr"`
		Failures int       `xml:"failures,attr"`
		Cases    []xmlCase `xml:"testcase"`
	}
	xmlCase struct {
		Classname string      `xml:"classname,attr"`
		Name      string      `xml:"name,attr"`
		Failure   *xmlFailure `xml:"failure"`
		SystemOut string      `xml:"system-out"`
	}
	xmlFailure struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
)

func TestWriteJUnitParses(t *testing.T) {
	rep := outputFixture()
	rep.Suites[0].Results[1].Message = `label "app" must be <set> & ]]> not empty`
	rep.Suites[0].Results[1].Reason = `Want pass, got <fail> & "more"`
	tests := []struct {
		name string
		give OutputOptions
		want xmlSuites
	}{
		{
			name: "every result",
			give: OutputOptions{},
			want: xmlSuites{Tests: 4, Failures: 2, Suites: []xmlSuite{
				{Name: "p", Tests: 3, Failures: 1, Cases: []xmlCase{
					{Classname: "r", Name: "v1/Pod/default/x", SystemOut: "\nReason: Ok\nPolicy: p\nRule: r\nResource: v1/Pod/default/x\nResult: Pass\n"},
					{Classname: "autogen-r", Name: "apps/v1/Deployment/default/y", Failure: &xmlFailure{Message: `Want pass, got <fail> & "more"`, Text: "\nPolicy: p\nRule: autogen-r\nResource: apps/v1/Deployment/default/y\nResult: Fail\n"}},
					{Classname: "r", Name: "v1/Service/default/z", SystemOut: "\nReason: Excluded\nPolicy: p\nRule: r\nResource: v1/Service/default/z\nResult: Pass\n"},
				}},
				{Name: "q", Tests: 1, Failures: 1, Cases: []xmlCase{
					{Classname: "r", Name: "x", Failure: &xmlFailure{Message: "load policies: missing.yaml: no such file", Text: "\nPolicy: q\nRule: r\nResource: x\nResult: Fail\n"}},
				}},
			}},
		},
		{
			name: "failed only, detailed",
			give: OutputOptions{FailOnly: true, Detailed: true},
			want: xmlSuites{Tests: 2, Failures: 2, Suites: []xmlSuite{
				{Name: "p", Tests: 1, Failures: 1, Cases: []xmlCase{
					{Classname: "autogen-r", Name: "apps/v1/Deployment/default/y", Failure: &xmlFailure{Message: `Want pass, got <fail> & "more"`, Text: "\nPolicy: p\nRule: autogen-r\nResource: apps/v1/Deployment/default/y\nResult: Fail\nMessage: label \"app\" must be <set> & ]]> not empty\n"}},
				}},
				{Name: "q", Tests: 1, Failures: 1, Cases: []xmlCase{
					{Classname: "r", Name: "x", Failure: &xmlFailure{Message: "load policies: missing.yaml: no such file", Text: "\nPolicy: q\nRule: r\nResource: x\nResult: Fail\nMessage: \n"}},
				}},
			}},
		},
		{
			name: "no results",
			give: OutputOptions{FailOnly: true},
			want: xmlSuites{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rep
			if tt.name == "no results" {
				r = &Report{Passed: 1, Suites: []SuiteResult{{Path: "a", Results: []Result{{Policy: "p", OK: true}}}}}
			}
			var buf bytes.Buffer
			if err := Write(&buf, FormatJUnit, r, tt.give); err != nil {
				t.Fatalf("Write(junit) error = %v", err)
			}
			var got xmlSuites
			if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatalf("Write(junit) = %q, not XML: %v", buf.String(), err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Write(junit, %+v) mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

func TestWriteYAML(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, FormatYAML, outputFixture(), OutputOptions{FailOnly: true}); err != nil {
		t.Fatalf("Write(yaml) error = %v", err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("Write(yaml) = %q, not YAML: %v", buf.String(), err)
	}
	want := map[string]any{"passed": 2.0, "failed": 2.0, "results": []any{
		map[string]any{"test": "a/kyverno-test.yaml", "policy": "p", "rule": "r", "resource": "apps/v1/Deployment/default/y", "expected": "pass", "actual": "fail", "ok": false, "reason": "Want pass, got fail"},
		map[string]any{"test": "b/kyverno-test.yaml", "policy": "q", "rule": "r", "resource": "x", "expected": "pass", "actual": "", "ok": false, "reason": "load policies: missing.yaml: no such file"},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Write(yaml) mismatch (-want +got):\n%s", diff)
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	err := Write(&bytes.Buffer{}, "html", outputFixture(), OutputOptions{})
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Format != "html" {
		t.Fatalf("Write(html) error = %v, want a *FormatError for html", err)
	}
	if !strings.Contains(err.Error(), "json, yaml, markdown, junit") {
		t.Errorf("Write(html) error = %q, want it to name json, yaml, markdown, junit", err)
	}
}
