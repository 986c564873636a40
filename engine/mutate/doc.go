// Package mutate applies Kyverno's mutate patches to JSON values: the
// strategic merge overlay of patchStrategicMerge, with its anchors, and
// RFC 6902 patches of patchesJson6902; and it computes the RFC 6902 patch
// between an object and its mutated form, for admission responses.
//
// Read StrategicMerge first. It reproduces what Kyverno does, which is
// kustomize's strategic merge (kyaml's merge2 walker) after Kyverno's
// anchor preprocessing:
//
//   - conditional anchors (key) and global anchors <(key) must match the
//     resource (as validate patterns) or the patch does nothing; in a list
//     of maps, an element with anchors applies to each resource element
//     that satisfies them, matched by name;
//   - add-if-not-present anchors +(key) add key only when the resource
//     lacks it;
//   - other anchors (=(), X(), ^()) are plain keys in a mutate patch;
//   - lists merge by key where the Kubernetes v1.21.2 schema of a built-in
//     type says so (containers by name, ports by containerPort and
//     protocol, ...), with the patch's items first; other lists, and every
//     list of a custom resource, are replaced; "$patch: delete|replace"
//     directives and null values work as in kustomize.
//
// The merge-key schema is a generated table (schema_table.go, from
// hack/mergeschema), so this package needs no OpenAPI parser at run time.
// NewOverlay converts an overlay once (engine/policy does it for the
// overlays without variables); Overlay.Apply is StrategicMerge with it,
// on a copy, so one Overlay serves any number of merges.
// ParseJSON6902 and JSONPatch.Apply wrap github.com/evanphx/json-patch/v5
// with Kyverno's options. Diff and MarshalPatch build the JSON Patch of an
// admission response; MarshalPatch writes what json.Marshal would, without
// reflection for the values decoded JSON holds.
//
// Everything here is pure: no I/O, no globals that change, no logging. It
// depends on engine/pattern (conditional anchors are validate patterns),
// engine/internal/jsonquote, evanphx/json-patch and sigs.k8s.io/yaml only;
// variables are substituted by the caller (engine/eval) before a patch is
// applied.
package mutate
