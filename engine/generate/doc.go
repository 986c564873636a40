// Package generate builds the resources Kyverno's generate rules create:
// the object of a data or clone pattern, the ownership labels Kyverno puts
// on it (app.kubernetes.io/managed-by and generate.kyverno.io/*), and the
// label kyverno.io/background-gen-rule that marks what generateExisting
// created for triggers that already existed, so that one label selector
// lists them.
//
// Read Pattern (a rendered generate pattern), Owner (who generates, for
// whom) and its Labels, then Build and FromClone. Unchanged is
// Kyverno's test of whether a synchronized resource needs an update, and
// DownstreamSelector selects what a trigger generated, for deletion.
//
// The package is pure: it computes objects and never reads or writes a
// cluster. engine/eval fetches clone sources and existing resources
// through eval.Lookup and returns what to create, update or delete; the
// host applies it. It depends on engine/pattern only.
package generate
