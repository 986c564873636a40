package kubelookup

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/eval"
)

// fakeAPIServer answers the paths of the urlPath tests.
func fakeAPIServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/namespaces/team/pods", func(w http.ResponseWriter, r *http.Request) {
		if got := r.URL.Query().Get("labelSelector"); got != "app=web" {
			http.Error(w, "want labelSelector=app=web, got "+got, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"kind":"PodList","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`)
	})
	mux.HandleFunc("POST /apis/authorization.k8s.io/v1/subjectaccessreviews", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"echo": body, "contentType": r.Header.Get("Content-Type")})
	})
	mux.HandleFunc("GET /api/v1/namespaces/team/configmaps/missing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"configmaps \"missing\" not found","reason":"NotFound","code":404}`)
	})
	mux.HandleFunc("GET /api/v1/big", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"pad":"`+strings.Repeat("x", 100)+`"}`)
	})
	mux.HandleFunc("GET /api/v1/text", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `not json`)
	})
	mux.HandleFunc("GET /api/v1/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func restClient(t *testing.T, host string) rest.Interface {
	t.Helper()
	rc, err := rest.UnversionedRESTClientFor(&rest.Config{Host: host, APIPath: "/api", ContentConfig: rest.ContentConfig{
		ContentType: "application/json", AcceptContentTypes: "application/json", NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
	}})
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

func newCallLookup(t *testing.T, rc rest.Interface, opts Options) *Lookup {
	t.Helper()
	opts.Kube = kubefake.NewClientset()
	opts.Dynamic = dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
	opts.REST = rc
	l, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestAPICallURLPath(t *testing.T) {
	srv := fakeAPIServer(t)
	l := newCallLookup(t, restClient(t, srv.URL), Options{MaxResponseBytes: 100, APICallTimeout: 200 * time.Millisecond})
	tests := []struct {
		name     string
		call     eval.APICall
		want     any
		wantErr  string
		notFound bool
	}{
		{
			name: "GET with a query",
			call: eval.APICall{URLPath: "/api/v1/namespaces/team/pods?labelSelector=app=web"},
			want: map[string]any{"kind": "PodList", "items": []any{map[string]any{"metadata": map[string]any{"name": "a"}}, map[string]any{"metadata": map[string]any{"name": "b"}}}},
		},
		{
			name: "POST sends data as JSON",
			call: eval.APICall{URLPath: "/apis/authorization.k8s.io/v1/subjectaccessreviews", Method: "POST", Data: map[string]any{"kind": "SubjectAccessReview", "n": 1.0}},
			want: map[string]any{"echo": map[string]any{"kind": "SubjectAccessReview", "n": 1.0}, "contentType": "application/json"},
		},
		{
			name:     "not found",
			call:     eval.APICall{URLPath: "/api/v1/namespaces/team/configmaps/missing"},
			wantErr:  `apiCall GET /api/v1/namespaces/team/configmaps/missing: API server: not found (configmaps "missing" not found)`,
			notFound: true,
		},
		{
			name:    "MaxResponseBytes",
			call:    eval.APICall{URLPath: "/api/v1/big"},
			wantErr: "apiCall GET /api/v1/big: response larger than 100 bytes",
		},
		{
			name:    "not JSON",
			call:    eval.APICall{URLPath: "/api/v1/text"},
			wantErr: "apiCall GET /api/v1/text: response is not JSON",
		},
		{
			name:    "APICallTimeout",
			call:    eval.APICall{URLPath: "/api/v1/slow"},
			wantErr: "apiCall GET /api/v1/slow: no response within 200ms",
		},
		{
			name:    "method",
			call:    eval.APICall{URLPath: "/api/v1/big", Method: "DELETE"},
			wantErr: "apiCall DELETE /api/v1/big: method must be GET or POST",
		},
		{
			name:    "no target",
			call:    eval.APICall{},
			wantErr: "apiCall: neither urlPath nor service.url",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := l.APICall(context.Background(), tt.call)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || errors.Is(err, engine.ErrNotFound) != tt.notFound {
					t.Errorf("APICall(%+v) = %v, %v; want an error with %q (not found: %v)", tt.call, got, err, tt.wantErr, tt.notFound)
				}
				return
			}
			if err != nil {
				t.Fatalf("APICall(%+v) = %v", tt.call, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("APICall(%+v) (-want +got):\n%s", tt.call, diff)
			}
		})
	}
}

func TestAPICallService(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/check":
			json.NewEncoder(w).Encode(map[string]any{"token": r.Header.Get("X-Token"), "method": r.Method})
		case "/missing":
			http.Error(w, "no such image", http.StatusNotFound)
		default:
			http.Error(w, "boom", http.StatusInternalServerError)
		}
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake the "no caBundle" case fails
	t.Cleanup(srv.Close)
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	l := newCallLookup(t, &rest.RESTClient{}, Options{})
	tests := []struct {
		name     string
		call     eval.APICall
		want     any
		wantErr  string
		notFound bool
	}{
		{
			name: "caBundle and headers",
			call: eval.APICall{ServiceURL: srv.URL + "/check", CABundle: ca, Headers: map[string]string{"X-Token": "t1"}},
			want: map[string]any{"token": "t1", "method": "GET"},
		},
		{
			name: "POST",
			call: eval.APICall{ServiceURL: srv.URL + "/check", Method: "POST", CABundle: ca, Data: map[string]any{"a": "b"}},
			want: map[string]any{"token": "", "method": "POST"},
		},
		{
			name:    "no caBundle: system roots",
			call:    eval.APICall{ServiceURL: srv.URL + "/check"},
			wantErr: "certificate",
		},
		{
			name:    "bad caBundle",
			call:    eval.APICall{ServiceURL: srv.URL + "/check", CABundle: "junk"},
			wantErr: "service.caBundle: no PEM certificate",
		},
		{
			name:     "404",
			call:     eval.APICall{ServiceURL: srv.URL + "/missing", CABundle: ca},
			wantErr:  "HTTP 404 Not Found: no such image",
			notFound: true,
		},
		{
			name:    "500",
			call:    eval.APICall{ServiceURL: srv.URL + "/other", CABundle: ca},
			wantErr: "apiCall GET " + srv.URL + "/other: HTTP 500 Internal Server Error: boom",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := l.APICall(context.Background(), tt.call)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || errors.Is(err, engine.ErrNotFound) != tt.notFound {
					t.Errorf("APICall(%s) = %v, %v; want an error with %q (not found: %v)", tt.call.ServiceURL, got, err, tt.wantErr, tt.notFound)
				}
				return
			}
			if err != nil {
				t.Fatalf("APICall(%s) = %v", tt.call.ServiceURL, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("APICall(%s) (-want +got):\n%s", tt.call.ServiceURL, diff)
			}
		})
	}
}

func TestServiceClientsBounded(t *testing.T) {
	s := newServiceClients(1, time.Second, http.DefaultTransport.(*http.Transport).Clone())
	a, err := s.client("")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := s.client(""); again != a {
		t.Error("client(\"\") twice returned two clients, want the kept one")
	}
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	b, err := s.client(ca)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Transport.(*http.Transport).DisableKeepAlives || len(s.clients) != 1 {
		t.Errorf("client(ca) past ServiceClients 1: keep-alives %v, %d kept; want a one-off client and 1 kept", !b.Transport.(*http.Transport).DisableKeepAlives, len(s.clients))
	}
}
