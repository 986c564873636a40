package server

import (
	"testing"
	"time"
)

func TestDropLog(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var d dropLog
	tests := []struct {
		name string
		at   time.Time
		want int
	}{
		{"first drop", t0, 1},
		{"within the interval", t0.Add(time.Second), 0},
		{"just before the interval", t0.Add(DropLogInterval - time.Nanosecond), 0},
		{"at the interval: the drops since", t0.Add(DropLogInterval), 3},
		{"again within", t0.Add(DropLogInterval + time.Second), 0},
	}
	for _, tt := range tests {
		if got := d.add(tt.at); got != tt.want {
			t.Errorf("add(%s) = %d, want %d", tt.name, got, tt.want)
		}
	}
}
