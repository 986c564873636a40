// Package options fills the defaults of the Options structs of Verdict's
// services, one field per line: a number left zero (or negative, where
// that means nothing) takes its documented default. For the other fields
// (a logger, a registry, a clock), cmp.Or does the same.
//
// It imports only the standard library.
package options

// Number is the type of a numeric option.
type Number interface {
	~int | ~int32 | ~int64 | ~uint32 | ~float64
}

// Positive sets *v to def when *v is not positive.
func Positive[T Number](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
