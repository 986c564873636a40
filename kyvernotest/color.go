package kyvernotest

import "strings"

// The ANSI sequences of Kyverno's CLI tables (its output/color package):
// the header cells in green on black (tablewriter's colours, the padding
// inside), and words in bold colours (fatih/color's sequences: colour,
// then bold; reset to normal and not bold).
const (
	ansiHeader = "\x1b[40;32m"
	ansiHeadX  = "\x1b[0m"
	ansiGreen  = "\x1b[32;1m"
	ansiRed    = "\x1b[31;1m"
	ansiYellow = "\x1b[33;1m"
	ansiCyan   = "\x1b[36;1m"
	ansiReset  = "\x1b[0;22m"
)

// Columns of the apply and test tables.
const (
	colPolicy   = 1
	colRule     = 2
	colResource = 3
	colResult   = 4
	colReason   = 5
	colMessage  = 6
)

// painter colours a cell of column col of a table row; nil paints nothing.
type painter func(col int, cell string) string

func paint(code, s string) string { return code + s + ansiReset }

// resultColor is the colour of a RESULT word as Kyverno's
// color.ResultPass, ResultFail... print it.
func resultColor(s string) string {
	switch s {
	case "Pass":
		return paint(ansiGreen, s)
	case "Fail", "Error":
		return paint(ansiRed, s)
	case "Warn":
		return paint(ansiYellow, s)
	case "Skip":
		return paint(ansiCyan, s)
	}
	return s
}

// policyColor is Kyverno's color.Policy: namespace and name apart.
func policyColor(s string) string {
	if ns, name, ok := strings.Cut(s, "/"); ok {
		return paint(ansiCyan, ns) + "/" + paint(ansiCyan, name)
	}
	return paint(ansiCyan, s)
}

// applyPainter colours the cells of kyverno apply --table as Kyverno
// does: policy, rule, each part of namespace/kind/name, the result.
func applyPainter(col int, cell string) string {
	switch col {
	case colPolicy:
		return policyColor(cell)
	case colRule:
		if cell == "" {
			return cell
		}
		return paint(ansiCyan, cell)
	case colResource:
		parts := strings.Split(cell, "/")
		for i, p := range parts {
			parts[i] = paint(ansiCyan, p)
		}
		return strings.Join(parts, "/")
	case colResult:
		return resultColor(cell)
	}
	return cell
}

// testPainter colours the cells of kyverno test's table as Kyverno does:
// policy, rule, the resource's group/version/kind/namespace and its name
// apart, the result, and the words Excluded, Not found and Invalid
// Policy in the REASON and MESSAGE columns.
func testPainter(col int, cell string) string {
	switch col {
	case colPolicy:
		return policyColor(cell)
	case colRule:
		return paint(ansiCyan, cell)
	case colResource:
		if i := strings.LastIndexByte(cell, '/'); i >= 0 {
			return paint(ansiCyan, cell[:i]) + "/" + paint(ansiCyan, cell[i+1:])
		}
		return paint(ansiCyan, "") + "/" + paint(ansiCyan, cell)
	case colResult:
		return resultColor(cell)
	case colReason, colMessage:
		switch cell {
		case ReasonExcluded, ReasonNotFound, ReasonInvalidPolicy:
			return paint(ansiYellow, cell)
		}
	}
	return cell
}
