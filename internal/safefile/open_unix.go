//go:build unix

package safefile

import (
	"os"
	"syscall"
)

// openFlags open a named pipe without waiting for a writer (and a terminal
// without making it the controlling one); reads of a regular file are not
// affected by O_NONBLOCK.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY
