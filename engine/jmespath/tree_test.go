package jmespath

import (
	"errors"
	"testing"

	"github.com/verdict-policy/verdict/engine"
)

func TestTree(t *testing.T) {
	tests := []struct {
		give string
		want string
	}{
		// kyverno jp parse's output (v1.19), go-jmespath's printing.
		{give: "a.b", want: "ASTSubexpression {\n  children: {\n    ASTField {\n      value: \"a\"\n    }\n    ASTField {\n      value: \"b\"\n    }\n}\n"},
		// Function calls are not checked.
		{give: "nope(@)", want: "ASTFunctionExpression {\n  value: \"nope\"\n  children: {\n    ASTCurrentNode {\n    }\n}\n"},
	}
	for _, tt := range tests {
		got, err := Tree(tt.give)
		if err != nil {
			t.Fatalf("Tree(%q) error = %v", tt.give, err)
		}
		if got != tt.want {
			t.Errorf("Tree(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestTreeErrors(t *testing.T) {
	tests := []struct {
		give         string
		wantLocation string
	}{
		{give: "a.[", wantLocation: "a.[\n   ^"},
		{give: string(make([]byte, MaxExpressionBytes+1)), wantLocation: ""},
	}
	for _, tt := range tests {
		_, err := Tree(tt.give)
		var ee *engine.Error
		if !errors.As(err, &ee) || ee.Code != engine.CodeInvalidVariable {
			t.Fatalf("Tree(%.20q) error = %v, want an engine.Error with CodeInvalidVariable", tt.give, err)
		}
		if got := SyntaxLocation(err); got != tt.wantLocation {
			t.Errorf("SyntaxLocation(Tree(%.20q)) = %q, want %q", tt.give, got, tt.wantLocation)
		}
	}
}
