package jmespath

import (
	"fmt"
	"math"
	"time"

	"gopkg.in/inf.v0"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Kyverno's error texts ("JMESPath function '<name>': ...").
const (
	errPrefix          = "JMESPath function '%s': "
	errInvalidOperand  = errPrefix + "invalid operand"
	errTypeMismatch    = errPrefix + "Types mismatch"
	errZeroDivision    = errPrefix + "Zero divisor passed"
	errNonIntModulo    = errPrefix + "Non-integer argument(s) passed for modulo"
	errNonIntRound     = errPrefix + "Non-integer argument(s) passed for round off"
	errNegativeRound   = errPrefix + "argument #2 must not be negative"
	errGeneric         = errPrefix + "%s"
	errArgType         = errPrefix + "argument #%d is not of type %s"
	errArgOutOfRange   = errPrefix + "argument #%d: %s"
	errSumEmptyMessage = "at least one element in the array is required"
)

// operand is one argument of an arithmetic function: a number (scalar), a
// resource.Quantity or a time.Duration. A string is a quantity if it parses
// as one ("12", "1Ki", "1m"), else a duration ("1h", "30s").
type operand struct {
	kind operandKind
	f    float64
	q    resource.Quantity
	d    time.Duration
}

type operandKind int

const (
	scalarOperand operandKind = iota
	quantityOperand
	durationOperand
)

func parseOperand(name string, v any) (operand, error) {
	if f, ok := toFloat(v); ok {
		return operand{kind: scalarOperand, f: f}, nil
	}
	if s, ok := v.(string); ok {
		if quantityTooLarge(s) {
			return operand{}, &LimitError{Limit: "MaxQuantityDigits", Max: MaxQuantityDigits, Got: len(s), Function: name}
		}
		if q, err := resource.ParseQuantity(s); err == nil {
			return operand{kind: quantityOperand, q: q}, nil
		}
		if d, err := time.ParseDuration(s); err == nil {
			return operand{kind: durationOperand, d: d}, nil
		}
	}
	return operand{}, fmt.Errorf(errInvalidOperand, name)
}

func parseOperands(name string, args []any) (operand, operand, error) {
	a, err := parseOperand(name, args[0])
	if err != nil {
		return operand{}, operand{}, err
	}
	b, err := parseOperand(name, args[1])
	if err != nil {
		return operand{}, operand{}, err
	}
	return a, b, nil
}

// add: Quantity+Quantity -> Quantity, Duration+Duration -> Duration,
// Number+Number -> Number; anything else is a type mismatch.
func addOperands(name string, a, b operand) (any, error) {
	if a.kind != b.kind {
		return nil, fmt.Errorf(errTypeMismatch, name)
	}
	switch a.kind {
	case quantityOperand:
		a.q.Add(b.q)
		return a.q.String(), nil
	case durationOperand:
		return (a.d + b.d).String(), nil
	default:
		return a.f + b.f, nil
	}
}

func jpAdd(_ *env, args []any) (any, error) {
	a, b, err := parseOperands("add", args)
	if err != nil {
		return nil, err
	}
	return addOperands("add", a, b)
}

// sum folds add over a non-empty array; errors name "sum".
func jpSum(_ *env, args []any) (any, error) {
	list, ok := toSlice(args[0])
	if !ok {
		return nil, fmt.Errorf(errTypeMismatch, "sum")
	}
	if len(list) == 0 {
		return nil, fmt.Errorf(errGeneric, "sum", errSumEmptyMessage)
	}
	result := list[0]
	for _, item := range list[1:] {
		a, b, err := parseOperands("sum", []any{result, item})
		if err != nil {
			return nil, err
		}
		if result, err = addOperands("sum", a, b); err != nil {
			return nil, err
		}
	}
	return result, nil
}

// subtract: same type rules as add.
func jpSubtract(_ *env, args []any) (any, error) {
	a, b, err := parseOperands("subtract", args)
	if err != nil {
		return nil, err
	}
	if a.kind != b.kind {
		return nil, fmt.Errorf(errTypeMismatch, "subtract")
	}
	switch a.kind {
	case quantityOperand:
		a.q.Sub(b.q)
		return a.q.String(), nil
	case durationOperand:
		return (a.d - b.d).String(), nil
	default:
		return a.f - b.f, nil
	}
}

// multiply: Number*Number -> Number; Quantity*Number and Number*Quantity ->
// Quantity; Duration*Number and Number*Duration -> Duration.
func jpMultiply(_ *env, args []any) (any, error) {
	a, b, err := parseOperands("multiply", args)
	if err != nil {
		return nil, err
	}
	if a.kind == scalarOperand && b.kind != scalarOperand {
		a, b = b, a
	}
	if b.kind != scalarOperand {
		return nil, fmt.Errorf(errTypeMismatch, "multiply")
	}
	switch a.kind {
	case quantityOperand:
		factor, err := resource.ParseQuantity(fmt.Sprintf("%v", b.f))
		if err != nil {
			return nil, err
		}
		var prod inf.Dec
		prod.Mul(a.q.AsDec(), factor.AsDec())
		return resource.NewDecimalQuantity(prod, a.q.Format).String(), nil
	case durationOperand:
		seconds := a.d.Seconds() * b.f
		return time.Duration(seconds * float64(time.Second)).String(), nil
	default:
		return a.f * b.f, nil
	}
}

// divide: Number/Number -> Number; Quantity/Quantity and Duration/Duration
// -> Number; Quantity/Number -> Quantity (rounded down at the larger scale);
// Duration/Number -> Duration. A zero divisor is an error.
func jpDivide(_ *env, args []any) (any, error) {
	a, b, err := parseOperands("divide", args)
	if err != nil {
		return nil, err
	}
	zero := fmt.Errorf(errZeroDivision, "divide")
	switch {
	case a.kind == scalarOperand && b.kind == scalarOperand:
		if b.f == 0 {
			return nil, zero
		}
		return a.f / b.f, nil
	case a.kind == quantityOperand && b.kind == quantityOperand:
		divisor := b.q.AsApproximateFloat64()
		if divisor == 0 {
			return nil, zero
		}
		return a.q.AsApproximateFloat64() / divisor, nil
	case a.kind == quantityOperand && b.kind == scalarOperand:
		if b.f == 0 {
			return nil, zero
		}
		divisor, err := resource.ParseQuantity(fmt.Sprintf("%v", b.f))
		if err != nil {
			return nil, err
		}
		scale := inf.Scale(math.Max(float64(a.q.AsDec().Scale()), float64(divisor.AsDec().Scale())))
		var quo inf.Dec
		quo.QuoRound(a.q.AsDec(), divisor.AsDec(), scale, inf.RoundDown)
		return resource.NewDecimalQuantity(quo, a.q.Format).String(), nil
	case a.kind == durationOperand && b.kind == durationOperand:
		if b.d.Seconds() == 0 {
			return nil, zero
		}
		return a.d.Seconds() / b.d.Seconds(), nil
	case a.kind == durationOperand && b.kind == scalarOperand:
		if b.f == 0 {
			return nil, zero
		}
		seconds := a.d.Seconds() / b.f
		return time.Duration(seconds * float64(time.Second)).String(), nil
	}
	return nil, fmt.Errorf(errTypeMismatch, "divide")
}

// modulo: Number%Number -> Number, Quantity%Quantity -> Quantity,
// Duration%Duration -> Duration. Numbers and quantities must be integers.
func jpModulo(_ *env, args []any) (any, error) {
	a, b, err := parseOperands("modulo", args)
	if err != nil {
		return nil, err
	}
	if a.kind != b.kind {
		return nil, fmt.Errorf(errTypeMismatch, "modulo")
	}
	switch a.kind {
	case durationOperand:
		if b.d == 0 {
			return nil, fmt.Errorf(errZeroDivision, "modulo")
		}
		return (a.d % b.d).String(), nil
	case quantityOperand:
		x, y, err := integerOperands(a.q.ToDec().AsApproximateFloat64(), b.q.ToDec().AsApproximateFloat64())
		if err != nil {
			return nil, err
		}
		return resource.NewQuantity(x%y, a.q.Format).String(), nil
	default:
		x, y, err := integerOperands(a.f, b.f)
		if err != nil {
			return nil, err
		}
		return float64(x % y), nil
	}
}

func integerOperands(f1, f2 float64) (int64, int64, error) {
	i1, i2 := int64(f1), int64(f2)
	if f1 != float64(i1) || f2 != float64(i2) {
		return 0, 0, fmt.Errorf(errNonIntModulo, "modulo")
	}
	if i2 == 0 {
		return 0, 0, fmt.Errorf(errZeroDivision, "modulo")
	}
	return i1, i2, nil
}

// round rounds half away from zero to the given number of decimals.
func jpRound(_ *env, args []any) (any, error) {
	x, digits := args[0].(float64), args[1].(float64)
	n, err := intNumber(digits)
	if err != nil {
		return nil, fmt.Errorf(errNonIntRound, "round")
	}
	if n < 0 {
		return nil, fmt.Errorf(errNegativeRound, "round")
	}
	shift := math.Pow(10, float64(n))
	return math.Round(x*shift) / shift, nil
}

// intNumber returns f as an int if it is integral and in range.
func intNumber(f float64) (int, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) || math.Trunc(f) != f {
		return 0, fmt.Errorf("expected an integer number but got: %g", f)
	}
	n := int(f)
	if float64(n) != f {
		return 0, fmt.Errorf("number is outside the range of integer numbers: %g", f)
	}
	return n, nil
}
