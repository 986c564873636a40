package pattern

import (
	"encoding/json"
	"testing"
)

// FuzzValidate compiles a JSON pattern and matches a JSON resource against
// it, with and without references resolved: nothing may panic.
func FuzzValidate(f *testing.F) {
	seeds := [][2]string{
		{`{"spec":{"containers":[{"(name)":"nginx","image":"nginx:*"}]}}`, `{"spec":{"containers":[{"name":"nginx","image":"nginx:1"}]}}`},
		{`{"spec":{"^(containers)":[{"image":"a"}],"<(x)":"1","X(y)":null,"=(z)":{"a":">1 & <5"}}}`, `{"spec":{"containers":[{"image":"a"}],"x":"1","z":{"a":3}}}`},
		{`{"metadata":{"labels":{"app*":"?*","=(team-*)":"a|b"}}}`, `{"metadata":{"labels":{"app1":"x","team-1":"a"}}}`},
		{`{"data":{"x":"1Gi-2Gi","y":"!*:latest","z":"<1h","w":[null]}}`, `{"data":{"x":"1536Mi","y":"nginx:1","z":"5m","w":["",0]}}`},
		{`{"data":{"req":"$(<=./../lim)","lim":"2Gi"}}`, `{"data":{"req":"1Gi","lim":"2Gi"}}`},
		{`[[{"(a)":"1"}],["b"]]`, `[[{"a":"1"}],["b"],[]]`},
		{`{"a":"*","b":[],"c":{},"d":5,"e":1.5,"f":true}`, `{"a":null,"b":[1],"c":"x","d":"5","e":1,"f":"true"}`},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, resource string) {
		var p, r any
		if json.Unmarshal([]byte(pattern), &p) != nil || json.Unmarshal([]byte(resource), &r) != nil {
			return
		}
		if c, err := Compile(p); err == nil {
			c.Validate(r)
		}
		CompileSubstituted(p).Validate(r)
		ValidateAny([]*Pattern{CompileSubstituted(p), CompileSubstituted(r)}, r)
	})
}
