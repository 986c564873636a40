package scanner

import "io"

// WithOpen sets the function a FileSource opens its files with.
func WithOpen(o FileOptions, open func(path string) (io.ReadCloser, error)) FileOptions {
	o.open = open
	return o
}
