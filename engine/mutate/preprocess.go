package mutate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/verdict-policy/verdict/engine/pattern"
)

// This file is Kyverno's strategic merge preprocessing
// (pkg/engine/mutate/patch/strategicPreprocessing.go): before the merge,
// the anchors of the patch are checked against the resource and removed.
// Conditional anchors that do not hold make the whole patch empty; in a
// list of maps, a patch element with anchors is applied, by name, to each
// resource element that satisfies them; add-if-not-present anchors become
// plain keys when the resource lacks the key and vanish otherwise. Kyverno's
// quirks are kept: a list element's copy is shared by the resource
// elements it is checked against, so an add anchor consumed by the first
// element is gone for the next ones, and deleting anchored list elements
// shifts the indexes of later ones.

// anchorType is the modifier of an anchored key.
type anchorType byte

const (
	anchorCondition anchorType = 0
	anchorGlobal    anchorType = '<'
	anchorNegation  anchorType = 'X'
	anchorAdd       anchorType = '+'
	anchorEquality  anchorType = '='
	anchorExistence anchorType = '^'
)

type anchor struct {
	typ anchorType
	key string
	// text is the anchored key, trimmed: String.
	text string
}

// parseAnchor is Kyverno's anchor.Parse: `^([+<=X^])?\((.+)\)$` on the
// trimmed key.
func parseAnchor(s string) (anchor, bool) {
	s = strings.TrimSpace(s)
	text := s
	typ := anchorCondition
	if len(s) > 1 && s[1] == '(' {
		switch s[0] {
		case '+', '<', '=', 'X', '^':
			typ = anchorType(s[0])
			s = s[1:]
		}
	}
	if len(s) < 3 || s[0] != '(' || s[len(s)-1] != ')' || strings.IndexByte(s, '\n') >= 0 {
		return anchor{}, false
	}
	return anchor{typ: typ, key: s[1 : len(s)-1], text: text}, true
}

// String is the anchored key, rebuilt as Kyverno does (which gives the
// trimmed key parsed).
func (a anchor) String() string { return a.text }

func containsCondition(a anchor) bool { return a.typ == anchorCondition || a.typ == anchorGlobal }
func isCondition(a anchor) bool       { return a.typ == anchorCondition }
func isGlobal(a anchor) bool          { return a.typ == anchorGlobal }
func isAdd(a anchor) bool             { return a.typ == anchorAdd }

// hasAnchor: the anchors preprocessing handles.
func hasAnchor(a anchor) bool { return containsCondition(a) || isAdd(a) }

// conditionError: a conditional anchor does not hold; globalError: a
// global anchor does not hold. Both skip the patch.
type conditionError struct{ err error }

func (e *conditionError) Error() string { return "condition failed: " + e.err.Error() }

type globalError struct{ err error }

func (e *globalError) Error() string { return "global condition failed: " + e.err.Error() }

func isConditionError(err error) bool {
	var ce *conditionError
	return errors.As(err, &ce)
}

func isGlobalError(err error) bool {
	var ge *globalError
	return errors.As(err, &ge)
}

// preprocess checks and removes the anchors of pat against resource. It
// only reads the resource, and through peek and peekItems, which leave
// lazy nodes lazy (the merge's shortcuts need them).
func preprocess(pat, resource *node) error {
	if err := preprocessNode(pat, resource); err != nil {
		return err
	}
	return deleteConditionElements(pat)
}

func preprocessNode(pat, resource *node) error {
	switch {
	case pat == nil:
		return nil
	case pat.kind == mapNode:
		return walkPatternMap(pat, resource)
	case pat.kind == listNode:
		if len(pat.items) > 0 && pat.items[0] != nil && pat.items[0].kind == mapNode {
			return processListOfMaps(pat, resource)
		}
	}
	return nil
}

func walkPatternMap(pat, resource *node) error {
	if _, err := handleAddAnchors(pat, resource); err != nil {
		return fmt.Errorf("failed to process addIfNotPresent anchor: %w", err)
	}
	if err := checkConditions(pat, resource); err != nil {
		return err
	}
	for _, key := range nonAnchorKeys(pat) {
		var rv *node
		if resource != nil && resource.hasField(key) {
			rv = resource.peek(key)
		}
		if err := preprocessNode(pat.field(key), rv); err != nil {
			return err
		}
	}
	return nil
}

