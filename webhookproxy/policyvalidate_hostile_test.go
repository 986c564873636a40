package webhookproxy_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/verdict-policy/verdict/internal/testing/hostile"
	"github.com/verdict-policy/verdict/server"
	"github.com/verdict-policy/verdict/webhookproxy"
)

// TestPolicyValidateHostile: the JMESPath expressions that crashed the
// decision servers of issue 17 (a stack overflow in go-jmespath's parser)
// are refused at admission, with the field and the limit named, so that
// they never reach the servers' policy sources.
func TestPolicyValidateHostile(t *testing.T) {
	// A server that takes documents of the hostile sizes, so that they
	// reach the compiler (the default --max-request-policy-bytes refuses
	// the largest before, TestValidatePoliciesLimits in server).
	c := startDecisionServerWith(t, server.Options{MaxRequestPolicyBytes: 4 << 20})
	p := startProxy(t, c, webhookproxy.Options{}, nil, nil)
	tests := []struct {
		name      string
		giveExpr  string
		wantLimit string
	}{
		{name: "a million parentheses", giveExpr: strings.Repeat("(", 1_000_000) + "a" + strings.Repeat(")", 1_000_000), wantLimit: "MaxExpressionBytes"},
		{name: "nested brackets", giveExpr: strings.Repeat("[", 30000) + "a" + strings.Repeat("]", 30000), wantLimit: "MaxExpressionNesting"},
		{name: "long chain", giveExpr: "a" + strings.Repeat(" || a", 10000), wantLimit: "MaxExpressionDepth"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, raw := p.post(t, "/policyvalidate", review("u1", "CREATE", "ClusterPolicy", "", policyJSON(t, hostile.MessagePolicy("hostile", tt.giveExpr))))
			if code != http.StatusOK {
				t.Fatalf("POST /policyvalidate (%s) = %d %.300s, want 200", tt.name, code, raw)
			}
			resp := responseOf(out)
			if resp["allowed"] != false {
				t.Fatalf("POST /policyvalidate (%s) allowed = %v, want false", tt.name, resp["allowed"])
			}
			st, _ := resp["status"].(map[string]any)
			msg, _ := st["message"].(string)
			for _, want := range []string{"ClusterPolicy hostile is invalid:", "spec.rules[0].validate.message: ", tt.wantLimit} {
				if !strings.Contains(msg, want) {
					t.Errorf("POST /policyvalidate (%s) message = %.300q, want it to contain %q", tt.name, msg, want)
				}
			}
			if len(msg) > 2048 {
				t.Errorf("POST /policyvalidate (%s) message of %d bytes, want at most 2 KiB", tt.name, len(msg))
			}
		})
	}
}
