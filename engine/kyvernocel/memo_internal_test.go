package kyvernocel

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// countingProvider counts the lookups that reach a real provider.
type countingProvider struct {
	types.Provider
	n atomic.Int64
}

func (p *countingProvider) FindStructType(name string) (*types.Type, bool) {
	p.n.Add(1)
	return p.Provider.FindStructType(name)
}

func (p *countingProvider) FindStructFieldNames(name string) ([]string, bool) {
	p.n.Add(1)
	return p.Provider.FindStructFieldNames(name)
}

type memoSample struct {
	Name string
}

// TestMemoProvider checks that memoProvider answers as the providers below
// it, asks them once per name, up to MaxMemoTypeNames names, and is safe
// for concurrent lookups (run with -race).
func TestMemoProvider(t *testing.T) {
	env, err := cel.NewEnv(ext.NativeTypes(reflect.TypeFor[memoSample]()))
	if err != nil {
		t.Fatal(err)
	}
	inner := &countingProvider{Provider: env.CELTypeProvider()}
	memo := newMemoProvider(inner)
	names := []string{"kyvernocel.memoSample", "object.spec", "google.protobuf.Duration", "nope"}
	for _, name := range names {
		wantT, wantOK := inner.Provider.FindStructType(name)
		wantF, wantFOK := inner.Provider.FindStructFieldNames(name)
		for i := 0; i < 3; i++ {
			gotT, gotOK := memo.FindStructType(name)
			if gotOK != wantOK || (wantOK && !gotT.IsExactType(wantT)) {
				t.Errorf("FindStructType(%q) = %v, %t, want %v, %t", name, gotT, gotOK, wantT, wantOK)
			}
			gotF, gotFOK := memo.FindStructFieldNames(name)
			// The field names of a protobuf message come in map order.
			if diff := cmp.Diff(wantF, gotF, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" || gotFOK != wantFOK {
				t.Errorf("FindStructFieldNames(%q) = %v, %t, want %v, %t", name, gotF, gotFOK, wantF, wantFOK)
			}
		}
	}
	if got, want := inner.n.Load(), int64(2*len(names)); got != want {
		t.Errorf("lookups below memoProvider = %d, want %d (one per name and method)", got, want)
	}

	// The limit: MaxMemoTypeNames names are remembered, the next is not.
	full := newMemoProvider(inner)
	for i := 0; i < MaxMemoTypeNames; i++ {
		full.FindStructType(fmt.Sprintf("t%d", i))
	}
	inner.n.Store(0)
	full.FindStructType("t0")
	full.FindStructType("over")
	full.FindStructType("over")
	if got, want := inner.n.Load(), int64(2); got != want {
		t.Errorf("lookups below a full memoProvider = %d, want %d (none for a remembered name, each for another)", got, want)
	}
	if got := len(full.structs) + len(full.fieldNames); got != MaxMemoTypeNames {
		t.Errorf("names remembered = %d, want MaxMemoTypeNames (%d)", got, MaxMemoTypeNames)
	}

	var wg sync.WaitGroup
	shared := newMemoProvider(inner)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				shared.FindStructType(names[i%len(names)])
				shared.FindStructFieldNames(names[i%len(names)])
			}
		}()
	}
	wg.Wait()
}
