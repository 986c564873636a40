// Package deploy holds Verdict's Kubernetes manifests (kustomize: base,
// overlays/ha, overlays/dev, the components they use, the generated CRDs
// of crds/ and the one-off scan Job of scan-job/) and its Helm chart
// (helm/verdict), renders the manifests in process, without a kustomize
// binary, for the tests that check them and for end-to-end tests that
// start Verdict's processes with the manifests' own flags, and checks any
// install's objects the same way.
//
// Read first: Render (one kustomization to objects), Kustomizations (every
// kustomization a user installs), Workloads / Args (the containers of the
// rendered Deployments, CronJobs and Jobs, by component), the Check
// functions (strict decoding, CRDs, namespaces, pod security, webhooks,
// RBAC), which the kustomizations' tests here and the chart's tests of the
// deploy/helm module both run, and ChartTemplates (the chart's templates
// derived from the base: CRDs, RBAC, NetworkPolicies; hack/chartgen writes
// them). RenderChart renders the chart with a helm binary, for end-to-end
// tests; deploy/helm renders it in process with Helm's packages.
//
// The base is the source of truth; this package only reads it. It must not
// be imported by the verdict binary (kustomize is a test-time
// dependency).
package deploy
