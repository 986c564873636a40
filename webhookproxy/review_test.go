package webhookproxy

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	admissionv1 "k8s.io/api/admission/v1"
)

func TestDecodeReviewMatchesEncodingJSON(t *testing.T) {
	tests := []string{
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"subResource":"exec","name":"web","namespace":"shop","operation":"CONNECT","userInfo":{"username":"alice","uid":"42","groups":["a","b"],"extra":{"scopes":["x","y"],"none":null}},"object":{"a":[1,-2.5e3,true,false,null,"s\"\\u00e9"]},"oldObject":null,"dryRun":true,"options":{"kind":"CreateOptions"}}}`,
		` { "kind" : "AdmissionReview" , "request" : { "uid" : "u\u00e92\n" , "operation" : "DELETE" , "oldObject" : { "k" : {} , "l" : [ ] } , "dryRun" : false , "userInfo" : { "groups" : [ ] } } } `,
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":null}`,
		`{"request":{"uid":"u","dryRun":null,"userInfo":null,"object":[1,2],"name":null}}`,
		`{"request":{"uid":"é\u2028","object":"a string"},"response":{"uid":"x","allowed":true}}`,
		`{}`,
		`null`,
	}
	for _, in := range tests {
		var want admissionv1.AdmissionReview
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("json.Unmarshal(%s): %v", in, err)
		}
		want.Response = nil // not read by the proxy
		got, err := decodeReview([]byte(in))
		if err != nil {
			t.Errorf("decodeReview(%s) error: %v", in, err)
			continue
		}
		if want.Request != nil {
			// encoding/json keeps the other request fields too; the
			// proxy reads only these.
			w := want.Request
			want.Request = &admissionv1.AdmissionRequest{UID: w.UID, Kind: w.Kind, Resource: w.Resource, SubResource: w.SubResource,
				Name: w.Name, Namespace: w.Namespace, Operation: w.Operation, UserInfo: w.UserInfo, Object: w.Object, OldObject: w.OldObject, DryRun: w.DryRun}
		}
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("decodeReview(%s) (-json.Unmarshal +got):\n%s", in, diff)
		}
	}
}

func TestDecodeReviewRejectsWhatEncodingJSONRejects(t *testing.T) {
	tests := []string{
		``,
		`{`,
		`{"apiVersion":`,
		`{"request":{"uid":"u","object":{"a":1,}}}`,
		`{"request":{"uid":"u","object":{"a":01}}}`,
		`{"request":{"uid":"u","object":{"a":1.}}}`,
		`{"request":{"uid":"u","object":{"a":-}}}`,
		`{"request":{"uid":"u","object":{"a":tru}}}`,
		`{"request":{"uid":"u","object":{"a":"\x"}}}`,
		`{"request":{"uid":"u","object":{"a":"\u12"}}}`,
		"{\"request\":{\"uid\":\"a\tb\"}}",
		`{"request":{"uid":1}}`,
		`{"request":{"dryRun":"yes"}}`,
		`{"request":{"userInfo":{"groups":"a"}}}`,
		`{"request":{"kind":"Pod"}}`,
		`{"request":[]}`,
		`{} {}`,
		`[]`,
	}
	for _, in := range tests {
		var ar admissionv1.AdmissionReview
		if err := json.Unmarshal([]byte(in), &ar); err == nil {
			t.Fatalf("json.Unmarshal(%q) accepted it: not a rejection case", in)
		}
		if got, err := decodeReview([]byte(in)); err == nil {
			t.Errorf("decodeReview(%q) = %+v, want an error", in, got)
		}
	}
}

// FuzzDecodeReview compares decodeReview with encoding/json on the
// fields the proxy reads: both accept or both reject, with the same
// values.
func FuzzDecodeReview(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1","kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","userInfo":{"username":"a","groups":["g"],"extra":{"k":["v"]}},"object":{"a":[1,"x"]},"dryRun":true}}`))
	f.Add([]byte(`{"Request":{"UID":"u","Operation":"DELETE","oldObject":{}}}`))
	f.Add([]byte(`{"request":{"ſubResource":"status","uid":"u"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var want admissionv1.AdmissionReview
		wantErr := json.Unmarshal(data, &want)
		got, err := decodeReview(data)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("decodeReview(%q) error = %v, encoding/json's = %v", data, err, wantErr)
		}
		if err != nil {
			return
		}
		want.Response = nil
		if w := want.Request; w != nil {
			want.Request = &admissionv1.AdmissionRequest{UID: w.UID, Kind: w.Kind, Resource: w.Resource, SubResource: w.SubResource,
				Name: w.Name, Namespace: w.Namespace, Operation: w.Operation, UserInfo: w.UserInfo, Object: w.Object, OldObject: w.OldObject, DryRun: w.DryRun}
		}
		if g := got.Request; g != nil {
			got.Request = &admissionv1.AdmissionRequest{UID: g.UID, Kind: g.Kind, Resource: g.Resource, SubResource: g.SubResource,
				Name: g.Name, Namespace: g.Namespace, Operation: g.Operation, UserInfo: g.UserInfo, Object: g.Object, OldObject: g.OldObject, DryRun: g.DryRun}
		}
		got.Response = nil
		if diff := cmp.Diff(&want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("decodeReview(%q) (-json.Unmarshal +got):\n%s", data, diff)
		}
	})
}
