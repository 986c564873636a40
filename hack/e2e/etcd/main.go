// Command etcd is etcd v3.6 built from the Go module proxy, for the
// end-to-end tests (make e2e-bins). It is a separate module so that
// Verdict's own module never depends on etcd.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
