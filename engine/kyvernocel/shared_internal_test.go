package kyvernocel

import (
	"fmt"
	"testing"
)

// TestSharedEnvsLimit builds the environments of more namespaces than
// maxSharedEnvs: the first ones are kept (SharedEnvs), up to the limit;
// past it the policies of a new namespace still get an environment, not
// kept.
func TestSharedEnvsLimit(t *testing.T) {
	for i := 0; len(SharedEnvs()) < maxSharedEnvs; i++ {
		if _, err := NewEnv(fmt.Sprintf("limit-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(SharedEnvs()); got != maxSharedEnvs {
		t.Fatalf("SharedEnvs() holds %d environments, want %d (the limit)", got, maxSharedEnvs)
	}
	env, err := NewEnv("over-the-limit")
	if err != nil || env == nil {
		t.Fatalf("NewEnv(a namespace over the limit) = %v, %v; want an environment", env, err)
	}
	if got := len(SharedEnvs()); got != maxSharedEnvs {
		t.Errorf("SharedEnvs() holds %d environments after one namespace more, want %d", got, maxSharedEnvs)
	}
	if _, _, err := env.Compile("object.metadata.name == 'x'"); err != nil {
		t.Errorf("Compile with the environment of a namespace over the limit: %v", err)
	}
}
