package jsonvalue

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func stdDecode(data []byte) (any, error) {
	var v any
	err := json.Unmarshal(data, &v)
	return v, err
}

func stdDecodeObject(data []byte) (map[string]any, error) {
	var m map[string]any
	err := json.Unmarshal(data, &m)
	return m, err
}

var cases = []string{
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":8080}]}]}}`,
	` { "a" : [ 1 , -2.5e3 , 0 , 1E+2 , 0.125 , true , false , null , "" , { } , [ ] ] } `,
	`{"dup":1,"dup":2}`,
	`{"esc":"a\"b\\c\/d\n\t\u00e9\ud83d\ude00"}`,
	`{"lone":"\ud800x"}`,
	`{"utf8":"héllo wörld"}`,
	"{\"bad\":\"\xff\xfe\"}",
	"{\"ctl\":\"a\x01b\"}",
	`{"n":1e400}`,
	`{"n":-0}`,
	`{"n":01}`,
	`{"n":1.}`,
	`{"n":.5}`,
	`{"n":-}`,
	`{"a":1,}`,
	`{"a" 1}`,
	`[1,2,]`,
	`{"a":1} x`,
	`{"a":1}}`,
	`{"a":tru}`,
	`null`,
	`[1,"two"]`,
	`"str"`,
	`12`,
	``,
	`   `,
	`{"a":`,
	`{"a":"unterminated`,
	`{"a":"esc at end\`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	`{"k\u0041y":"v"}`,
}

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, in := range cases {
		want, wantErr := stdDecode([]byte(in))
		got, err := Decode([]byte(in))
		if (err != nil) != (wantErr != nil) || err != nil && err.Error() != wantErr.Error() {
			t.Errorf("Decode(%.60q) error = %v, want %v", in, err, wantErr)
			continue
		}
		if err == nil && !reflect.DeepEqual(want, got) {
			t.Errorf("Decode(%.60q) differs from encoding/json (-want +got):\n%s", in, cmp.Diff(want, got))
		}
		wantM, wantErr := stdDecodeObject([]byte(in))
		gotM, err := DecodeObject([]byte(in))
		if (err != nil) != (wantErr != nil) || err != nil && err.Error() != wantErr.Error() {
			t.Errorf("DecodeObject(%.60q) error = %v, want %v", in, err, wantErr)
			continue
		}
		if err == nil && !reflect.DeepEqual(wantM, gotM) {
			t.Errorf("DecodeObject(%.60q) differs from encoding/json (-want +got):\n%s", in, cmp.Diff(wantM, gotM))
		}
		gotM, err = DecodeObjectShared([]byte(in))
		if (err != nil) != (wantErr != nil) || err != nil && err.Error() != wantErr.Error() {
			t.Errorf("DecodeObjectShared(%.60q) error = %v, want %v", in, err, wantErr)
			continue
		}
		if err == nil && !reflect.DeepEqual(wantM, gotM) {
			t.Errorf("DecodeObjectShared(%.60q) differs from encoding/json (-want +got):\n%s", in, cmp.Diff(wantM, gotM))
		}
	}
}

// TestFastPath makes sure a typical resource does not fall back.
func TestFastPath(t *testing.T) {
	p := parser{data: []byte(cases[0])}
	if _, err := p.value(0); err != nil {
		t.Fatalf("parser.value(typical Pod) = %v, want the fast path", err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := stdDecode(data)
		got, err := Decode(data)
		if (err != nil) != (wantErr != nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("Decode(%q) error = %v, want %v", data, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(want, got) {
			t.Fatalf("Decode(%q) differs from encoding/json (-want +got):\n%s", data, cmp.Diff(want, got))
		}
		wantM, wantErr := stdDecodeObject(data)
		gotM, err := DecodeObject(data)
		if (err != nil) != (wantErr != nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("DecodeObject(%q) error = %v, want %v", data, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(wantM, gotM) {
			t.Fatalf("DecodeObject(%q) differs from encoding/json (-want +got):\n%s", data, cmp.Diff(wantM, gotM))
		}
		shared := slices.Clone(data)
		gotM, err = DecodeObjectShared(shared)
		if (err != nil) != (wantErr != nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("DecodeObjectShared(%q) error = %v, want %v", data, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(wantM, gotM) {
			t.Fatalf("DecodeObjectShared(%q) differs from encoding/json (-want +got):\n%s", data, cmp.Diff(wantM, gotM))
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	data := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"shop","labels":{"app.kubernetes.io/name":"web","team":"storefront"}},"spec":{"securityContext":{"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}},"containers":[{"name":"nginx","image":"ghcr.io/acme/nginx:1.27","ports":[{"containerPort":8080}],"resources":{"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"memory":"256Mi"}},"livenessProbe":{"httpGet":{"path":"/healthz","port":8080}},"readinessProbe":{"httpGet":{"path":"/ready","port":8080}},"securityContext":{"allowPrivilegeEscalation":false,"readOnlyRootFilesystem":true,"capabilities":{"drop":["ALL"]}}},{"name":"sidecar","image":"busybox","volumeMounts":[{"name":"data","mountPath":"/data"}]}],"volumes":[{"name":"data","hostPath":{"path":"/var/data"}}]}}`)
	b.Run("jsonvalue", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeObject(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := stdDecodeObject(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
