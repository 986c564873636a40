package libs

// Exception is the value of `exceptions`: what the PolicyExceptions that
// match a resource allow without exempting it.
type Exception struct {
	AllowedImages []string `cel:"allowedImages"`
	AllowedValues []string `cel:"allowedValues"`
}
