package webhookproxy_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/webhookproxy"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

const (
	podJSON    = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"shop"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`
	oldPodJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"shop","labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`
)

func TestRequestFromAdmission(t *testing.T) {
	dry := true
	podKind := metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}
	tests := []struct {
		name       string
		give       *admissionv1.AdmissionRequest
		giveLabels map[string]string
		want       *verdictv1.EvaluateRequest
	}{{
		name: "create with user and namespace labels",
		give: &admissionv1.AdmissionRequest{
			UID: "u1", Kind: podKind, Operation: admissionv1.Create, Namespace: "shop",
			Object: runtime.RawExtension{Raw: []byte(podJSON)},
			UserInfo: authenticationv1.UserInfo{
				Username: "alice", UID: "42", Groups: []string{"dev"},
				Extra: map[string]authenticationv1.ExtraValue{"scopes": {"a", "b"}},
			},
		},
		giveLabels: map[string]string{"team": "shop"},
		want: &verdictv1.EvaluateRequest{
			Object: []byte(podJSON), Operation: verdictv1.Operation_OPERATION_CREATE, Namespace: "shop",
			NamespaceLabels: map[string]string{"team": "shop"}, Mode: verdictv1.Mode_MODE_ADMISSION,
			Kind: &verdictv1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			UserInfo: &verdictv1.UserInfo{
				Username: "alice", Uid: "42", Groups: []string{"dev"},
				Extra: map[string]*verdictv1.ExtraValue{"scopes": {Values: []string{"a", "b"}}},
			},
		},
	}, {
		name: "update with old object and dry run",
		give: &admissionv1.AdmissionRequest{
			UID: "u2", Kind: podKind, Operation: admissionv1.Update, Namespace: "shop", DryRun: &dry,
			Object: runtime.RawExtension{Raw: []byte(podJSON)}, OldObject: runtime.RawExtension{Raw: []byte(oldPodJSON)},
		},
		want: &verdictv1.EvaluateRequest{
			Object: []byte(podJSON), OldObject: []byte(oldPodJSON), Operation: verdictv1.Operation_OPERATION_UPDATE,
			Namespace: "shop", DryRun: true, Mode: verdictv1.Mode_MODE_ADMISSION,
			Kind: &verdictv1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		},
	}, {
		name: "delete uses the old object",
		give: &admissionv1.AdmissionRequest{
			UID: "u3", Kind: podKind, Operation: admissionv1.Delete, Namespace: "shop",
			Object: runtime.RawExtension{Raw: []byte("null")}, OldObject: runtime.RawExtension{Raw: []byte(oldPodJSON)},
		},
		want: &verdictv1.EvaluateRequest{
			OldObject: []byte(oldPodJSON), Operation: verdictv1.Operation_OPERATION_DELETE,
			Namespace: "shop", Mode: verdictv1.Mode_MODE_ADMISSION,
			Kind: &verdictv1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		},
	}, {
		name: "pods/exec is evaluated as Pod/exec",
		give: &admissionv1.AdmissionRequest{
			UID: "u4", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "PodExecOptions"},
			Resource:    metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			SubResource: "exec", Operation: admissionv1.Connect, Namespace: "shop",
			Object: runtime.RawExtension{Raw: []byte(`{"kind":"PodExecOptions","apiVersion":"v1","command":["sh"]}`)},
		},
		want: &verdictv1.EvaluateRequest{
			Object: []byte(`{"kind":"PodExecOptions","apiVersion":"v1","command":["sh"]}`), Operation: verdictv1.Operation_OPERATION_CONNECT,
			Namespace: "shop", Subresource: "exec", Mode: verdictv1.Mode_MODE_ADMISSION,
			Kind:     &verdictv1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Resource: &verdictv1.GroupVersionResource{Version: "v1", Resource: "pods"},
		},
	}, {
		name: "unknown subresource parent keeps the request kind",
		give: &admissionv1.AdmissionRequest{
			UID: "u5", Kind: metav1.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"},
			Resource:    metav1.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"},
			SubResource: "status", Operation: admissionv1.Update,
			Object: runtime.RawExtension{Raw: []byte(`{"kind":"Widget","apiVersion":"example.com/v1"}`)},
		},
		want: &verdictv1.EvaluateRequest{
			Object: []byte(`{"kind":"Widget","apiVersion":"example.com/v1"}`), Operation: verdictv1.Operation_OPERATION_UPDATE,
			Subresource: "status", Mode: verdictv1.Mode_MODE_ADMISSION,
			Kind:     &verdictv1.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"},
			Resource: &verdictv1.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"},
		},
	}, {
		name: "the resource is the request's, not guessed from the kind",
		give: &admissionv1.AdmissionRequest{
			UID: "u6", Kind: metav1.GroupVersionKind{Group: "sea.example.com", Version: "v1", Kind: "Octopus"},
			Resource:  metav1.GroupVersionResource{Group: "sea.example.com", Version: "v1", Resource: "octopi"},
			Operation: admissionv1.Create, Namespace: "shop",
			Object: runtime.RawExtension{Raw: []byte(`{"kind":"Octopus","apiVersion":"sea.example.com/v1"}`)},
		},
		want: &verdictv1.EvaluateRequest{
			Object: []byte(`{"kind":"Octopus","apiVersion":"sea.example.com/v1"}`), Operation: verdictv1.Operation_OPERATION_CREATE,
			Namespace: "shop", Mode: verdictv1.Mode_MODE_ADMISSION,
			Kind:     &verdictv1.GroupVersionKind{Group: "sea.example.com", Version: "v1", Kind: "Octopus"},
			Resource: &verdictv1.GroupVersionResource{Group: "sea.example.com", Version: "v1", Resource: "octopi"},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := webhookproxy.RequestFromAdmission(tt.give, tt.giveLabels)
			if err != nil {
				t.Fatalf("RequestFromAdmission(%s) error: %v", tt.name, err)
			}
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("RequestFromAdmission(%s) mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestRequestFromAdmissionErrors(t *testing.T) {
	tests := []struct {
		name string
		give *admissionv1.AdmissionRequest
	}{
		{name: "nil request", give: nil},
		{name: "no uid", give: &admissionv1.AdmissionRequest{Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: []byte(podJSON)}}},
		{name: "unknown operation", give: &admissionv1.AdmissionRequest{UID: "u", Operation: "PATCH", Object: runtime.RawExtension{Raw: []byte(podJSON)}}},
		{name: "object not an object", give: &admissionv1.AdmissionRequest{UID: "u", Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: []byte(`[1]`)}}},
		{name: "create without object", give: &admissionv1.AdmissionRequest{UID: "u", Operation: admissionv1.Create}},
		{name: "delete without old object", give: &admissionv1.AdmissionRequest{UID: "u", Operation: admissionv1.Delete}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := webhookproxy.RequestFromAdmission(tt.give, nil); err == nil {
				t.Errorf("RequestFromAdmission(%s) = %v, want an error", tt.name, got)
			}
		})
	}
}

