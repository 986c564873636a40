package quantity

import (
	"math"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Parse is resource.ParseQuantity, except that a decimal exponent so
// negative that the value is below the parser's 1n resolution is first
// replaced by a smaller one with the same result: the parser rounds every
// non-zero value up to ±1n.
func Parse(s string) (resource.Quantity, error) {
	if i, exp, ok := quantityExponent(s); ok && int64(exp) < -int64(len(s)+10) {
		s = s[:i+1] + strconv.Itoa(-(len(s) + 10))
	}
	return resource.ParseQuantity(s)
}

// quantityExponent finds a decimal exponent suffix ("e-12", "E5") the way
// resource.ParseQuantity does: after an optional sign, digits, and an
// optional fraction, an 'e' or 'E' followed by an int64, of which the parser
// keeps the low 32 bits. i is the index of the 'e'.
func quantityExponent(s string) (i int, exp int32, ok bool) {
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i+1 >= len(s) || (s[i] != 'e' && s[i] != 'E') {
		return 0, 0, false
	}
	n, err := strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return i, int32(n), true
}

// Cmp is a.Cmp(b). When the two values are many orders of magnitude
// apart it decides from their signs and magnitudes instead of scaling one
// of them to the other's exponent.
func Cmp(a, b resource.Quantity) int {
	da, db := a.AsDec(), b.AsDec()
	if d := int64(da.Scale()) - int64(db.Scale()); d > -1000 && d < 1000 {
		return da.Cmp(db)
	}
	sa, sb := da.Sign(), db.Sign()
	switch {
	case sa < sb:
		return -1
	case sa > sb:
		return 1
	case sa == 0:
		return 0
	}
	// |x| = unscaled * 10^-scale with unscaled in [2^(n-1), 2^n), so
	// log10|x| lies in [(n-1)*log10(2) - scale, n*log10(2) - scale).
	loA, hiA := magnitude(da.UnscaledBig().BitLen(), int64(da.Scale()))
	loB, hiB := magnitude(db.UnscaledBig().BitLen(), int64(db.Scale()))
	switch {
	case hiA+1 < loB: // |a| < |b|
		return -sa
	case hiB+1 < loA: // |a| > |b|
		return sa
	}
	// Close magnitudes: the scales differ by about the difference in digit
	// counts, so the exact comparison costs about the size of the input.
	return da.Cmp(db)
}

func magnitude(bits int, scale int64) (lo, hi float64) {
	return float64(bits-1)*math.Log10(2) - float64(scale), float64(bits)*math.Log10(2) - float64(scale)
}
