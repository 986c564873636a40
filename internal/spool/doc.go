// Package spool keeps output that must wait for the end of a run (the
// outputs of `verdict apply` and `verdict scan` start with totals known
// last) without holding it in memory: a Spool keeps the first 4 MiB in
// memory, in blocks of 64 KiB (it grows without copying), and the rest in
// a temporary file, unlinked as soon as it is
// made, so that it never outlives the process.
//
// It depends on the standard library only.
package spool
