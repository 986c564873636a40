// Package streamrecv reads a gRPC stream ahead in a goroutine of its own,
// so that the goroutine that serves the stream can wait on its messages,
// its end and other events in one select: the decision server's
// EvaluateStream and the publisher's stream to the report writer do.
//
// Read first: Start. It depends on the standard library only (a stream
// is given by its Recv method).
package streamrecv