// processListOfMaps applies each anchored element of a patch list to the
// resource elements that satisfy its anchors: for each, a copy without
// anchors named after the resource element is appended to the patch list.
func processListOfMaps(pat, resource *node) error {
	if resource != nil && !resource.null && resource.kind != listNode {
		return kindError(listNode, resource)
	}
	var resourceItems []*node
	if resource != nil {
		resourceItems = resource.peekItems()
	}
	elements := append([]*node(nil), pat.items...)
	for _, elem := range elements {
		if !hasAnchors(elem, hasAnchor) {
			continue
		}
		hasGlobal := hasAnchors(elem, isGlobal)
		globalPassed := false
		var lastGlobal error
		cp := elem.copy()
		for _, re := range resourceItems {
			if err := preprocessNode(cp, re); err != nil {
				switch {
				case isConditionError(err):
					continue
				case isGlobalError(err):
					lastGlobal = err
					continue
				}
				return err
			}
			if hasGlobal {
				globalPassed = true
				continue
			}
			if err := addNamedElement(pat, cp, re); err != nil {
				return fmt.Errorf("failed to update name in pattern: %w", err)
			}
		}
		if resource == nil {
			if err := preprocessNode(cp, nil); err != nil {
				if isConditionError(err) {
					continue
				}
				return err
			}
			if hasGlobal {
				globalPassed = true
			}
		}
		if !globalPassed && lastGlobal != nil {
			return lastGlobal
		}
	}
	return nil
}

// addNamedElement is Kyverno's handlePatternName.
func addNamedElement(pat, elem, resourceElem *node) error {
	name := resourceElem.field("name")
	if nilOrEmpty(name) {
		return nil
	}
	n := elem.copy()
	empty, err := deleteAnchors(n, true, false)
	if err != nil {
		return err
	}
	if empty {
		return nil
	}
	if n.kind != mapNode {
		return kindError(mapNode, n)
	}
	n.setField("name", name)
	pat.items = append(pat.items, n)
	return nil
}

// checkConditions checks the global anchors, then the conditional ones.
func checkConditions(pat, resource *node) error {
	if err := checkAnchors(pat, resource, isGlobal); err != nil {
		return &globalError{err}
	}
	if err := checkAnchors(pat, resource, isCondition); err != nil {
		return &conditionError{err}
	}
	return nil
}

// handleAddAnchors removes +(key) when the resource has key, and turns it
// into key otherwise.
func handleAddAnchors(pat, resource *node) (int, error) {
	anchors := filterKeys(pat, isAdd)
	for _, a := range anchors {
		if resource != nil && resource.hasField(a.key) {
			pat.clearField(a.String())
		} else {
			pat.renameField(a.String(), a.key)
		}
	}
	return len(anchors), nil
}

func filterKeys(n *node, keep func(anchor) bool) []anchor {
	if n == nil || n.kind != mapNode {
		return nil
	}
	var out []anchor
	for _, k := range n.keys {
		if a, ok := parseAnchor(k); ok && keep(a) {
			out = append(out, a)
		}
	}
	return out
}

func nonAnchorKeys(n *node) []string {
	if n == nil || n.kind != mapNode {
		return nil
	}
	var out []string
	for _, k := range n.keys {
		if a, ok := parseAnchor(k); !ok || !hasAnchor(a) {
			out = append(out, k)
		}
	}
	return out
}

func hasAnchors(n *node, is func(anchor) bool) bool {
	if n == nil {
		return false
	}
	switch n.kind {
	case mapNode:
		for i, k := range n.keys {
			if a, ok := parseAnchor(k); ok && is(a) {
				return true
			}
			if v := n.vals[i]; !nilOrEmpty(v) && hasAnchors(v, is) {
				return true
			}
		}
	case scalarNode:
		a, ok := parseAnchor(n.text)
		return ok && containsCondition(a)
	case listNode:
		for _, item := range n.items {
			if hasAnchors(item, is) {
				return true
			}
		}
	}
	return false
}

