// Package testpki makes the TLS material of tests: a certificate authority
// and the certificates it signs for a server on loopback (127.0.0.1 and
// localhost) and for a client, in PEM, written to files when a test needs
// them as flags or options name them.
//
// Read first: NewCA, CA.Issue and WriteFiles.
//
// Only tests import it. It depends on the standard library only.
package testpki
