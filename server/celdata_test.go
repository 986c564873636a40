package server

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

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

// TestValidatingPolicyImageData: image.GetMetadata of a ValidatingPolicy
// reads the image's registry through Options.CELData (celdata.Images, on
// an in-process registry), and counts against MaxCELDataCalls.
func TestValidatingPolicyImageData(t *testing.T) {
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	host := strings.TrimPrefix(reg.URL, "http://")
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(host + "/team/app:v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	images, err := celdata.NewImages(celdata.ImageOptions{Block: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	const overLimit = "the server allows 1 (--max-cel-data-calls)"
	tagged := "image.GetMetadata(object.spec.containers[0].image).tag == 'v1'"
	tests := []struct {
		name  string
		opts  Options
		image string
		expr  string
		want  []dataOutcome
	}{
		{"the tag of the image", Options{}, host + "/team/app:v1", tagged, []dataOutcome{{"image-data", verdictv1.Result_RESULT_PASS, ""}}},
		{"an image the registry does not have", Options{}, host + "/team/missing:v1", tagged, []dataOutcome{{"image-data", verdictv1.Result_RESULT_ERROR, ""}}},
		{"one call, at the limit", Options{MaxCELDataCalls: 1}, host + "/team/app:v1", tagged, []dataOutcome{{"image-data", verdictv1.Result_RESULT_PASS, ""}}},
		{"two calls, over the limit", Options{MaxCELDataCalls: 1}, host + "/team/app:v1",
			tagged + " && image.GetMetadata(object.spec.containers[0].image).digest != ''",
			[]dataOutcome{{"image-data", verdictv1.Result_RESULT_ERROR, overLimit}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.CELData = kyvernocel.Sources{ImageData: images}
			_, src := policyFolder(t, map[string]string{"p.yaml": httpPolicy("ValidatingPolicy", "image-data", tt.expr)})
			opts.Sources = []PolicySource{src}
			ts := startServer(t, opts)
			got, err := ts.client(t).Evaluate(t.Context(), &verdictv1.EvaluateRequest{Object: pod(t, "p", "default", tt.image, nil)})
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if diff := cmp.Diff(tt.want, dataOutcomes(got, overLimit)); diff != "" {
				t.Errorf("Evaluate(%s) (-want +got):\n%s\nresults: %v", tt.name, diff, got.GetResults())
			}
		})
	}
}
