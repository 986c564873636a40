// Package deploy holds Verdict's Kubernetes manifests (kustomize: base,
// overlays/ha, overlays/dev, the components they use, the generated CRDs
// of crds/ and the one-off scan Job of scan-job/) and renders them in
// process, without a kustomize binary, for the tests that check them and
// for end-to-end tests that start Verdict's processes with the manifests'
// own flags.
//
// Read first: Render (one kustomization to objects), Kustomizations (every
// kustomization a user installs), and Workloads / Args (the containers of
// the rendered Deployments, CronJobs and Jobs, by component).
//
// The manifests are the source of truth; this package only reads them. It
// must not be imported by the verdict binary (kustomize is a test-time
// dependency).
package deploy
