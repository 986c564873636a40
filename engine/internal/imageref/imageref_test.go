package imageref

import "testing"

// TestString: the names Kyverno's ImageInfo.String gives (default
// registry docker.io, default tag latest).
func TestString(t *testing.T) {
	tests := []struct {
		image, want string
	}{
		{"nginx", "docker.io/nginx:latest"},
		{"nginx:1.27", "docker.io/nginx:1.27"},
		{"library/nginx:1.27", "docker.io/library/nginx:1.27"},
		{"ghcr.io/team/app:v1", "ghcr.io/team/app:v1"},
		{"localhost:5000/app", "localhost:5000/app:latest"},
		{"ghcr.io/team/app@sha256:c9bf4598437b1e580fa70a19887eebd8338bd1dcc977fd736db4b5f1e9421801", "ghcr.io/team/app@sha256:c9bf4598437b1e580fa70a19887eebd8338bd1dcc977fd736db4b5f1e9421801"},
	}
	for _, tt := range tests {
		got, err := String(tt.image)
		if err != nil || got != tt.want {
			t.Errorf("String(%q) = %q, %v, want %q", tt.image, got, err, tt.want)
		}
	}
	if _, err := String("Bad Image"); err == nil {
		t.Errorf("String(%q) = nil error, want one", "Bad Image")
	}
}
