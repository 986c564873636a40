package streamrecv

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// source is a stream's Recv over a list of messages, then err.
func source(msgs []int, err error) func() (int, error) {
	return func() (int, error) {
		if len(msgs) == 0 {
			return 0, err
		}
		m := msgs[0]
		msgs = msgs[1:]
		return m, nil
	}
}

func TestStart(t *testing.T) {
	tests := []struct {
		name    string
		msgs    []int
		err     error
		wantErr error
	}{
		{name: "messages then end", msgs: []int{1, 2, 3}, err: io.EOF, wantErr: io.EOF},
		{name: "no message", err: io.EOF, wantErr: io.EOF},
		{name: "messages then failure", msgs: []int{4}, err: errors.New("reset"), wantErr: errors.New("reset")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs, errc := Start(context.Background(), source(tt.msgs, tt.err))
			var got []int
			for {
				select {
				case m := <-msgs:
					got = append(got, m)
					continue
				case err := <-errc:
					if err.Error() != tt.wantErr.Error() {
						t.Errorf("Start(%v) error = %v, want %v", tt.msgs, err, tt.wantErr)
					}
				}
				break
			}
			if diff := cmp.Diff(tt.msgs, got); diff != "" {
				t.Errorf("Start(%v) messages (-want +got):\n%s", tt.msgs, diff)
			}
		})
	}
}
