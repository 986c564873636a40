package jmespath

import (
	"errors"

	gojmespath "github.com/kyverno/go-jmespath"
)

// Tree parses expr within Parse's limits, without checking its function
// calls, and returns its parse tree as go-jmespath prints it (what kyverno
// jp parse prints). Errors are as Parse's.
func Tree(expr string) (string, error) {
	ast, err := parseAST(expr, defaultExprLimits)
	if err != nil {
		return "", err
	}
	return ast.String(), nil
}

// SyntaxLocation returns, for a syntax error of Parse, CheckSyntax or Tree,
// the expression with a caret under the position of the error, as kyverno
// jp prints it under the error; "" for any other error.
func SyntaxLocation(err error) string {
	var se gojmespath.SyntaxError
	if errors.As(err, &se) {
		return se.HighlightLocation()
	}
	return ""
}
