// Package options fills the defaults of the Options structs of Verdict's
// services, one field per line: a number left zero (or negative, where
// that means nothing) takes its documented default. For the other fields
// (a logger, a registry, a clock), cmp.Or does the same.
//
// It imports only the standard library.
package options
