package kyvernotest

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/eval"
)

func TestLookup(t *testing.T) {
	var calls []APICallResponse
	add := func(url, urlPath, method string, status int, body any) {
		c := APICallResponse{URL: url, URLPath: urlPath, Method: method}
		c.Response.StatusCode = status
		c.Response.Body = body
		calls = append(calls, c)
	}
	add("", "/api/v1/namespaces", "", 0, map[string]any{"items": []any{}})
	add("https://svc.example/check", "", "POST", 200, map[string]any{"allowed": true})
	add("", "/api/v1/nodes", "", 500, map[string]any{"error": "boom"})
	l := newLookup(calls, map[string]any{"deployments": map[string]any{"count": 3.0}, "list": []any{"a"}})

	tests := []struct {
		name     string
		giveCall eval.APICall
		want     any
		wantErr  error
	}{
		{name: "urlPath mock without method answers GET", giveCall: eval.APICall{URLPath: "/api/v1/namespaces"}, want: map[string]any{"items": []any{}}},
		{name: "service mock by method", giveCall: eval.APICall{ServiceURL: "https://svc.example/check", Method: "POST"}, want: map[string]any{"allowed": true}},
		{name: "service mock of another method is not found", giveCall: eval.APICall{ServiceURL: "https://svc.example/check", Method: "GET"}, wantErr: engine.ErrNotFound},
		{name: "unmocked call is not found", giveCall: eval.APICall{URLPath: "/apis/apps/v1/deployments"}, wantErr: engine.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := l.APICall(context.Background(), tt.giveCall)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("APICall(%+v) error = %v, want %v", tt.giveCall, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("APICall(%+v) error = %v", tt.giveCall, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("APICall(%+v) mismatch (-want +got):\n%s", tt.giveCall, diff)
			}
		})
	}

	if _, err := l.APICall(context.Background(), eval.APICall{URLPath: "/api/v1/nodes"}); err == nil || errors.Is(err, engine.ErrNotFound) {
		t.Errorf("APICall(mock with status 500) error = %v, want an HTTP error", err)
	}
	if got, err := l.GlobalContext(context.Background(), "deployments"); err != nil || !cmp.Equal(got, map[string]any{"count": 3.0}) {
		t.Errorf("GlobalContext(deployments) = %v, %v, want the mock data", got, err)
	}
	// "entry.projection" is a key of the entry's data, as in Kyverno's
	// gctxLoader and CLI mock store.
	if got, err := l.GlobalContext(context.Background(), "deployments.count"); err != nil || !cmp.Equal(got, 3.0) {
		t.Errorf("GlobalContext(deployments.count) = %v, %v, want 3", got, err)
	}
	for _, name := range []string{"deployments.other", "list.x"} {
		if _, err := l.GlobalContext(context.Background(), name); err == nil || errors.Is(err, engine.ErrNotFound) {
			t.Errorf("GlobalContext(%s) error = %v, want a projection error", name, err)
		}
	}
	for _, name := range []string{"other", "other.count"} {
		if _, err := l.GlobalContext(context.Background(), name); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("GlobalContext(%s) error = %v, want ErrNotFound", name, err)
		}
	}
	if _, err := l.ConfigMap(context.Background(), "default", "cm"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("ConfigMap() error = %v, want ErrNotFound", err)
	}
	// Kyverno's CLI disables imageRegistry entries (no registry client).
	if _, err := l.ImageData(context.Background(), "nginx"); !errors.Is(err, eval.ErrUndefined) {
		t.Errorf("ImageData() error = %v, want eval.ErrUndefined", err)
	}
}
