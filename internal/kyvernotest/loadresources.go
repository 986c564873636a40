package kyvernotest

// LoadResources loads the resources of files and folders (the YAML files
// of a folder, not recursively) as Apply does: a namespaced resource
// without a namespace is put in "default", and null labels, annotations
// and similar maps become empty maps. `verdict eval` reads its input with
// it, so that it sends what `verdict apply` would evaluate.
func LoadResources(paths []string) ([]*Resource, error) {
	return newLoader().resources(paths)
}
