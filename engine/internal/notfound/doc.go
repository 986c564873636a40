// Package notfound holds the one error value a host wraps for data that
// does not exist, so that the engine's packages that cannot import the
// engine's root (engine/kyvernocel) and the root (engine.ErrNotFound, which
// hosts see) share it.
//
// This package is internal to the engine and imports only the standard
// library.
package notfound

import "errors"

// Err is engine.ErrNotFound.
var Err = errors.New("not found")
