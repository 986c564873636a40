package streamrecv

import "context"

// Start calls recv (a stream's Recv) in a new goroutine until it fails,
// and hands each message to the returned message channel (unbuffered: at
// most one message is read ahead of the reader). The first error of recv
// (io.EOF at the end of the stream) is sent on the error channel, which
// holds it (buffer 1) so that the goroutine never waits for a reader.
// The goroutine ends at that error, or when ctx is done while it waits
// to hand a message over; the caller cancels ctx when it stops reading,
// and ends the stream (its context) for a recv that is blocked.
func Start[T any](ctx context.Context, recv func() (T, error)) (<-chan T, <-chan error) {
	msgs := make(chan T)
	errc := make(chan error, 1)
	go func() {
		for {
			m, err := recv()
			if err != nil {
				errc <- err
				return
			}
			select {
			case msgs <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	return msgs, errc
}
