// Package e2e starts a real etcd and kube-apiserver on loopback for
// end-to-end tests (make e2e), and hands the test a client-go rest.Config
// for an admin user.
//
// Read first: Start (the one entry point), Options and Cluster. BinDir
// tells where the binaries are looked up: VERDICT_E2E_BIN, else bin/e2e
// at the root of the repository. They are built by make e2e-bins from the
// separate modules hack/e2e/apiserver (k8s.io/kubernetes v1.34.4) and
// hack/e2e/etcd (etcd v3.6); when they are missing, Start skips the test
// with the reason instead of failing, so that a package whose e2e tests
// are compiled in still passes without them.
//
// Everything a cluster needs is generated per call in the test's temp
// folder: the apiserver's serving certificate (and the CA the rest.Config
// trusts), the service-account signing key, and a static token file with
// one admin user in system:masters; authorization is RBAC. Both processes
// listen on free 127.0.0.1 ports and are stopped (SIGTERM, then SIGKILL)
// when the test ends; their logs are printed when the test failed.
//
// Used by the e2e tests of cmd/verdict, deploy, reportwriter/kubestore,
// scanner, host/kubelookup and webhookproxy, and by the benchmark harness
// hack/peer (its own module, through a replace; it passes a testing.TB
// stand-in). Depends on client-go's rest package and the standard
// library only; never on Verdict's service packages, and never imported by
// the module's non-test code.
package e2e
