// Package safefile opens the files Verdict reads from disk (policies,
// resources, tests, values) so that a reader never hangs on one: only
// regular files, and symbolic links to them, are read. A named pipe waits
// for a writer that may never come, a device can be read without end, a
// socket cannot be opened at all; each is a *NotRegularError instead.
//
// Read first: Open (Stat before, fstat after, the open itself never
// blocks), ReadFile (a whole file, with a size limit), Files (the files
// of a folder, each entry that is not a regular file handed to a callback
// that skips it or fails the walk), Stat (what other folder walkers call
// to skip such entries with a warning) and NewContextReader (a reader
// that returns when its context ends, even in a blocked Read).
//
// It depends on the standard library only.
package safefile
