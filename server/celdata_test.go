package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine/kyvernocel"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/server/celdata"
)

// httpPolicy is a ValidatingPolicy on Pods whose validation is expr.
func httpPolicy(kind, name, expr string) string {
	p := strings.Replace(validatingPolicy(name, "[Deny]"), `"'team' in object.metadata.labels"`, `"`+expr+`"`, 1)
	if kind == "NamespacedValidatingPolicy" {
		p = strings.Replace(strings.Replace(p, "kind: ValidatingPolicy", "kind: NamespacedValidatingPolicy", 1),
			"  name: "+name+"\n", "  name: "+name+"\n  namespace: default\n", 1)
	}
	return p
}

// dataOutcome is a rule result as these tests compare it: the result, and
// for an error the part of its message that says why.
type dataOutcome struct {
	Policy string
	Result verdictv1.Result
	Why    string
}

func dataOutcomes(resp *verdictv1.EvaluateResponse, reasons ...string) []dataOutcome {
	var out []dataOutcome
	for _, r := range resp.GetResults() {
		o := dataOutcome{Policy: r.GetPolicy(), Result: r.GetResult()}
		for _, why := range reasons {
			if strings.Contains(r.GetMessage(), why) {
				o.Why = why
			}
		}
		out = append(out, o)
	}
	return out
}

// TestValidatingPolicyHTTP: http.Get of a ValidatingPolicy reaches an
// allowed URL through Options.CELData (celdata.HTTP); calls from
// namespaced and inline policies are refused unless the options allow
// them, and the calls of one evaluation are bounded by MaxCELDataCalls;
// a slow server is cut at the call's timeout.
func TestValidatingPolicyHTTP(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/team", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"team":"a"}`) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
		io.WriteString(w, `{"team":"a"}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	h, err := celdata.NewHTTP(celdata.HTTPOptions{Allow: []string{srv.URL}, Block: []string{}, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	get := "http.Get('" + srv.URL + "/team').team == 'a'"
	four := "[1, 2, 3, 4].all(i, http.Get('" + srv.URL + "/team?i=' + string(i)).team == 'a')"
	const (
		refusedNamespaced = "not allowed in namespaced policies"
		refusedInline     = "not allowed in inline policies"
		overLimit         = "the server allows 3 (--max-cel-data-calls)"
		timedOut          = "no response within 200ms"
	)
	obj := pod(t, "p", "default", "nginx", nil)
	tests := []struct {
		name    string
		opts    Options
		folder  []string
		inline  []string
		want    []dataOutcome
		wantWhy []string
	}{
		{
			name:   "a cluster-wide policy",
			folder: []string{httpPolicy("ValidatingPolicy", "http-team", get)},
			want:   []dataOutcome{{"http-team", verdictv1.Result_RESULT_PASS, ""}},
		},
		{
			name:   "a namespaced policy",
			folder: []string{httpPolicy("NamespacedValidatingPolicy", "http-team", get)},
			want:   []dataOutcome{{"http-team", verdictv1.Result_RESULT_ERROR, refusedNamespaced}},
		},
		{
			name:   "a namespaced policy, allowed",
			opts:   Options{CELHTTPNamespacedPolicies: true},
			folder: []string{httpPolicy("NamespacedValidatingPolicy", "http-team", get)},
			want:   []dataOutcome{{"http-team", verdictv1.Result_RESULT_PASS, ""}},
		},
		{
			name:   "an inline policy",
			inline: []string{httpPolicy("ValidatingPolicy", "http-team", get)},
			want:   []dataOutcome{{"http-team", verdictv1.Result_RESULT_ERROR, refusedInline}},
		},
		{
			name:   "an inline policy, allowed",
			opts:   Options{CELHTTPInlinePolicies: true},
			inline: []string{httpPolicy("ValidatingPolicy", "http-team", get)},
			want:   []dataOutcome{{"http-team", verdictv1.Result_RESULT_PASS, ""}},
		},
		{
			name:   "3 calls in two policies, at the limit",
			opts:   Options{MaxCELDataCalls: 3},
			folder: []string{httpPolicy("ValidatingPolicy", "a", get), httpPolicy("ValidatingPolicy", "b", "[1, 2].all(i, http.Get('"+srv.URL+"/team?i=' + string(i)).team == 'a')")},
			want:   []dataOutcome{{"a", verdictv1.Result_RESULT_PASS, ""}, {"b", verdictv1.Result_RESULT_PASS, ""}},
		},
		{
			name:   "4 calls, over the limit",
			opts:   Options{MaxCELDataCalls: 3},
			folder: []string{httpPolicy("ValidatingPolicy", "http-team", four)},
			want:   []dataOutcome{{"http-team", verdictv1.Result_RESULT_ERROR, overLimit}},
		},
		{
			name:   "a slow server",
			folder: []string{httpPolicy("ValidatingPolicy", "http-team", "http.Get('"+srv.URL+"/slow').team == 'a'")},
			want:   []dataOutcome{{"http-team", verdictv1.Result_RESULT_ERROR, timedOut}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.CELData = kyvernocel.Sources{HTTP: h}
			files := map[string]string{}
			for i, p := range tt.folder {
				files[string(rune('a'+i))+".yaml"] = p
			}
			_, src := policyFolder(t, files)
			opts.Sources = []PolicySource{src}
			ts := startServer(t, opts)
			req := &verdictv1.EvaluateRequest{Object: obj}
			if tt.inline != nil {
				req = inlineDocs(obj, tt.inline...)
			}
			got, err := ts.client(t).Evaluate(t.Context(), req)
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if diff := cmp.Diff(tt.want, dataOutcomes(got, refusedNamespaced, refusedInline, overLimit, timedOut)); diff != "" {
				t.Errorf("Evaluate(%s) (-want +got):\n%s\nresults: %v", tt.name, diff, got.GetResults())
			}
		})
	}
}
