package main

import (
	"encoding/json"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// The reviews must be what the API server sends: valid AdmissionReviews
// whose object is the kind they name.
func TestReviewsDecode(t *testing.T) {
	set := newReviewSet(len(kinds))
	for i, body := range set.bodies {
		var ar admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &ar); err != nil {
			t.Fatalf("review %s: %v", kinds[i].name, err)
		}
		req := ar.Request
		if req == nil || req.UID == "" || req.Operation != admissionv1.Create || req.Namespace != benchNamespace {
			t.Fatalf("review %s: request = %+v, want a CREATE with a uid in %s", kinds[i].name, req, benchNamespace)
		}
		var obj any
		switch req.Kind.Kind {
		case "Pod":
			obj = &corev1.Pod{}
		case "Deployment":
			obj = &appsv1.Deployment{}
		default:
			t.Fatalf("review %s: kind %q", kinds[i].name, req.Kind.Kind)
		}
		if err := json.Unmarshal(req.Object.Raw, obj); err != nil {
			t.Errorf("review %s: object: %v", kinds[i].name, err)
		}
	}
}

func TestPercentile(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	var sorted []time.Duration
	for i := 1; i <= 1000; i++ {
		sorted = append(sorted, ms(i))
	}
	tests := []struct {
		p    float64
		want time.Duration
	}{
		{0.5, ms(501)},
		{0.99, ms(991)},
		{0.999, ms(1000)},
		{1, ms(1000)},
	}
	for _, tt := range tests {
		if got := percentile(sorted, tt.p); got != tt.want {
			t.Errorf("percentile(1..1000 ms, %v) = %v, want %v", tt.p, got, tt.want)
		}
	}
	if got := percentile(nil, 0.99); got != 0 {
		t.Errorf("percentile(nil, 0.99) = %v, want 0", got)
	}
}
