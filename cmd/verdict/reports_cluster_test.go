package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestReportShardFlags checks the usage errors of the cluster and shard
// flags of verdict reports serve, serve and scan.
func TestReportShardFlags(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"reports", "serve", "--kubeconfig", "/nonexistent", "--shard", "2/2", "--listen", "127.0.0.1:0", "--metrics-listen", ""}, "--shard \"2/2\""},
		{[]string{"reports", "serve", "--kubeconfig", "/nonexistent", "--shard", "x", "--listen", "127.0.0.1:0", "--metrics-listen", ""}, "--shard \"x\""},
		{[]string{"reports", "serve", "--kubeconfig", "/nonexistent", "--listen", "127.0.0.1:0", "--metrics-listen", ""}, "kubernetes client configuration"},
		{[]string{"reports", "serve", "--shard", "0/2", "--listen", "127.0.0.1:0", "--metrics-listen", ""}, "--shard needs --kubeconfig or --in-cluster"},
		{[]string{"reports", "serve", "--openreports-enabled", "--listen", "127.0.0.1:0", "--metrics-listen", ""}, "--openreports-enabled needs --kubeconfig or --in-cluster"},
		{[]string{"reports", "serve", "--results-per-resource", "--group-results", "--listen", "127.0.0.1:0", "--metrics-listen", ""}, "--results-per-resource=true contradicts --group-results=true"},
		{[]string{"reports", "serve", "--kubeconfig", "/nonexistent", "--omit-events", "PolicyApplied,Violation", "--listen", "127.0.0.1:0", "--metrics-listen", ""}, `--omit-events "Violation": want PolicyViolation, PolicyApplied, PolicyError, PolicySkipped`},
		{[]string{"reports", "serve", "--omit-events", "PolicyApplied", "--listen", "127.0.0.1:0", "--metrics-listen", ""}, "--omit-events needs --kubeconfig or --in-cluster"},
		{[]string{"reports", "serve", "--max-queued-events", "10", "--listen", "127.0.0.1:0", "--metrics-listen", ""}, "--max-queued-events needs --kubeconfig or --in-cluster"},
		{[]string{"serve", "--policies", "../../examples/policies", "--listen", "127.0.0.1:0", "--metrics-listen", "", "--report-writer", "writer:50052", "--report-shards", "2"}, "2 shards need {shard} in the address"},
		{[]string{"scan", "--server", "127.0.0.1:1", "-f", "../../examples/resources", "--report-writer", "writer:50052", "--report-shards", "2"}, "2 shards need {shard} in the address"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		code := run(t.Context(), tt.args, &out, &errOut)
		if code == 0 || !strings.Contains(errOut.String(), tt.wantErr) {
			t.Errorf("verdict %s = exit %d, stderr %q; want a non-zero exit and %q", strings.Join(tt.args, " "), code, errOut.String(), tt.wantErr)
		}
	}
}
