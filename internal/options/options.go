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
