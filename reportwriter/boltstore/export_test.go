package boltstore

// NoSync returns o with fsync off, for tests that open many stores.
func NoSync(o Options) Options {
	o.noSync = true
	return o
}
