package jsonconv

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// roundTrip is what Decode must equal: json.Marshal, then json.Unmarshal.
func roundTrip[T any](v any) (*T, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out T
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func decodeJSON(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("json.Unmarshal(%q): %v", s, err)
	}
	return v
}

const typicalPod = `{"apiVersion":"v1","kind":"Pod",
 "metadata":{"name":"web","namespace":"shop","labels":{"app":"web"},"annotations":{"a":"b"},
   "creationTimestamp":"2024-05-01T10:00:00Z","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"u","controller":true}]},
 "spec":{"securityContext":{"runAsNonRoot":true,"runAsUser":1000,"seccompProfile":{"type":"RuntimeDefault"}},
   "hostNetwork":false,"terminationGracePeriodSeconds":30,
   "containers":[{"name":"nginx","image":"nginx:1.27","ports":[{"containerPort":8080,"hostPort":0,"protocol":"TCP"}],
     "resources":{"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"memory":"256Mi"}},
     "livenessProbe":{"httpGet":{"path":"/healthz","port":8080}},
     "readinessProbe":{"httpGet":{"path":"/ready","port":"http"}},
     "env":[{"name":"A","value":"1"},{"name":"B","valueFrom":{"secretKeyRef":{"name":"s","key":"k"}}}],
     "securityContext":{"allowPrivilegeEscalation":false,"readOnlyRootFilesystem":true,"capabilities":{"drop":["ALL"],"add":[]}}}],
   "initContainers":[],
   "volumes":[{"name":"data","hostPath":{"path":"/var/data"}},{"name":"tmp","emptyDir":{"sizeLimit":"1Gi"}}],
   "tolerations":[{"key":"k","operator":"Exists","tolerationSeconds":60}]},
 "status":{"phase":"Running","podIP":"10.0.0.1"}}`

// TestIntoTypicalPod checks that the fast path converts a typical Pod by
// itself (no fallback) and equals the round trip.
func TestIntoTypicalPod(t *testing.T) {
	v := decodeJSON(t, typicalPod)
	var got corev1.Pod
	if err := Into(v, &got); err != nil {
		t.Fatalf("Into(typical Pod) = %v, want nil (no fallback)", err)
	}
	want, err := roundTrip[corev1.Pod](v)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, &got) {
		t.Errorf("Into(typical Pod) differs from the JSON round trip (-want +got):\n%s", cmp.Diff(want, &got))
	}
}

// roundTripCases are inputs where json's rules are subtle: a converter
// must give the round trip's value or its error for each.
func roundTripCases(t testing.TB) []struct {
	name string
	in   any
} {
	t.Helper()
	return []struct {
		name string
		in   any
	}{
		{"typical pod", decodeJSON(t, typicalPod)},
		{"int64 numbers", map[string]any{"spec": map[string]any{"securityContext": map[string]any{"runAsUser": int64(1000)}, "priority": int64(-5)}}},
		{"int numbers", map[string]any{"spec": map[string]any{"securityContext": map[string]any{"runAsUser": 1000}, "priority": -5}}},
		{"case-insensitive key", map[string]any{"spec": map[string]any{"HostNetwork": true}}},
		{"both spellings", map[string]any{"spec": map[string]any{"HostNetwork": true, "hostNetwork": false}}},
		{"non-ASCII key", map[string]any{"spec": map[string]any{"hoſtNetwork": true}}},
		{"unknown non-ASCII key", map[string]any{"spec": map[string]any{"é": true}}},
		{"null fields", map[string]any{"metadata": nil, "spec": map[string]any{"containers": nil, "securityContext": nil, "hostNetwork": nil}}},
		{"empty list", map[string]any{"spec": map[string]any{"containers": []any{}}}},
		{"fraction into int", map[string]any{"spec": map[string]any{"terminationGracePeriodSeconds": 1.5}}},
		{"huge into int32", map[string]any{"spec": map[string]any{"securityContext": map[string]any{"runAsUser": 1e12}, "priority": 1e12}}},
		{"int64 beyond int32", map[string]any{"spec": map[string]any{"priority": int64(1) << 40}}},
		{"1e21 into int64", map[string]any{"spec": map[string]any{"activeDeadlineSeconds": 1e21}}},
		{"negative into uint", map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "ports": []any{map[string]any{"containerPort": -1}}}}}}},
		{"string into bool", map[string]any{"spec": map[string]any{"hostNetwork": "true"}}},
		{"number into string", map[string]any{"metadata": map[string]any{"name": 5.0}}},
		{"list into map", map[string]any{"metadata": map[string]any{"labels": []any{"a"}}}},
		{"map into list", map[string]any{"spec": map[string]any{"containers": map[string]any{"name": "c"}}}},
		{"list into struct", map[string]any{"spec": []any{}}},
		{"null list element", map[string]any{"spec": map[string]any{"containers": []any{nil}, "imagePullSecrets": []any{nil}}}},
		{"null map value", map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": nil}}}},
		{"bad quantity", map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"resources": map[string]any{"limits": map[string]any{"cpu": "lots"}}}}}}},
		{"number quantity", map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"resources": map[string]any{"limits": map[string]any{"cpu": 2.0}}}}}}},
		{"escaped quantity", map[string]any{"spec": map[string]any{"overhead": map[string]any{"cpu": "1<2"}}}},
		{"intOrString number", map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"livenessProbe": map[string]any{"tcpSocket": map[string]any{"port": 80.0}}}}}}},
		{"intOrString fraction", map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"livenessProbe": map[string]any{"tcpSocket": map[string]any{"port": 80.5}}}}}}},
		{"intOrString bool", map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"livenessProbe": map[string]any{"tcpSocket": map[string]any{"port": true}}}}}}},
		{"bad time", map[string]any{"metadata": map[string]any{"creationTimestamp": "yesterday"}}},
		{"null time", map[string]any{"metadata": map[string]any{"creationTimestamp": nil}}},
		{"null quantity", map[string]any{"spec": map[string]any{"overhead": map[string]any{"cpu": nil}}}},
		{"managed fields", map[string]any{"metadata": map[string]any{"managedFields": []any{map[string]any{"manager": "m", "fieldsV1": map[string]any{"f:spec": map[string]any{}}}}}}},
		{"unknown fields", map[string]any{"spec": map[string]any{"nope": 1.0, "containers": []any{map[string]any{"nope": []any{}}}}}},
		{"byte slice field", map[string]any{"binaryData": map[string]any{"k": "aGk="}}},
		{"not an object", []any{1.0}},
		{"top-level string", "pod"},
		{"null", nil},
	}
}

