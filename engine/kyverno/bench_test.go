package kyverno

import (
	"fmt"
	"strings"
	"testing"
)

// manifests returns about n bytes of Deployment manifests.
func manifests(n int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-%[1]d
  namespace: ns-%[2]d
  labels:
    app: app-%[1]d
    tier: backend
  annotations:
    note: "some annotation value %[1]d"
spec:
  replicas: 3
  selector:
    matchLabels:
      app: app-%[1]d
  template:
    metadata:
      labels:
        app: app-%[1]d
    spec:
      containers:
      - name: main
        image: registry.example.com/app:%[1]d.0
        ports:
        - containerPort: 8080
          protocol: TCP
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits:
            cpu: "1"
            memory: 1Gi
        env:
        - name: FOO
          value: bar
        - name: N
          value: "%[1]d"
        args:
        - |
          echo start
          exec app --port 8080
      - name: sidecar
        image: busybox:1.36
        command: ["sh", "-c", "sleep 3600"]
`, i, i%7)
	}
	return []byte(b.String())
}

func BenchmarkSplitDocuments(b *testing.B) {
	data := manifests(1500 << 10)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SplitDocuments("bench.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSplitDocumentsGoYAML is the same input through go-yaml alone,
// for comparison.
func BenchmarkSplitDocumentsGoYAML(b *testing.B) {
	data := manifests(1500 << 10)
	chunks, err := splitChunks(string(data))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range chunks {
			if _, err := parseSlow(c, false); err != nil {
				b.Fatal(err)
			}
		}
	}
}
