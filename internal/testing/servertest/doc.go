// Package servertest runs a real decision server on a loopback port for
// the tests and benchmarks of other packages (client, scanner, webhook
// proxy), and connects a client to it once it serves.
//
// Read first: Start and Dial.
//
// Only tests import it. It must not hold test logic of its users: each
// builds its policy source and options, and Start only runs the server.
package servertest
