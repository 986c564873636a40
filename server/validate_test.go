package server

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

const userInfoBackgroundPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: who-created
spec:
  background: true
  rules:
  - name: check-user
    match:
      any:
      - resources:
          kinds: [ConfigMap]
    validate:
      message: "created by {{ request.userInfo.username }}"
      deny:
        conditions:
          any:
          - key: "{{ request.userInfo.username }}"
            operator: Equals
            value: mallory
`

func TestValidatePolicies(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.client(t)
	waitServing(t, dial(t, ts.addr))

	type doc struct {
		Policies []string
		Codes    []string
		Paths    []string
	}
	tests := []struct {
		name string
		give string
		want doc
	}{
		{"valid", nsPurposePolicy, doc{Policies: []string{"ClusterPolicy/require-ns-purpose-label"}}},
		{"userInfo in a background policy", userInfoBackgroundPolicy, doc{
			Policies: []string{"ClusterPolicy/who-created"},
			Codes:    []string{"background_userinfo"},
			Paths:    []string{"spec.rules[0]"},
		}},
		{"misspelled variable (Kyverno's allowed-variables check)", strings.Replace(userInfoBackgroundPolicy, "created by {{ request.userInfo.username }}", "name {{ reqest.object.metadata.name }}", 1), doc{
			Policies: []string{"ClusterPolicy/who-created"},
			Codes:    []string{"background_userinfo", "invalid_variable"},
			Paths:    []string{"spec.rules[0]", "spec.rules[0].validate.message"},
		}},
		{"unknown field", strings.Replace(nsPurposePolicy, "      validate:", "      validat:", 1), doc{
			Policies: []string{"ClusterPolicy/require-ns-purpose-label"},
			Codes:    []string{"decode_error"},
			Paths:    []string{"spec.rules[0].validat"},
		}},
		{"not a kyverno policy", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", doc{Codes: []string{"decode_error"}, Paths: []string{"apiVersion"}}},
		{"not YAML", "a: [", doc{Codes: []string{"decode_error"}, Paths: []string{""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.ValidatePolicies(t.Context(), &verdictv1.ValidatePoliciesRequest{Documents: [][]byte{[]byte(tt.give)}})
			if err != nil {
				t.Fatalf("ValidatePolicies: %v", err)
			}
			if len(resp.GetDocuments()) != 1 {
				t.Fatalf("ValidatePolicies returned %d documents, want 1", len(resp.GetDocuments()))
			}
			d := resp.GetDocuments()[0]
			got := doc{Policies: d.GetPolicies()}
			for _, e := range d.GetErrors() {
				got.Codes = append(got.Codes, e.GetCode())
				got.Paths = append(got.Paths, e.GetPath())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidatePolicies(%s) (-want +got):\n%s\nerrors: %v", tt.name, diff, d.GetErrors())
			}
		})
	}

	t.Run("too many documents", func(t *testing.T) {
		docs := make([][]byte, maxValidateDocuments+1)
		for i := range docs {
			docs[i] = []byte(nsPurposePolicy)
		}
		_, err := c.ValidatePolicies(t.Context(), &verdictv1.ValidatePoliciesRequest{Documents: docs})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "documents") {
			t.Errorf("ValidatePolicies(%d documents) = %v, want InvalidArgument naming documents", len(docs), err)
		}
	})
}
