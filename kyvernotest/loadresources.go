package kyvernotest

import "io"

// LoadOptions configure LoadResources.
type LoadOptions struct {
	// MaxDocumentBytes limits one YAML document. Default
	// kyverno.DefaultMaxDocumentBytes (32 MiB).
	MaxDocumentBytes int
	// Warnings receives a line per folder entry skipped because it is not
	// a regular file. Default: none.
	Warnings io.Writer
}

// LoadResources loads the resources of files and folders (the YAML files
// of a folder, not recursively) as Apply does: a namespaced resource
// without a namespace is put in "default", and null labels, annotations
// and similar maps become empty maps. `verdict eval` reads its input with
// it, so that it sends what `verdict apply` would evaluate. Only regular
// files are read: one named is an error, one in a folder is skipped.
func LoadResources(paths []string, opts LoadOptions) ([]*Resource, error) {
	return newLoader(fileOptions{maxDocument: opts.MaxDocumentBytes, warnings: opts.Warnings}).resources(paths)
}
