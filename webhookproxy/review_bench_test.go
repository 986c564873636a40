package webhookproxy

import (
	"encoding/json"
	"os"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/yaml"
)

// BenchmarkDecodeReview compares decodeReview with encoding/json on the
// AdmissionReview of the engine benchmark's Pod.
func BenchmarkDecodeReview(b *testing.B) {
	data, err := os.ReadFile("../engine/testdata/bench/pod.yaml")
	if err != nil {
		b.Fatal(err)
	}
	pod, err := yaml.YAMLToJSON(data)
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"705ab4f5-6393-11e8-b7cc-42010a800002",` +
		`"kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"name":"web","namespace":"shop","operation":"CREATE",` +
		`"userInfo":{"username":"system:serviceaccount:kube-system:replicaset-controller","groups":["system:serviceaccounts","system:authenticated"]},` +
		`"object":` + string(pod) + `,"oldObject":null,"dryRun":false,"options":{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1"}}}`)
	b.Run("decodeReview", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := decodeReview(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var ar admissionv1.AdmissionReview
			if err := json.Unmarshal(body, &ar); err != nil {
				b.Fatal(err)
			}
		}
	})
}
