// Package kyverno holds the kyverno.io policy model as it is written
// (Document, Spec, Rule and the types below them) and reads it.
//
// Read first:
//   - Document (types.go): a ClusterPolicy or Policy of kyverno.io/v1 or
//     v2beta1, free-form parts (patterns, conditions, values) as JSON values.
//   - DecodePolicies: multi-document YAML or JSON to []*Document, strictly
//     (unknown fields, wrong types and repeated keys are errors with a field
//     path), checked against the CRD schemas in schema.json (made from the
//     CRDs by gen_schema.go). Documents nesting maps and lists deeper than
//     MaxDocumentDepth are refused before any recursive walk (depth.go).
//     DecodePolicyValue does the same for one document already read into
//     JSON values (by Decoder), without writing it out and reading it again.
//   - PolicyException and DecodeExceptions (exception.go): kyverno.io/v2
//     and v2beta1 PolicyExceptions, strictly against their Go types.
//   - SplitDocuments: multi-document YAML or JSON to JSON objects with their
//     line, for reading resources; Decoder (decoder.go) reads the same one
//     document at a time from an io.Reader, with a limit on the size of a
//     document (DefaultMaxDocumentBytes), so that a large input is read in
//     the memory of its largest document; its Skip leaves documents
//     undecoded by their text. ParseDocument reads one document of the
//     fast parser's subset (fastyaml.go) and declines any other, for
//     callers with a go-yaml path of their own.
//
// YAML is read as Kubernetes and Kyverno read it: go-yaml v2 with
// sigs.k8s.io/yaml's conversion to JSON (YAML 1.1 scalars: `yes` and `on`
// are true, `017` is octal). Documents in the block style manifests use go
// through a fast parser (fastyaml.go) that gives up on anything else, which
// then goes to go-yaml; FuzzFastYAML checks that the two agree.
//
// The package does no I/O of its own (a Decoder reads the io.Reader its
// caller opened) and depends on the standard library, go-yaml and
// the engine error type only; it must not import other engine packages.
package kyverno
