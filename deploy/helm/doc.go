// Package helm renders and checks the Helm chart of deploy/helm/verdict in
// process, with Helm's own packages (helm.sh/helm/v3), in a module of its
// own so that the verdict module does not depend on Helm.
//
// Read first: Render (the chart's objects for a release namespace, values
// files and --set values, as helm template makes them). The tests run on
// the rendered objects the checks the kustomize manifests pass
// (deploy.CheckStrictDecode and the others), run helm lint, and compare
// the chart with each values file against the kustomization it stands for
// (values.yaml: deploy/base; values-dev.yaml: overlays/dev; values-ha.yaml:
// overlays/ha).
package helm
