//go:build !unix

package safefile

import "os"

const openFlags = os.O_RDONLY
