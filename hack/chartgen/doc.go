// Command chartgen writes the templates of the Helm chart
// (deploy/helm/verdict/templates) that are derived from deploy/base: the
// CRDs, the RBAC objects and the NetworkPolicies (deploy.ChartTemplates),
// so that the base stays their one source. It removes the generated
// templates that the base no longer has.
//
//	go run ./hack/chartgen            # from the repository root
//	go run ./hack/chartgen -check     # exit 1 when the chart is stale
package main
