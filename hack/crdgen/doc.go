// Command crdgen writes the CustomResourceDefinitions Verdict reads and
// writes into deploy/crds, from Kyverno's published CRD files (kyverno.io
// ClusterPolicy, Policy, PolicyException and GlobalContextEntry;
// wgpolicyk8s.io PolicyReport
// and ClusterPolicyReport; from the policies.kyverno.io folder,
// ValidatingPolicy, NamespacedValidatingPolicy, MutatingPolicy,
// NamespacedMutatingPolicy, ImageValidatingPolicy,
// NamespacedImageValidatingPolicy, GeneratingPolicy, DeletingPolicy, their
// namespaced kinds and PolicyException), and
// from openreports.io's published files (Report and ClusterReport, which
// Kyverno 1.19 can write instead of the wgpolicyk8s.io reports), so that
// the manifests have one source.
//
//	go run ./hack/crdgen                      # from the repository root
//	go run ./hack/crdgen -schemas DIR -policies-schemas DIR -openreports-schemas DIR -out deploy/crds
//	go run ./hack/crdgen -check               # exit 1 when deploy/crds is stale
//
// Each CRD is copied as published except that the description of every
// schema node is dropped (ClusterPolicy and Policy shrink from 1.4 MB to
// 540 KB, far from etcd's 1.5 MB request limit; they stay over the 256 KB
// that a client-side kubectl apply can keep in its last-applied
// annotation, so they are applied server-side), and the labels app.kubernetes.io/part-of:
// verdict and app.kubernetes.io/managed-by: kustomize are added. The
// structure, validations, versions and printer columns are unchanged.
// A kustomization.yaml listing the files is written next to them.
package main