func checkAnchors(pat, resource *node, filter func(anchor) bool) error {
	for _, a := range filterKeys(pat, filter) {
		if resource == nil || !resource.hasField(a.key) {
			return fmt.Errorf("could not found \"%s\" key in the resource", a.key)
		}
		pv := pat.field(a.String())
		if !pat.hasField(a.String()) {
			return fmt.Errorf("anchor %q is not a key of the patch", a.String())
		}
		rv := resource.peek(a.key)
		if n, err := handleAddAnchors(pv, rv); err != nil {
			return err
		} else if n > 0 {
			continue
		}
		if err := checkCondition(pv, rv); err != nil {
			return err
		}
	}
	return nil
}

// checkCondition matches the resource value against the anchor's value as
// a validate pattern. Scalars are compared as their text, as Kyverno reads
// them from YAML nodes.
func checkCondition(pv, rv *node) error {
	p, err := conditionValue(pv)
	if err != nil {
		return err
	}
	r, err := conditionValue(rv)
	if err != nil {
		return err
	}
	res := pattern.CompileSubstituted(p).Validate(r)
	if res.Status != pattern.Pass {
		if res.Message == "" {
			return errors.New("resource value does not match the anchor")
		}
		return errors.New(res.Message)
	}
	return nil
}

func conditionValue(n *node) (any, error) {
	if n == nil {
		return nil, nil
	}
	if n.kind == scalarNode {
		return n.text, nil
	}
	return n.value()
}

// deleteConditionElements removes the anchors left in the patch after
// preprocessing: the conditional ones and the elements that hold them.
func deleteConditionElements(pat *node) error {
	if missingOrNull(pat) {
		return nil
	}
	if pat.kind != mapNode {
		return kindError(mapNode, pat)
	}
	for _, k := range append([]string(nil), pat.keys...) {
		a, ok := parseAnchor(k)
		deleteScalar := ok && containsCondition(a)
		del, err := deleteAnchors(pat.field(k), deleteScalar, false)
		if err != nil {
			return err
		}
		if del {
			pat.clearField(k)
		}
	}
	return nil
}

// deleteAnchors removes the anchors of n and reports whether n itself
// must go (it held only anchors).
func deleteAnchors(n *node, deleteScalar, traverseMaps bool) (bool, error) {
	if n == nil {
		return false, nil
	}
	switch n.kind {
	case mapNode:
		return deleteAnchorsInMap(n, traverseMaps)
	case listNode:
		return deleteAnchorsInList(n, traverseMaps)
	case scalarNode:
		return deleteScalar, nil
	}
	return false, nil
}

func deleteAnchorsInMap(n *node, traverseMaps bool) (bool, error) {
	anchorsExist := false
	for _, a := range filterKeys(n, containsCondition) {
		if !n.hasField(a.String()) {
			continue
		}
		del, err := deleteAnchors(n.field(a.String()), true, traverseMaps)
		if err != nil {
			return false, err
		}
		if del {
			n.clearField(a.String())
		} else {
			anchorsExist = true
		}
	}
	if anchorsExist {
		for _, a := range filterKeys(n, containsCondition) {
			n.renameField(a.String(), a.key)
		}
	}
	needToDelete := true
	for _, k := range append([]string(nil), n.keys...) {
		del, err := deleteAnchors(n.field(k), false, traverseMaps)
		if err != nil {
			return false, err
		}
		if del {
			n.clearField(k)
		} else {
			needToDelete = false
		}
	}
	return needToDelete, nil
}

func deleteAnchorsInList(n *node, traverseMaps bool) (bool, error) {
	elements := append([]*node(nil), n.items...)
	wasEmpty := len(elements) == 0
	for i, elem := range elements {
		del := false
		if hasAnchors(elem, hasAnchor) {
			del = true
			if traverseMaps && elem != nil && elem.kind == mapNode {
				var err error
				if del, err = deleteAnchors(elem, true, traverseMaps); err != nil {
					return false, err
				}
			}
		} else {
			var err error
			if del, err = deleteAnchors(elem, false, traverseMaps); err != nil {
				return false, fmt.Errorf("failed to delete anchors: %w", err)
			}
		}
		if del {
			// Kyverno deletes by the index in the original list, after
			// earlier deletions shifted the elements.
			if i >= len(n.items) {
				return false, fmt.Errorf("failed to delete anchors: list element %d out of range [%d:%d]", i, i+1, len(n.items))
			}
			n.items = append(n.items[:i], n.items[i+1:]...)
		}
	}
	if len(n.items) == 0 && !wasEmpty {
		return true, nil
	}
	return false, nil
}
