package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The expected outputs are kyverno jp's (v1.19) on the same input.
func TestRunJP(t *testing.T) {
	tests := []struct {
		name     string
		give     []string
		stdin    string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{
			name:    "query a file",
			give:    []string{"jp", "query", "-i", "testdata/jp-pod.yaml", "metadata.name", "spec.containers[].image"},
			wantOut: "# metadata.name\n\"web\"\n# spec.containers[].image\n[\n  \"nginx:1.25\",\n  \"ghcr.io/x/side\"\n]\n",
		},
		{
			name:    "unquoted, Kyverno function",
			give:    []string{"jp", "query", "-i", "testdata/jp-pod.yaml", "-u", "to_upper(metadata.name)"},
			wantOut: "# to_upper(metadata.name)\nWEB\n",
		},
		{
			name:    "compact, image_normalize",
			give:    []string{"jp", "query", "-i", "testdata/jp-pod.yaml", "-c", "[image_normalize(spec.containers[0].image), length(@)]"},
			wantOut: "# [image_normalize(spec.containers[0].image), length(@)]\n[\"docker.io/nginx:1.25\",4]\n",
		},
		{
			name:    "input from stdin",
			give:    []string{"jp", "query", "metadata.labels.app"},
			stdin:   "metadata: {labels: {app: shop}}\n",
			wantOut: "# metadata.labels.app\n\"shop\"\n",
		},
		{
			name:    "query from stdin",
			give:    []string{"jp", "query", "-i", "testdata/jp-pod.yaml"},
			stdin:   "metadata.name\n",
			wantOut: "# metadata.name\n\n\"web\"\n",
		},
		{
			name:    "query from a file",
			give:    []string{"jp", "query", "-i", "testdata/jp-pod.yaml", "-q", "testdata/jp-query.txt"},
			wantOut: "# sort(keys(metadata.labels))\n[\n  \"app\",\n  \"tier\"\n]\n",
		},
		{
			name:     "syntax error",
			give:     []string{"jp", "query", "-i", "testdata/jp-pod.yaml", "a.["},
			wantCode: 2,
			wantErr:  "Error: failed to compile JMESPath: a.[, error: SyntaxError: Incomplete expression\n",
		},
		{
			name:     "missing key",
			give:     []string{"jp", "query", "-i", "testdata/jp-pod.yaml", "x.y"},
			wantCode: 2,
			wantErr:  "Error: error evaluating JMESPath expression: Unknown key \"x\" in path\n",
		},
		{
			name:     "neither query nor input",
			give:     []string{"jp", "query"},
			wantCode: 2,
			wantErr:  "Error: at least one query or input object is required\n",
		},
		{
			name:     "input over the limit",
			give:     []string{"jp", "query", "--max-input-bytes", "10", "metadata.name"},
			stdin:    "metadata: {name: abcdefgh}",
			wantCode: 2,
			wantErr:  "Error: standard input: larger than 10 bytes, the limit on this file\n",
		},
		{
			name:    "input at the limit",
			give:    []string{"jp", "query", "--max-input-bytes", "10", "a"},
			stdin:   "{a: 12345}",
			wantOut: "# a\n12345\n",
		},
		{
			name:    "parse",
			give:    []string{"jp", "parse", "a.b"},
			wantOut: "# a.b\nASTSubexpression {\n  children: {\n    ASTField {\n      value: \"a\"\n    }\n    ASTField {\n      value: \"b\"\n    }\n}\n\n",
		},
		{
			name:     "parse a syntax error",
			give:     []string{"jp", "parse", "a.["},
			wantCode: 2,
			wantErr:  "Error: SyntaxError: Incomplete expression\na.[\n   ^\n",
		},
		{
			name:    "function by name",
			give:    []string{"jp", "function", "to_upper", "divide"},
			wantOut: "Name: divide\n  Signature: divide(any, any) any\n  Note:      divisor must be non zero\n\nName: to_upper\n  Signature: to_upper(string) string\n  Note:      takes in a string and outputs the same string with all upper-case letters\n\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runIn(context.Background(), tt.give, strings.NewReader(tt.stdin), &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("run(%q) = %d, want %d; stderr %s", tt.give, code, tt.wantCode, stderr.String())
			}
			if diff := cmp.Diff(tt.wantOut, stdout.String()); diff != "" {
				t.Errorf("run(%q) stdout mismatch (-want +got):\n%s", tt.give, diff)
			}
			if diff := cmp.Diff(tt.wantErr, stderr.String()); diff != "" {
				t.Errorf("run(%q) stderr mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

// TestRunJPFunction compares the list of functions with kyverno jp
// function's (v1.19).
func TestRunJPFunction(t *testing.T) {
	want, err := os.ReadFile("testdata/jp-function.txt")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"jp", "function"}, &stdout, &stderr); code != 0 {
		t.Fatalf("run(jp function) = %d, want 0; stderr %s", code, stderr.String())
	}
	if diff := cmp.Diff(string(want), stdout.String()); diff != "" {
		t.Errorf("run(jp function) mismatch (-want +got):\n%s", diff)
	}
}
