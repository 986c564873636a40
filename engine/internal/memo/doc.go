// Package memo holds Bounded, a concurrent cache of values made from their
// key, for values that never change once made (messages, shared read-only
// outcomes). It must stay small and depend on the standard library only.
package memo
