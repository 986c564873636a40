package dpol

import (
	_ "embed"

	policiesv1 "github.com/kyverno/api/api/policies.kyverno.io/v1"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// schemaJSON holds the CRD schemas of the kinds by "Kind/version", made
// by engine/vpol/gen_schema.go from the DeletingPolicy and
// NamespacedDeletingPolicy CRDs:
//
//	go run ./engine/vpol/gen_schema.go \
//	    ../shared/kyverno-docs/crds/schemas-policies.kyverno.io/policies.kyverno.io_deletingpolicies.yaml \
//	    ../shared/kyverno-docs/crds/schemas-policies.kyverno.io/policies.kyverno.io_namespaceddeletingpolicies.yaml > engine/dpol/schema.json
//
//go:embed schema.json
var schemaJSON []byte

// Policies decodes the DeletingPolicy and NamespacedDeletingPolicy
// documents, strictly against the CRD schema of their version
// (vpol.Family): its Decode reads every one of a multi-document YAML or
// JSON input, its DecodePolicy one object as kyverno.SplitDocuments
// returns it, and its IsPolicy tells whether an apiVersion and kind name
// one of them. An unknown field, or a value of the wrong type, is an
// error with Code engine.CodeDecode and the field path
// ("spec.conditions[0].expresion"); a version the CRD does not serve is
// an error with Code engine.CodeUnsupported at "apiVersion".
var Policies = vpol.NewFamily[policiesv1.DeletingPolicySpec]("dpol", KindDeletingPolicy, schemaJSON)