// denyMessage is validate.md's message in Kyverno v1.19's wording
// ("validation error: MESSAGE. rule NAME failed at path PATH"; the page
// shows an older wording).
const denyMessage = "\n\nresource Namespace//prod-bus-app1 was blocked due to the following policies \n\n" +
	"require-ns-purpose-label:\n  require-ns-purpose-label: 'validation error: You must have label `purpose` with value `production` set on all new namespaces. rule require-ns-purpose-label failed at path /metadata/labels/purpose/'\n"

func TestResponseFromDecision(t *testing.T) {
	create := &admissionv1.AdmissionRequest{UID: "uid-1", Operation: admissionv1.Create}
	del := &admissionv1.AdmissionRequest{UID: "uid-2", Operation: admissionv1.Delete}
	patch := []byte(`[{"op":"add","path":"/metadata/labels/team","value":"shop"}]`)
	tests := []struct {
		name       string
		giveEP     webhookproxy.Endpoint
		giveReq    *admissionv1.AdmissionRequest
		giveResp   *verdictv1.EvaluateResponse
		wantGolden string
	}{
		{name: "deny", giveEP: webhookproxy.Validate, giveReq: create,
			giveResp: &verdictv1.EvaluateResponse{Allowed: false, Message: denyMessage}, wantGolden: "deny.json"},
		{name: "allow with warnings", giveEP: webhookproxy.Validate, giveReq: create,
			giveResp:   &verdictv1.EvaluateResponse{Allowed: true, Warnings: []string{"policy disallow-latest.no-latest: An image tag other than latest is required.", "policy other.r: second"}, JsonPatch: patch},
			wantGolden: "warnings.json"},
		{name: "mutate patch", giveEP: webhookproxy.Mutate, giveReq: create,
			giveResp:   &verdictv1.EvaluateResponse{Allowed: false, Message: denyMessage, JsonPatch: patch, Warnings: []string{"w"}},
			wantGolden: "patch.json"},
		{name: "mutate empty patch", giveEP: webhookproxy.Mutate, giveReq: create,
			giveResp: &verdictv1.EvaluateResponse{Allowed: true, JsonPatch: []byte("[]")}, wantGolden: "mutate-empty.json"},
		{name: "mutate delete has no patch", giveEP: webhookproxy.Mutate, giveReq: del,
			giveResp: &verdictv1.EvaluateResponse{Allowed: true, JsonPatch: patch}, wantGolden: "mutate-delete.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := webhookproxy.ResponseFromDecision(tt.giveEP, tt.giveReq, tt.giveResp)
			review := admissionv1.AdmissionReview{
				TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
				Response: got,
			}
			compareGolden(t, tt.wantGolden, review)
		})
	}
}

// compareGolden compares v, encoded as JSON, with testdata/name decoded
// (or rewrites the file with -update).
func compareGolden(t *testing.T, name string, v any) {
	t.Helper()
	gotJSON, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, append(gotJSON, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantJSON, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file: %v (run with -update to create it)", err)
	}
	var want, got any
	if err := json.Unmarshal(wantJSON, &want); err != nil {
		t.Fatalf("golden file %s: %v", path, err)
	}
	if err := json.Unmarshal(gotJSON, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("response for %s mismatch (-want +got):\n%s", name, diff)
	}
}