// TestDecodeMatchesRoundTrip runs roundTripCases through Decode.
func TestDecodeMatchesRoundTrip(t *testing.T) {
	for _, tt := range roundTripCases(t) {
		t.Run(tt.name, func(t *testing.T) {
			want, wantErr := roundTrip[corev1.Pod](tt.in)
			got, err := Decode[corev1.Pod](tt.in)
			if (err != nil) != (wantErr != nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("Decode(%v) error = %v, want %v", tt.in, err, wantErr)
			}
			if err == nil && !reflect.DeepEqual(want, got) {
				t.Errorf("Decode(%v) differs from the JSON round trip (-want +got):\n%s", tt.in, cmp.Diff(want, got))
			}
		})
	}
}

// TestDecodeDeployment covers the embedded pod template of a controller.
func TestDecodeDeployment(t *testing.T) {
	v := decodeJSON(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
	  "spec":{"replicas":3,"selector":{"matchLabels":{"app":"d"}},"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":1}},
	  "template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`)
	var got appsv1.Deployment
	if err := Into(v, &got); err != nil {
		t.Fatalf("Into(Deployment) = %v, want nil", err)
	}
	want, err := roundTrip[appsv1.Deployment](v)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, &got) {
		t.Errorf("Into(Deployment) differs from the JSON round trip (-want +got):\n%s", cmp.Diff(want, &got))
	}
}

// FuzzDecode checks Decode against the round trip on arbitrary JSON
// (numbers as float64) read into a Pod and a Deployment.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(typicalPod))
	f.Add([]byte(`{"spec":{"HostNetwork":true,"containers":[{"ports":[{"containerPort":1e3}]}]}}`))
	f.Add([]byte(`{"spec":{"template":{"spec":{"securityContext":{"runAsUser":-1}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		check := func(name string, want, got any, wantErr, err error) {
			if (err != nil) != (wantErr != nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("Decode[%s](%s) error = %v, want %v", name, data, err, wantErr)
			}
			if err == nil && !reflect.DeepEqual(want, got) {
				t.Fatalf("Decode[%s](%s) differs from the JSON round trip (-want +got):\n%s", name, data, cmp.Diff(want, got))
			}
		}
		wp, wpErr := roundTrip[corev1.Pod](v)
		gp, gpErr := Decode[corev1.Pod](v)
		check("Pod", wp, gp, wpErr, gpErr)
		wd, wdErr := roundTrip[appsv1.Deployment](v)
		gd, gdErr := Decode[appsv1.Deployment](v)
		check("Deployment", wd, gd, wdErr, gdErr)
	})
}

func BenchmarkDecodePod(b *testing.B) {
	v := decodeJSON(b, typicalPod)
	b.Run("jsonconv", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Decode[corev1.Pod](v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodePod(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("roundtrip", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := roundTrip[corev1.Pod](v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestMarshal checks marshal against json.Marshal on the values its
// shortcuts cover and on some they leave to json.
func TestMarshal(t *testing.T) {
	tests := []any{
		"100m", "", "a\"b", "<tag>", "é", "\x01",
		int64(0), int64(-8080), int64(math.MinInt64), 8080, -1,
		0.0, math.Copysign(0, -1), 1.0, -2.5, 8080.0, 1e-6, 9.99e-7, 1e20, 1e21, -1e21, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64,
		true, false, nil, []any{1.0}, map[string]any{"a": "b"},
	}
	for _, give := range tests {
		want, wantErr := json.Marshal(give)
		got, err := marshal(give)
		if string(got) != string(want) || (err != nil) != (wantErr != nil) {
			t.Errorf("marshal(%#v) = %s, %v, want %s, %v", give, got, err, want, wantErr)
		}
	}
}

// FuzzMarshal checks marshal against json.Marshal on strings, floats
// and integers.
func FuzzMarshal(f *testing.F) {
	f.Add("100m", 8080.0, int64(8080))
	f.Add("<\u2028>", 1e-7, int64(-1))
	f.Fuzz(func(t *testing.T, s string, x float64, i int64) {
		for _, give := range []any{s, x, i} {
			want, wantErr := json.Marshal(give)
			got, err := marshal(give)
			if string(got) != string(want) || (err != nil) != (wantErr != nil) {
				t.Fatalf("marshal(%#v) = %s, %v, want %s, %v", give, got, err, want, wantErr)
			}
		}
	})
}
