package mutate

import (
	"errors"
	"fmt"
)

// StrategicMerge applies a patchStrategicMerge overlay to a resource, as
// Kyverno does: anchors are checked against the resource and removed
// (preprocess.go), then the overlay is merged with kustomize's strategic
// merge semantics (merge.go). A conditional or global anchor that does not
// hold leaves the resource unchanged.
//
// resource and patch are JSON values; neither is modified. The result
// shares the parts the patch did not change with resource: treat both as
// read-only.
func StrategicMerge(resource map[string]any, patch any) (map[string]any, error) {
	return strategicMerge(resource, lazyNode(resource), patch, true)
}

// strategicMerge is StrategicMerge over rn, the resource as nodes. With
// shortcuts, parts of the resource that kyaml's walk would leave as they
// are (unchanged) are not walked; rn must then be lazy. Without, every
// node is walked (the tests compare the two).
func strategicMerge(resource map[string]any, rn *node, patch any, shortcuts bool) (map[string]any, error) {
	pn, err := toNode(patch)
	if err != nil {
		return nil, fmt.Errorf("patch: %w", err)
	}
	return mergeNodes(resource, rn, pn, shortcuts)
}

// Overlay is a patchStrategicMerge overlay converted once, for an overlay
// that is the same at every evaluation (one without variables): its Apply
// gives what StrategicMerge gives with the overlay's value.
type Overlay struct {
	root *node
	size arenaSize
}

// NewOverlay converts a patchStrategicMerge overlay, a JSON value that
// must not change afterwards. Its error is StrategicMerge's with it.
func NewOverlay(patch any) (*Overlay, error) {
	pn, err := toNode(patch)
	if err != nil {
		return nil, fmt.Errorf("patch: %w", err)
	}
	return &Overlay{root: pn, size: pn.arenaSize()}, nil
}

// Apply is StrategicMerge(resource, patch) for the overlay's patch: the
// merge works on a copy of the converted overlay, which stays as it is.
func (o *Overlay) Apply(resource map[string]any) (map[string]any, error) {
	return mergeNodes(resource, lazyNode(resource), o.root.cloneIn(newArena(o.size)), true)
}

// mergeNodes is strategicMerge with the patch converted (pn, which it
// changes).
func mergeNodes(resource map[string]any, rn, pn *node, shortcuts bool) (map[string]any, error) {
	if err := preprocess(pn, rn); err != nil {
		if !isConditionError(err) && !isGlobalError(err) {
			return nil, fmt.Errorf("failed to preProcess rule: %w", err)
		}
		if shortcuts && unchanged(resource, nil) {
			// Merging an empty patch leaves such a resource as it is.
			return resource, nil
		}
		pn = &node{kind: mapNode}
	}
	merged, err := merge(pn, rn)
	if err != nil {
		return nil, err
	}
	if merged == nil {
		return nil, errors.New("filter cannot create or delete objects")
	}
	v, err := merged.value()
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the patched resource is not an object but %s", merged.kind)
	}
	return m, nil
}
