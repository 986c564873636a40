// Package kyvernotest runs Kyverno CLI test suites (kyverno-test.yaml) and
// applies policies to resource files, with Verdict's engine, the way
// `kyverno test` and `kyverno apply` do. The verdict CLI is a thin layer
// over it; the conformance check (hack/conformance) runs Kyverno's policy
// library through it.
//
// Read Run and Result first: Run discovers test files, loads each policy,
// resource and values file once, evaluates every policy on every resource
// (tests in parallel) and compares the outcome with each expected result
// following kyverno test's rules (see suiteRun.check). Report holds one
// Result per expected result per resource; Write prints it in one of
// kyverno test's formats (text, json, yaml, markdown, junit:
// outputformats.go). Apply, WriteApplyText and ApplyResult.Reports are kyverno apply and
// its --policy-report; ApplyWrite writes the same outputs as it goes,
// without keeping them (applystream.go), which is what the CLI uses.
//
// Files (files.go): only regular files, and links to them, are read; a
// named pipe, device or socket in a folder is skipped with a line on
// Options.Warnings (ApplyOptions.Warnings), and one named explicitly is an
// error (a *safefile.NotRegularError), never a read that blocks; the one
// exception is Apply's policy or resource path "-" (StdinPath),
// ApplyOptions.Stdin, read once as kyverno apply reads "-". With
// ApplyOptions.ResourceSource (apply --cluster) the resources come from the
// caller instead, for the kinds the policies match (policy.Policy.Kinds);
// this package imports no Kubernetes client. YAML is
// decoded one document at a time (kyverno.Decoder) with a limit on one
// document (MaxDocumentBytes, default kyverno.DefaultMaxDocumentBytes);
// a file read whole (test, values, user info, exceptions) has the same
// limit. Apply reads its resources one document at a time and keeps at
// most a window of ApplyWindow×Parallelism of them, so that its memory
// does not grow with the resource files; they are evaluated on
// Parallelism goroutines and handed to the outputs in the order of the
// files, on one goroutine, so that the outputs are the same for any
// Parallelism (1 evaluates them one after the other). Generate rules and mutate rules with
// targets see the resources of the kinds they can look up
// (policy.Policy.LookupKinds): a first pass over the files keeps those,
// and only those unless a kind is a variable.
//
// The test model is Test, ExpectedResult, ValuesSpec and UserInfo, decoded
// strictly from cli.kyverno.io/v1alpha1 documents (the older schema is
// accepted too; a values file's apiVersion and kind, Values or Value, are
// not checked, as in Kyverno's values.Load). Values map onto eval.Request as in Kyverno's CLI: global,
// resource and rule values become Request.Variables (request.operation
// also sets the operation), namespaceSelector and namespaces become
// Request.NamespaceLabels, subresources map a resource onto its parent.
// There is no cluster: configMap and imageRegistry context entries come
// only from values, apiCall and globalReference entries only from the
// test's mocks; with Options.RegistryAccess and ApplyOptions.RegistryAccess
// (kyverno's --registry, which loads imageRegistry entries from the
// registries) a policy with an imageRegistry entry is an error
// (ErrRegistryEntries).
//
// The other options of kyverno apply (applyextras.go, applyexceptions.go):
// ApplyOptions.ExceptionsWithinResources and ExceptionsWithinPolicies take
// PolicyExceptions from among the resource and policy documents (the
// resource files are then read twice, the first pass decoding only the
// documents that may be PolicyExceptions); CRDPaths are the CRDs the
// ApplyConfigurations of MutatingPolicies merge with, found as a test's
// clusterResources CRDs; JSONPaths are JSON payloads, evaluated instead of
// resources by the JSON-mode ValidatingPolicies only;
// ApplyExceptionsYAML and ApplyExceptionsJSON print a PolicyException per
// failure (--generate-exceptions).
//
// ValidatingPolicies and NamespacedValidatingPolicies load with the
// kyverno.io kinds (vpolicies.go): the test's context file (a
// cli.kyverno.io Context) serves resource.Get and resource.List (its
// resources) and image.GetMetadata (its images), apiCallResponses serve
// http.Get and http.Post, globalContextEntries serve globalContext.Get,
// the values' namespaces (and namespaceSelector entries) are the
// namespaceObject, and policies.kyverno.io PolicyExceptions come from the
// exceptions files. Their expected rule is ignored, and a resource no
// variant of the policy matched is excluded or not found as Kyverno's CLI
// decides (Variant.DropsUnmatched).
//
// ValidatingAdmissionPolicies and their bindings load from the policy
// files too (vaps.go) and run as Kyverno's CLI runs them
// (eval.Options.KyvernoCLI): the bindings of every policy file of a test
// or apply, params found among the paramResources as Kyverno's CLI finds
// them (matchesSelector), namespaceObject of the values' name and labels.
// Their expected rule is ignored, a resource no binding matches is
// excluded, apply counts their pass, fail and error (not skip) and writes
// them with source ValidatingAdmissionPolicy; a test with kyverno.io
// PolicyExceptions and ValidatingAdmissionPolicies is an error, as in
// Kyverno's CLI.
//
// MutatingPolicies and NamespacedMutatingPolicies load the same way
// (their ApplyConfigurations merge a custom resource with the schema of
// the CRDs the test's clusterResources name, found as Kyverno's CLI finds
// them: crds.go), run after the kyverno.io mutate rules, and their patchedResources are
// compared with the resource after every MutatingPolicy, as Kyverno's CLI
// compares them; apply prints the resource after each one that responds,
// and counts their results twice, as Kyverno's CLI counts them.
// MutatingAdmissionPolicies are compiled with the bindings of the policy
// files of their test (or apply), their params are the paramResources
// their bindings select as Kyverno's CLI selects them.
//
// GeneratingPolicies and NamespacedGeneratingPolicies load the same way
// and run after the generate rules; each resource their generator.Apply
// calls ask for is compared with the generatedResource(s) manifests.
// DeletingPolicies and NamespacedDeletingPolicies report, for each
// resource their matchConstraints select, pass when they would delete it
// and fail otherwise, as kyverno test does. A test's clusterResources
// (cli.kyverno.io ClusterResource files) serve resource.Get and
// resource.List with its context file's resources.
//
// The mutated and generated resources apply prints are written by
// internal/yamlenc, which writes yaml.v3's exact output without yaml.v3's
// node tree (yaml.v3 itself for what it does not take). The policy
// reports (--policy-report, ApplyReportYAML) are written as go-yaml v2
// writes them, which is how Kyverno's CLI prints them (sigs.k8s.io/yaml):
// yamlscalar.go ports go-yaml v2's choice of a scalar's style, its folding
// at 80 columns, its escapes and its order of keys, one scalar at a time,
// so that the reports are still written as the results come; its tests
// compare it with go-yaml v2 itself. As in Kyverno's CLI, a namespaced
// Policy has a report per resource and type of rule (namespacedReports),
// and the mutated and generated resources and the skipped policies are
// printed before the reports.
//
// This package uses the engine packages and the YAML and apimachinery
// libraries; it does no network I/O and must not depend on cmd/verdict,
// the server or client-go.
package kyvernotest
