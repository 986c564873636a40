package main

import (
	"bytes"
	"os"
	"testing"
)

func TestUpToDate(t *testing.T) {
	want, err := Generate()
	if err != nil {
		t.Fatalf("Generate() = %v", err)
	}
	got, err := os.ReadFile("../../pod_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("engine/internal/jsonconv/pod_gen.go is not what internal/podgen writes (go generate ./engine/internal/jsonconv)")
	}
}
