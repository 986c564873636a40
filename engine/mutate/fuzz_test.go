package mutate

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzStrategicMerge checks that no resource and patch make
// StrategicMerge or Diff panic, and that StrategicMerge's shortcuts over
// unchanged parts of the resource (and the resource's maps and lists it
// returns as they are) give kyaml's full walk's result, to the Go type;
// and that an Overlay of the patch gives StrategicMerge's result each time
// it is applied.
func FuzzStrategicMerge(f *testing.F) {
	f.Add(`{"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"name":"a","image":"x"},{"name":"b"}]}}`,
		`{"spec":{"containers":[{"(name)":"*","+(imagePullPolicy)":"Always"}]}}`)
	f.Add(`{"apiVersion":"v1","kind":"Pod","spec":{"volumes":[{"name":"v","emptyDir":{}}]}}`,
		`{"metadata":{"annotations":{"+(a)":"b"}},"spec":{"volumes":[{"<(emptyDir)":{}}]}}`)
	f.Add(`{"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"name":"a"},{"name":"a"}]}}`,
		`{"spec":{"containers":[{"(name)":"a","x":1},{"(name)":"b","$patch":"delete"}]}}`)
	f.Add(`{"a":[1,2,{"b":null}]}`, `{"a":{"$patch":"replace"},"c":[{"$patch":"merge"}]}`)
	f.Add(`{"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"name":"a","ports":[{"containerPort":80},{"containerPort":81,"protocol":"UDP"}]}],"volumes":[{"name":"v","hostPath":{"path":"/x"}}]}}`,
		`{"metadata":{"annotations":{"+(a)":"b"}},"spec":{"volumes":[{"hostPath":{"<(path)":"*"}}]}}`)
	f.Fuzz(func(t *testing.T, resource, patch string) {
		var r map[string]any
		var p any
		if json.Unmarshal([]byte(resource), &r) != nil || json.Unmarshal([]byte(patch), &p) != nil || r == nil {
			return
		}
		out, err := StrategicMerge(r, p)
		rn, nerr := toNode(r)
		if nerr != nil {
			return
		}
		full, ferr := strategicMerge(r, rn, p, false)
		if (err != nil) != (ferr != nil) || err == nil && !cmp.Equal(out, full) {
			t.Fatalf("StrategicMerge(%s, %s) = %v, %v; the full walk gives %v, %v", resource, patch, out, err, full, ferr)
		}
		// An Overlay of the patch gives the same, and its next uses too
		// (the merge changes only its copy of the overlay).
		if o, oerr := NewOverlay(p); oerr == nil {
			for range 2 {
				got, gerr := o.Apply(r)
				if fmt.Sprint(gerr) != fmt.Sprint(err) || !cmp.Equal(got, out) {
					t.Fatalf("NewOverlay(%s).Apply(%s) = %v, %v; StrategicMerge gives %v, %v", patch, resource, got, gerr, out, err)
				}
			}
		} else if err == nil || err.Error() != oerr.Error() {
			t.Fatalf("NewOverlay(%s) = %v; StrategicMerge gives %v", patch, oerr, err)
		}
		if err != nil {
			return
		}
		if _, err := MarshalPatch(Diff(r, out)); err != nil {
			t.Fatalf("MarshalPatch(Diff) = %v", err)
		}
	})
}
