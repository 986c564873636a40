// Package libs holds the Go types Kyverno's CEL environment exposes as
// native types. CEL names a native type after the last element of its
// package path, so this package is named as Kyverno's pkg/cel/libs:
// `exceptions` is a libs.Exception in CEL, as in Kyverno.
package libs
