package pattern

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decode reads a JSON test document the way Verdict receives resources:
// numbers as float64.
func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

// decodeNumbers reads JSON with numbers as json.Number, which Validate reads
// as apimachinery's unstructured decoding does (int64 for integers).
func decodeNumbers(t *testing.T, s string) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

// TestValidate pins Kyverno's outcome, failure path and message. Each
// expectation was produced by Kyverno v1.19.0's validate.MatchPattern on the
// same pattern and resource (resource numbers as float64, as the Kyverno
// CLI has them), and the status and rule message checked with the reference
// kyverno CLI.
func TestValidate(t *testing.T) {
	tests := []struct {
		name         string
		givePattern  string
		giveResource string
		want         Result
	}{
		{
			name:         "conditional/holds then sibling passes",
			givePattern:  `{"spec":{"containers":[{"(name)":"nginx","image":"nginx:*"}]}}`,
			giveResource: `{"spec":{"containers":[{"name":"nginx","image":"nginx:1"}]}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "conditional/does not hold skips",
			givePattern:  `{"spec":{"containers":[{"(name)":"nginx","image":"nginx:*"}]}}`,
			giveResource: `{"spec":{"containers":[{"name":"foo","image":"bar"}]}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: resource value 'foo' does not match 'nginx' at path /spec/containers/0/name/"},
		},
		{
			name:         "conditional/holds then sibling fails",
			givePattern:  `{"spec":{"containers":[{"(name)":"nginx","image":"nginx:*"}]}}`,
			giveResource: `{"spec":{"containers":[{"name":"nginx","image":"bar"}]}}`,
			want:         Result{Status: Fail, Path: "/spec/containers/0/image/", Message: "resource value 'bar' does not match 'nginx:*' at path /spec/containers/0/image/"},
		},
		{
			name:         "conditional/key missing skips",
			givePattern:  `{"spec":{"containers":[{"(name)":"nginx","image":"nginx:*"}]}}`,
			giveResource: `{"spec":{"containers":[{"image":"bar"}]}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: conditional anchor key doesn't exist in the resource"},
		},
		{
			name:         "conditional/skipped element ignored when another applies",
			givePattern:  `{"spec":{"containers":[{"(name)":"nginx","image":"nginx:*"}]}}`,
			giveResource: `{"spec":{"containers":[{"name":"nginx","image":"nginx:2"},{"name":"x","image":"y"}]}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "conditional/second element fails",
			givePattern:  `{"spec":{"containers":[{"(name)":"nginx","image":"nginx:*"}]}}`,
			giveResource: `{"spec":{"containers":[{"name":"x","image":"y"},{"name":"nginx","image":"y"}]}}`,
			want:         Result{Status: Fail, Path: "/spec/containers/1/image/", Message: "resource value 'y' does not match 'nginx:*' at path /spec/containers/1/image/"},
		},
		{
			name:         "conditional/one of two conditions fails skips",
			givePattern:  `{"spec":{"containers":[{"(name)":"nginx","(image)":"nginx:*","imagePullPolicy":"Always"}]}}`,
			giveResource: `{"spec":{"containers":[{"name":"nginx","image":"foo","imagePullPolicy":"Never"}]}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: resource value 'foo' does not match 'nginx:*' at path /spec/containers/0/image/"},
		},
		{
			name:         "conditional/latest needs pull policy",
			givePattern:  `{"spec":{"containers":[{"(image)":"*:latest","imagePullPolicy":"!IfNotPresent"}]}}`,
			giveResource: `{"spec":{"containers":[{"image":"nginx:latest","imagePullPolicy":"IfNotPresent"}]}}`,
			want:         Result{Status: Fail, Path: "/spec/containers/0/imagePullPolicy/", Message: "resource value 'IfNotPresent' does not match '!IfNotPresent' at path /spec/containers/0/imagePullPolicy/"},
		},
		{
			name:         "conditional/map value holds",
			givePattern:  `{"spec":{"(securityContext)":{"runAsNonRoot":true},"hostPID":false}}`,
			giveResource: `{"spec":{"securityContext":{"runAsNonRoot":true},"hostPID":true}}`,
			want:         Result{Status: Fail, Path: "/spec/hostPID/", Message: "resource value 'true' does not match 'false' at path /spec/hostPID/"},
		},
		{
			name:         "conditional/map value does not hold",
			givePattern:  `{"spec":{"(securityContext)":{"runAsNonRoot":true},"hostPID":false}}`,
			giveResource: `{"spec":{"securityContext":{"runAsNonRoot":false},"hostPID":true}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: resource value 'false' does not match 'true' at path /spec/securityContext/runAsNonRoot/"},
		},
		{
			name:         "conditional/docs dockersock fails",
			givePattern:  `{"metadata":{"labels":{"allow-docker":"true"}},"(spec)":{"(volumes)":[{"(hostPath)":{"path":"/var/run/docker.sock"}}]}}`,
			giveResource: `{"metadata":{"labels":{"allow-docker":"false"}},"spec":{"volumes":[{"name":"v","hostPath":{"path":"/var/run/docker.sock"}}]}}`,
			want:         Result{Status: Fail, Path: "/metadata/labels/allow-docker/", Message: "resource value 'false' does not match 'true' at path /metadata/labels/allow-docker/"},
		},
		{
			name:         "conditional/docs dockersock other path skips",
			givePattern:  `{"metadata":{"labels":{"allow-docker":"true"}},"(spec)":{"(volumes)":[{"(hostPath)":{"path":"/var/run/docker.sock"}}]}}`,
			giveResource: `{"metadata":{"labels":{"allow-docker":"false"}},"spec":{"volumes":[{"name":"v","hostPath":{"path":"/tmp"}}]}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: conditional anchor mismatch: conditional anchor mismatch: resource value '/tmp' does not match '/var/run/docker.sock' at path /spec/volumes/0/hostPath/path/"},
		},
		{
			name:         "conditional/docs dockersock no volumes skips",
			givePattern:  `{"metadata":{"labels":{"allow-docker":"true"}},"(spec)":{"(volumes)":[{"(hostPath)":{"path":"/var/run/docker.sock"}}]}}`,
			giveResource: `{"metadata":{"labels":{"allow-docker":"false"}},"spec":{"containers":[]}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: conditional anchor mismatch: conditional anchor key doesn't exist in the resource"},
		},
		{
			name:         "conditional/nested skip is wrapped twice",
			givePattern:  `{"spec":{"(a)":{"(x)":"1"},"c":"3"}}`,
			giveResource: `{"spec":{"a":{"x":"0"},"c":"0"}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: conditional anchor mismatch: resource value '0' does not match '1' at path /spec/a/x/"},
		},
		{
			name:         "conditional/nested skip wins over applied sibling",
			givePattern:  `{"spec":{"(a)":{"(x)":"1"},"(b)":"2","c":"3"}}`,
			giveResource: `{"spec":{"a":{"x":"0"},"b":"2","c":"0"}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: conditional anchor mismatch: resource value '0' does not match '1' at path /spec/a/x/"},
		},
		{
			name:         "conditional/two conditions one holds skips",
			givePattern:  `{"spec":{"(a)":"1","(b)":"2","c":"3"}}`,
			giveResource: `{"spec":{"a":"1","b":"0","c":"0"}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: resource value '0' does not match '2' at path /spec/b/"},
		},
		{
			name:         "conditional/failed sibling anchor after skip is dropped",
			givePattern:  `{"spec":{"(a)":"1","=(b)":"2"}}`,
			giveResource: `{"spec":{"a":"0","b":"0"}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: resource value '0' does not match '1' at path /spec/a/"},
		},
		{
			name:         "conditional/failed sibling anchor sorted first still skips",
			givePattern:  `{"spec":{"(z)":"1","=(b)":"2"}}`,
			giveResource: `{"spec":{"z":"0","b":"0"}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: resource value '0' does not match '1' at path /spec/z/"},
		},
		{
			name:         "conditional/negation after failed condition skips",
			givePattern:  `{"spec":{"(a)":"1","X(b)":null}}`,
			giveResource: `{"spec":{"a":"0","b":1}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: resource value '0' does not match '1' at path /spec/a/"},
		},
		{
			name:         "conditional/resource text with skip phrase skips",
			givePattern:  `{"spec":{"a":"x"}}`,
			giveResource: `{"spec":{"a":"conditional anchor mismatch"}}`,
			want:         Result{Status: Skip, Message: "resource value 'conditional anchor mismatch' does not match 'x' at path /spec/a/"},
		},
		{
			name:         "conditional/all list elements skipped skips",
			givePattern:  `{"spec":{"containers":[{"(name)":"a","image":"b"}]}}`,
			giveResource: `{"spec":{"containers":[{"name":"x"},{"name":"y"}]}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: resource value 'x' does not match 'a' at path /spec/containers/0/name/; conditional anchor mismatch: resource value 'y' does not match 'a' at path /spec/containers/1/name/"},
		},
		{
			name:         "conditional/nested lists",
			givePattern:  `{"spec":{"(volumes)":[{"(hostPath)":{"path":"/var"}}],"x":"1"}}`,
			giveResource: `{"spec":{"volumes":[{"hostPath":{"path":"/var"}}],"x":"2"}}`,
			want:         Result{Status: Fail, Path: "/spec/x/", Message: "resource value '2' does not match '1' at path /spec/x/"},
		},
		{
			name:         "equality/absent passes",
			givePattern:  `{"spec":{"=(hostPath)":{"path":"!/var/lib"}}}`,
			giveResource: `{"spec":{"x":1}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "equality/present and wrong fails",
			givePattern:  `{"spec":{"=(hostPath)":{"path":"!/var/lib"}}}`,
			giveResource: `{"spec":{"hostPath":{"path":"/var/lib"}}}`,
			want:         Result{Status: Fail, Path: "/spec/hostPath/path/", Message: "resource value '/var/lib' does not match '!/var/lib' at path /spec/hostPath/path/"},
		},
		{
			name:         "equality/present and right passes",
			givePattern:  `{"spec":{"=(hostPath)":{"path":"!/var/lib"}}}`,
			giveResource: `{"spec":{"hostPath":{"path":"/data"}}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "equality/docs volumes in list",
			givePattern:  `{"=(spec)":{"=(volumes)":[{"=(hostPath)":{"path":"!/var/run/docker.sock"}}]}}`,
			giveResource: `{"spec":{"volumes":[{"name":"a"},{"name":"b","hostPath":{"path":"/var/run/docker.sock"}}]}}`,
			want:         Result{Status: Fail, Path: "/spec/volumes/1/hostPath/path/", Message: "resource value '/var/run/docker.sock' does not match '!/var/run/docker.sock' at path /spec/volumes/1/hostPath/path/"},
		},
		{
			name:         "equality/star against null fails",
			givePattern:  `{"spec":{"=(x)":"*"}}`,
			giveResource: `{"spec":{"x":null}}`,
			want:         Result{Status: Fail, Path: "/spec/x/", Message: "resource value '<nil>' does not match '*' at path /spec/x/"},
		},
		{
			name:         "equality/star against missing passes",
			givePattern:  `{"spec":{"=(x)":"*"}}`,
			giveResource: `{"spec":{"y":null}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "existence/one element matches",
			givePattern:  `{"spec":{"^(containers)":[{"image":"nginx:latest"}]}}`,
			giveResource: `{"spec":{"containers":[{"image":"a"},{"image":"nginx:latest"}]}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "existence/no element matches",
			givePattern:  `{"spec":{"^(containers)":[{"image":"nginx:latest"}]}}`,
			giveResource: `{"spec":{"containers":[{"image":"a"},{"image":"b"}]}}`,
			want:         Result{Status: Fail, Path: "/spec/containers/", Message: "existence anchor validation failed at path /spec/containers/"},
		},
		{
			name:         "existence/missing key passes",
			givePattern:  `{"spec":{"^(containers)":[{"image":"nginx:latest"}]}}`,
			giveResource: `{"spec":{"x":1}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "existence/missing key turns a failure into an error",
			givePattern:  `{"spec":{"^(initContainers)":[{"name":"x"}],"replicas":2}}`,
			giveResource: `{"spec":{"replicas":3}}`,
			want:         Result{Status: Error, Message: "resource value '3' does not match '2' at path /spec/replicas/"},
		},
		{
			name:         "existence/resource not a list",
			givePattern:  `{"spec":{"^(containers)":[{"image":"nginx:latest"}]}}`,
			giveResource: `{"spec":{"containers":{"image":"a"}}}`,
			want:         Result{Status: Fail, Path: "/spec/containers/", Message: "invalid resource type map[string]interface {}: Existence ^ () anchor can be used only on list/array type resource"},
		},
		{
			name:         "existence/pattern not a list",
			givePattern:  `{"spec":{"^(containers)":{"image":"nginx:latest"}}}`,
			giveResource: `{"spec":{"containers":[{"image":"a"}]}}`,
			want:         Result{Status: Fail, Path: "/spec/containers/", Message: "invalid pattern type map[string]interface {}: Pattern has to be of list to compare against resource"},
		},
		{
			name:         "existence/pattern list of scalars",
			givePattern:  `{"spec":{"^(containers)":["a"]}}`,
			giveResource: `{"spec":{"containers":["a"]}}`,
			want:         Result{Status: Fail, Path: "/spec/containers/", Message: "invalid pattern type []interface {}: Pattern has to be of type map to compare against items in resource"},
		},
		{
			name:         "existence/empty resource list fails",
			givePattern:  `{"spec":{"^(containers)":[{"image":"nginx:latest"}]}}`,
			giveResource: `{"spec":{"containers":[]}}`,
			want:         Result{Status: Fail, Path: "/spec/containers/", Message: "existence anchor validation failed at path /spec/containers/"},
		},
		{
			name:         "existence/empty pattern list passes",
			givePattern:  `{"spec":{"^(containers)":[]}}`,
			giveResource: `{"spec":{"containers":[{"image":"a"}]}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "existence/each pattern element found",
			givePattern:  `{"spec":{"^(containers)":[{"image":"a"},{"image":"b"}]}}`,
			giveResource: `{"spec":{"containers":[{"image":"b"},{"image":"a"}]}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "existence/second pattern element missing",
			givePattern:  `{"spec":{"^(containers)":[{"image":"a"},{"image":"b"}]}}`,
			giveResource: `{"spec":{"containers":[{"image":"b"},{"image":"c"}]}}`,
			want:         Result{Status: Fail, Path: "/spec/containers/", Message: "existence anchor validation failed at path /spec/containers/"},
		},
		{
			name:         "existence/condition key never present is an error",
			givePattern:  `{"spec":{"^(containers)":[{"(name)":"a","image":"b"}]}}`,
			giveResource: `{"spec":{"containers":[{"image":"c"}]}}`,
			want:         Result{Status: Error, Message: "existence anchor validation failed at path /spec/containers/"},
		},
		{
			name:         "negation/absent passes",
			givePattern:  `{"spec":{"X(hostNetwork)":"null"}}`,
			giveResource: `{"spec":{"x":1}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "negation/present fails",
			givePattern:  `{"spec":{"X(hostNetwork)":"null"}}`,
			giveResource: `{"spec":{"hostNetwork":false}}`,
			want:         Result{Status: Fail, Path: "/spec/hostNetwork/", Message: "negation anchor matched in resource: /spec/hostNetwork/ is not allowed"},
		},
		{
			name:         "negation/present in second element",
			givePattern:  `{"spec":{"containers":[{"X(securityContext)":null}]}}`,
			giveResource: `{"spec":{"containers":[{"name":"a"},{"name":"b","securityContext":{}}]}}`,
			want:         Result{Status: Fail, Path: "/spec/containers/1/securityContext/", Message: "negation anchor matched in resource: /spec/containers/1/securityContext/ is not allowed"},
		},
		{
			name:         "negation/behind failed condition skips",
			givePattern:  `{"spec":{"containers":[{"(name)":"a","X(securityContext)":null}]}}`,
			giveResource: `{"spec":{"containers":[{"name":"b","securityContext":{}}]}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: resource value 'b' does not match 'a' at path /spec/containers/0/name/"},
		},
		{
			name:         "negation/behind holding condition fails",
			givePattern:  `{"spec":{"containers":[{"(name)":"a","X(securityContext)":null}]}}`,
			giveResource: `{"spec":{"containers":[{"name":"a","securityContext":{}}]}}`,
			want:         Result{Status: Fail, Path: "/spec/containers/0/securityContext/", Message: "negation anchor matched in resource: /spec/containers/0/securityContext/ is not allowed"},
		},
		{
			name:         "negation/not counted as missing anchor key",
			givePattern:  `{"spec":{"X(a)":null,"b":"1"}}`,
			giveResource: `{"spec":{"b":"2"}}`,
			want:         Result{Status: Fail, Path: "/spec/b/", Message: "resource value '2' does not match '1' at path /spec/b/"},
		},
		{
			name:         "negation/resource text with negation phrase",
			givePattern:  `{"spec":{"^(a)":[{"b":"1"}],"c":"x"}}`,
			giveResource: `{"spec":{"c":"negation anchor matched in resource"}}`,
			want:         Result{Status: Fail, Path: "/spec/c/", Message: "resource value 'negation anchor matched in resource' does not match 'x' at path /spec/c/"},
		},
		{
			name:         "global/docs holds then rest fails",
			givePattern:  `{"spec":{"containers":[{"name":"*","<(image)":"corp.reg.com/*"}],"imagePullSecrets":[{"name":"my-registry-secret"}]}}`,
			giveResource: `{"spec":{"containers":[{"name":"web","image":"corp.reg.com/nginx"}],"imagePullSecrets":[{"name":"other-secret"}]}}`,
			want:         Result{Status: Fail, Path: "/spec/imagePullSecrets/0/name/", Message: "resource value 'other-secret' does not match 'my-registry-secret' at path /spec/imagePullSecrets/0/name/"},
		},
		{
			name:         "global/docs does not hold skips",
			givePattern:  `{"spec":{"containers":[{"name":"*","<(image)":"corp.reg.com/*"}],"imagePullSecrets":[{"name":"my-registry-secret"}]}}`,
			giveResource: `{"spec":{"containers":[{"name":"web","image":"docker.io/nginx"}],"imagePullSecrets":[{"name":"other-secret"}]}}`,
			want:         Result{Status: Skip, Message: "global anchor mismatch: resource value 'docker.io/nginx' does not match 'corp.reg.com/*' at path /spec/containers/0/image/"},
		},
		{
			name:         "global/docs holds and rest passes",
			givePattern:  `{"spec":{"containers":[{"name":"*","<(image)":"corp.reg.com/*"}],"imagePullSecrets":[{"name":"my-registry-secret"}]}}`,
			giveResource: `{"spec":{"containers":[{"name":"web","image":"corp.reg.com/nginx"}],"imagePullSecrets":[{"name":"my-registry-secret"}]}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "global/one list element holds",
			givePattern:  `{"spec":{"containers":[{"name":"*","<(image)":"corp.reg.com/*"}],"imagePullSecrets":[{"name":"my-registry-secret"}]}}`,
			giveResource: `{"spec":{"containers":[{"name":"a","image":"docker.io/nginx"},{"name":"web","image":"corp.reg.com/nginx"}],"imagePullSecrets":[{"name":"other-secret"}]}}`,
			want:         Result{Status: Fail, Path: "/spec/imagePullSecrets/0/name/", Message: "resource value 'other-secret' does not match 'my-registry-secret' at path /spec/imagePullSecrets/0/name/"},
		},
		{
			name:         "global/key missing applies",
			givePattern:  `{"spec":{"containers":[{"name":"*","<(image)":"corp.reg.com/*"}],"imagePullSecrets":[{"name":"my-registry-secret"}]}}`,
			giveResource: `{"spec":{"containers":[{"name":"a"}],"imagePullSecrets":[{"name":"other-secret"}]}}`,
			want:         Result{Status: Fail, Path: "/spec/imagePullSecrets/0/name/", Message: "resource value 'other-secret' does not match 'my-registry-secret' at path /spec/imagePullSecrets/0/name/"},
		},
		{
			name:         "global/at top level",
			givePattern:  `{"<(metadata)":{"labels":{"team":"a"}},"data":{"x":"1"}}`,
			giveResource: `{"metadata":{"labels":{"team":"b"}},"data":{"x":"2"}}`,
			want:         Result{Status: Skip, Message: "global anchor mismatch: resource value 'b' does not match 'a' at path /metadata/labels/team/"},
		},
		{
			name:         "global/skip beats holding condition",
			givePattern:  `{"spec":{"(a)":"1","<(b)":"2","c":"3"}}`,
			giveResource: `{"spec":{"a":"1","b":"0","c":"0"}}`,
			want:         Result{Status: Skip, Message: "global anchor mismatch: resource value '0' does not match '2' at path /spec/b/"},
		},
		{
			name:         "global/nested does not hold",
			givePattern:  `{"spec":{"x":{"<(b)":"2"},"c":"3"}}`,
			giveResource: `{"spec":{"x":{"b":"0"},"c":"0"}}`,
			want:         Result{Status: Skip, Message: "global anchor mismatch: resource value '0' does not match '2' at path /spec/x/b/"},
		},
		{
			name:         "global/nested holds",
			givePattern:  `{"spec":{"x":{"<(b)":"2"},"c":"3"}}`,
			giveResource: `{"spec":{"x":{"b":"2"},"c":"0"}}`,
			want:         Result{Status: Fail, Path: "/spec/c/", Message: "resource value '0' does not match '3' at path /spec/c/"},
		},
		{
			name:         "global/keys evaluated in reverse order",
			givePattern:  `{"spec":{"<(a)":"1","<(b)":"2"}}`,
			giveResource: `{"spec":{"a":"0","b":"0"}}`,
			want:         Result{Status: Skip, Message: "global anchor mismatch: resource value '0' does not match '2' at path /spec/b/"},
		},
		{
			name:         "order/keys holding anchors come first",
			givePattern:  `{"spec":{"a":"1","b":{"(c)":"2"}}}`,
			giveResource: `{"spec":{"a":"0","b":{"c":"0"}}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: resource value '0' does not match '2' at path /spec/b/c/"},
		},
		{
			name:         "add anchor/matched as a plain key",
			givePattern:  `{"spec":{"+(b)":"1"}}`,
			giveResource: `{"spec":{"b":"2"}}`,
			want:         Result{Status: Fail, Path: "/spec/+(b)/", Message: "resource value '<nil>' does not match '1' at path /spec/+(b)/"},
		},
		{
			name:         "add anchor/plain key present",
			givePattern:  `{"spec":{"+(b)":"1"}}`,
			giveResource: `{"spec":{"+(b)":"1"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "star/missing key fails at parent",
			givePattern:  `{"data":{"x":"*"}}`,
			giveResource: `{"data":{"y":"1"}}`,
			want:         Result{Status: Fail, Path: "/data/", Message: "/data//x not found"},
		},
		{
			name:         "star/null fails",
			givePattern:  `{"data":{"x":"*"}}`,
			giveResource: `{"data":{"x":null}}`,
			want:         Result{Status: Fail, Path: "/data/", Message: "/data//x not found"},
		},
		{
			name:         "star/empty string passes",
			givePattern:  `{"data":{"x":"*"}}`,
			giveResource: `{"data":{"x":""}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "star/map passes",
			givePattern:  `{"data":{"x":"*"}}`,
			giveResource: `{"data":{"x":{"a":1}}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "star/in list element",
			givePattern:  `{"data":{"x":["*"]}}`,
			giveResource: `{"data":{"x":[null]}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '[<nil>]' does not match '*' at path /data/x/"},
		},
		{
			name:         "qstar/empty string fails",
			givePattern:  `{"data":{"x":"?*"}}`,
			giveResource: `{"data":{"x":""}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '' does not match '?*' at path /data/x/"},
		},
		{
			name:         "qstar/missing fails",
			givePattern:  `{"data":{"x":"?*"}}`,
			giveResource: `{"data":{"y":""}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '<nil>' does not match '?*' at path /data/x/"},
		},
		{
			name:         "qstar/number passes",
			givePattern:  `{"data":{"x":"?*"}}`,
			giveResource: `{"data":{"x":5}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "qstar/map fails",
			givePattern:  `{"data":{"x":"?*"}}`,
			giveResource: `{"data":{"x":{"a":"b"}}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value 'map[a:b]' does not match '?*' at path /data/x/"},
		},
		{
			name:         "question/one character",
			givePattern:  `{"data":{"x":"a?c"}}`,
			giveResource: `{"data":{"x":"abc"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "question/two characters",
			givePattern:  `{"data":{"x":"a?c"}}`,
			giveResource: `{"data":{"x":"abbc"}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value 'abbc' does not match 'a?c' at path /data/x/"},
		},
		{
			name:         "question/multibyte rune",
			givePattern:  `{"data":{"x":"?"}}`,
			giveResource: `{"data":{"x":"\u00e9"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "null/missing passes",
			givePattern:  `{"data":{"x":null}}`,
			giveResource: `{"data":{"y":1}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "null/empty string passes",
			givePattern:  `{"data":{"x":null}}`,
			giveResource: `{"data":{"x":""}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "null/zero passes",
			givePattern:  `{"data":{"x":null}}`,
			giveResource: `{"data":{"x":0}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "null/false passes",
			givePattern:  `{"data":{"x":null}}`,
			giveResource: `{"data":{"x":false}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "null/value fails",
			givePattern:  `{"data":{"x":null}}`,
			giveResource: `{"data":{"x":"a"}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value 'a' does not match '<nil>' at path /data/x/"},
		},
		{
			name:         "null/map fails",
			givePattern:  `{"data":{"x":null}}`,
			giveResource: `{"data":{"x":{}}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value 'map[]' does not match '<nil>' at path /data/x/"},
		},
		{
			name:         "null/list elements",
			givePattern:  `{"data":{"x":[null]}}`,
			giveResource: `{"data":{"x":["",0,false,null]}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "null/list element fails",
			givePattern:  `{"data":{"x":[null]}}`,
			giveResource: `{"data":{"x":["",1]}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '[ 1]' does not match '<nil>' at path /data/x/"},
		},
		{
			name:         "empty string/missing fails",
			givePattern:  `{"data":{"x":""}}`,
			giveResource: `{"data":{"y":1}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '<nil>' does not match '' at path /data/x/"},
		},
		{
			name:         "empty string/empty passes",
			givePattern:  `{"data":{"x":""}}`,
			giveResource: `{"data":{"x":""}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "empty map/missing fails",
			givePattern:  `{"data":{"x":{}}}`,
			giveResource: `{"data":{"y":1}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "pattern and resource have different structures. Path: /data/x/. Expected map[string]interface {}, found <nil>"},
		},
		{
			name:         "empty map/map passes",
			givePattern:  `{"data":{"x":{}}}`,
			giveResource: `{"data":{"x":{"a":1}}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "empty map/string fails",
			givePattern:  `{"data":{"x":{}}}`,
			giveResource: `{"data":{"x":"s"}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "pattern and resource have different structures. Path: /data/x/. Expected map[string]interface {}, found string"},
		},
		{
			name:         "empty list/list fails",
			givePattern:  `{"data":{"x":[]}}`,
			giveResource: `{"data":{"x":[1]}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "pattern Array empty"},
		},
		{
			name:         "empty list/missing fails",
			givePattern:  `{"data":{"x":[]}}`,
			giveResource: `{"data":{"y":1}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "validation rule failed at path /data/x/, resource does not satisfy the expected overlay pattern"},
		},
		{
			name:         "structure/list against map",
			givePattern:  `{"data":{"x":[{"a":1}]}}`,
			giveResource: `{"data":{"x":{"a":1}}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "validation rule failed at path /data/x/, resource does not satisfy the expected overlay pattern"},
		},
		{
			name:         "structure/map against list",
			givePattern:  `{"data":{"x":{"a":1}}}`,
			giveResource: `{"data":{"x":[{"a":1}]}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "pattern and resource have different structures. Path: /data/x/. Expected map[string]interface {}, found []interface {}"},
		},
		{
			name:         "structure/map against number",
			givePattern:  `{"data":{"x":{"a":1}}}`,
			giveResource: `{"data":{"x":5}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "pattern and resource have different structures. Path: /data/x/. Expected map[string]interface {}, found float64"},
		},
		{
			name:         "structure/map against bool",
			givePattern:  `{"data":{"x":{"a":1}}}`,
			giveResource: `{"data":{"x":true}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "pattern and resource have different structures. Path: /data/x/. Expected map[string]interface {}, found bool"},
		},
		{
			name:         "structure/map against null",
			givePattern:  `{"data":{"x":{"a":1}}}`,
			giveResource: `{"data":{"x":null}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "pattern and resource have different structures. Path: /data/x/. Expected map[string]interface {}, found <nil>"},
		},
		{
			name:         "structure/scalar against map",
			givePattern:  `{"data":{"x":"a"}}`,
			giveResource: `{"data":{"x":{"a":1}}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value 'map[a:1]' does not match 'a' at path /data/x/"},
		},
		{
			name:         "structure/top level scalar",
			givePattern:  `"x"`,
			giveResource: `{"a":1}`,
			want:         Result{Status: Fail, Path: "/", Message: "resource value 'map[a:1]' does not match 'x' at path /"},
		},
		{
			name:         "structure/top level null",
			givePattern:  `null`,
			giveResource: `{"a":1}`,
			want:         Result{Status: Fail, Path: "/", Message: "resource value 'map[a:1]' does not match '<nil>' at path /"},
		},
		{
			name:         "operator/\">3\" against 5",
			givePattern:  `{"data":{"x":">3"}}`,
			giveResource: `{"data":{"x":5}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\">3\" against \"5\"",
			givePattern:  `{"data":{"x":">3"}}`,
			giveResource: `{"data":{"x":"5"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\">3\" against 2",
			givePattern:  `{"data":{"x":">3"}}`,
			giveResource: `{"data":{"x":2}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '2' does not match '>3' at path /data/x/"},
		},
		{
			name:         "operator/\">3\" against \"abc\"",
			givePattern:  `{"data":{"x":">3"}}`,
			giveResource: `{"data":{"x":"abc"}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value 'abc' does not match '>3' at path /data/x/"},
		},
		{
			name:         "operator/\"<=1Gi\" against \"512Mi\"",
			givePattern:  `{"data":{"x":"<=1Gi"}}`,
			giveResource: `{"data":{"x":"512Mi"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"<=1Gi\" against \"2Gi\"",
			givePattern:  `{"data":{"x":"<=1Gi"}}`,
			giveResource: `{"data":{"x":"2Gi"}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '2Gi' does not match '<=1Gi' at path /data/x/"},
		},
		{
			name:         "operator/\">=100m\" against \"0.5\"",
			givePattern:  `{"data":{"x":">=100m"}}`,
			giveResource: `{"data":{"x":"0.5"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\">=100m\" against 0.05",
			givePattern:  `{"data":{"x":">=100m"}}`,
			giveResource: `{"data":{"x":0.05}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '0.05' does not match '>=100m' at path /data/x/"},
		},
		{
			name:         "operator/\"!nginx\" against \"nginx\"",
			givePattern:  `{"data":{"x":"!nginx"}}`,
			giveResource: `{"data":{"x":"nginx"}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value 'nginx' does not match '!nginx' at path /data/x/"},
		},
		{
			name:         "operator/\"!nginx\" against \"apache\"",
			givePattern:  `{"data":{"x":"!nginx"}}`,
			giveResource: `{"data":{"x":"apache"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"!*:latest\" against \"nginx:latest\"",
			givePattern:  `{"data":{"x":"!*:latest"}}`,
			giveResource: `{"data":{"x":"nginx:latest"}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value 'nginx:latest' does not match '!*:latest' at path /data/x/"},
		},
		{
			name:         "operator/\"!*:latest\" against \"nginx:1\"",
			givePattern:  `{"data":{"x":"!*:latest"}}`,
			giveResource: `{"data":{"x":"nginx:1"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"a|b\" against \"b\"",
			givePattern:  `{"data":{"x":"a|b"}}`,
			giveResource: `{"data":{"x":"b"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"a | b\" against \"c\"",
			givePattern:  `{"data":{"x":"a | b"}}`,
			giveResource: `{"data":{"x":"c"}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value 'c' does not match 'a | b' at path /data/x/"},
		},
		{
			name:         "operator/\">1 & <5\" against 3",
			givePattern:  `{"data":{"x":">1 & <5"}}`,
			giveResource: `{"data":{"x":3}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\">1 & <5\" against 7",
			givePattern:  `{"data":{"x":">1 & <5"}}`,
			giveResource: `{"data":{"x":7}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '7' does not match '>1 & <5' at path /data/x/"},
		},
		{
			name:         "operator/\"1-5\" against 3",
			givePattern:  `{"data":{"x":"1-5"}}`,
			giveResource: `{"data":{"x":3}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"1-5\" against 6",
			givePattern:  `{"data":{"x":"1-5"}}`,
			giveResource: `{"data":{"x":6}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '6' does not match '1-5' at path /data/x/"},
		},
		{
			name:         "operator/\"1!-5\" against 6",
			givePattern:  `{"data":{"x":"1!-5"}}`,
			giveResource: `{"data":{"x":6}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"1!-5\" against 3",
			givePattern:  `{"data":{"x":"1!-5"}}`,
			giveResource: `{"data":{"x":3}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '3' does not match '1!-5' at path /data/x/"},
		},
		{
			name:         "operator/\"-5--1\" against -3",
			givePattern:  `{"data":{"x":"-5--1"}}`,
			giveResource: `{"data":{"x":-3}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"1Gi-2Gi\" against \"1536Mi\"",
			givePattern:  `{"data":{"x":"1Gi-2Gi"}}`,
			giveResource: `{"data":{"x":"1536Mi"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\">1h\" against \"90m\"",
			givePattern:  `{"data":{"x":">1h"}}`,
			giveResource: `{"data":{"x":"90m"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"<30s\" against \"1m\"",
			givePattern:  `{"data":{"x":"<30s"}}`,
			giveResource: `{"data":{"x":"1m"}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '1m' does not match '<30s' at path /data/x/"},
		},
		{
			name:         "operator/\"<30s\" against \"10s\"",
			givePattern:  `{"data":{"x":"<30s"}}`,
			giveResource: `{"data":{"x":"10s"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"!5\" against 5",
			givePattern:  `{"data":{"x":"!5"}}`,
			giveResource: `{"data":{"x":5}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '5' does not match '!5' at path /data/x/"},
		},
		{
			name:         "operator/\"!5\" against 6",
			givePattern:  `{"data":{"x":"!5"}}`,
			giveResource: `{"data":{"x":6}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"<1h\" against null",
			givePattern:  `{"data":{"x":"<1h"}}`,
			giveResource: `{"data":{"x":null}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\">=0\" against null",
			givePattern:  `{"data":{"x":">=0"}}`,
			giveResource: `{"data":{"x":null}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"!foo\" against null",
			givePattern:  `{"data":{"x":"!foo"}}`,
			giveResource: `{"data":{"x":null}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '<nil>' does not match '!foo' at path /data/x/"},
		},
		{
			name:         "operator/\"!*\" against null",
			givePattern:  `{"data":{"x":"!*"}}`,
			giveResource: `{"data":{"x":null}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '<nil>' does not match '!*' at path /data/x/"},
		},
		{
			name:         "operator/\"5\" against 5",
			givePattern:  `{"data":{"x":"5"}}`,
			giveResource: `{"data":{"x":5}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"5\" against \"5.0\"",
			givePattern:  `{"data":{"x":"5"}}`,
			giveResource: `{"data":{"x":"5.0"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"1.5\" against 1.5",
			givePattern:  `{"data":{"x":"1.5"}}`,
			giveResource: `{"data":{"x":1.5}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"1.*\" against 1.5",
			givePattern:  `{"data":{"x":"1.*"}}`,
			giveResource: `{"data":{"x":1.5}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"1*\" against 15",
			givePattern:  `{"data":{"x":"1*"}}`,
			giveResource: `{"data":{"x":15}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"*5\" against 5",
			givePattern:  `{"data":{"x":"*5"}}`,
			giveResource: `{"data":{"x":5}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '5' does not match '*5' at path /data/x/"},
		},
		{
			name:         "operator/\"5E*\" against 5",
			givePattern:  `{"data":{"x":"5E*"}}`,
			giveResource: `{"data":{"x":5}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"1E*\" against 1.5",
			givePattern:  `{"data":{"x":"1E*"}}`,
			giveResource: `{"data":{"x":1.5}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '1.5' does not match '1E*' at path /data/x/"},
		},
		{
			name:         "operator/\"true\" against true",
			givePattern:  `{"data":{"x":"true"}}`,
			giveResource: `{"data":{"x":true}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"!true\" against false",
			givePattern:  `{"data":{"x":"!true"}}`,
			giveResource: `{"data":{"x":false}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\">abc\" against \"abd\"",
			givePattern:  `{"data":{"x":">abc"}}`,
			giveResource: `{"data":{"x":"abd"}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value 'abd' does not match '>abc' at path /data/x/"},
		},
		{
			name:         "operator/\"<=\" against \"<=\"",
			givePattern:  `{"data":{"x":"<="}}`,
			giveResource: `{"data":{"x":"<="}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\">\" against \">\"",
			givePattern:  `{"data":{"x":">"}}`,
			giveResource: `{"data":{"x":">"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"0\" against \"0s\"",
			givePattern:  `{"data":{"x":"0"}}`,
			giveResource: `{"data":{"x":"0s"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"0\" against 0",
			givePattern:  `{"data":{"x":"0"}}`,
			giveResource: `{"data":{"x":0}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\">0\" against \"5\"",
			givePattern:  `{"data":{"x":">0"}}`,
			giveResource: `{"data":{"x":"5"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"=5\" against 5",
			givePattern:  `{"data":{"x":"=5"}}`,
			giveResource: `{"data":{"x":5}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '5' does not match '=5' at path /data/x/"},
		},
		{
			name:         "operator/\"a&b\" against \"a&b\"",
			givePattern:  `{"data":{"x":"a&b"}}`,
			giveResource: `{"data":{"x":"a&b"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"a|b\" against \"a|b\"",
			givePattern:  `{"data":{"x":"a|b"}}`,
			giveResource: `{"data":{"x":"a|b"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"  a  \" against \"a\"",
			givePattern:  `{"data":{"x":"  a  "}}`,
			giveResource: `{"data":{"x":"a"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\" > 3\" against 4",
			givePattern:  `{"data":{"x":" > 3"}}`,
			giveResource: `{"data":{"x":4}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"10-1\" against 5",
			givePattern:  `{"data":{"x":"10-1"}}`,
			giveResource: `{"data":{"x":5}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '5' does not match '10-1' at path /data/x/"},
		},
		{
			name:         "operator/\"1.5-2.5\" against 2",
			givePattern:  `{"data":{"x":"1.5-2.5"}}`,
			giveResource: `{"data":{"x":2}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"1h-2h\" against \"90m\"",
			givePattern:  `{"data":{"x":"1h-2h"}}`,
			giveResource: `{"data":{"x":"90m"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"1e3\" against 1000",
			givePattern:  `{"data":{"x":"1e3"}}`,
			giveResource: `{"data":{"x":1000}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\">1e3\" against 2000",
			givePattern:  `{"data":{"x":">1e3"}}`,
			giveResource: `{"data":{"x":2000}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"1k\" against 1000",
			givePattern:  `{"data":{"x":"1k"}}`,
			giveResource: `{"data":{"x":1000}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"1Ki\" against 1024",
			givePattern:  `{"data":{"x":"1Ki"}}`,
			giveResource: `{"data":{"x":1024}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"100m\" against 0.1",
			givePattern:  `{"data":{"x":"100m"}}`,
			giveResource: `{"data":{"x":0.1}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"*\" against 5",
			givePattern:  `{"data":{"x":"*"}}`,
			giveResource: `{"data":{"x":5}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"?\" against 5",
			givePattern:  `{"data":{"x":"?"}}`,
			giveResource: `{"data":{"x":5}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '5' does not match '?' at path /data/x/"},
		},
		{
			name:         "operator/\"!?\" against 12",
			givePattern:  `{"data":{"x":"!?"}}`,
			giveResource: `{"data":{"x":12}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"\" against null",
			givePattern:  `{"data":{"x":""}}`,
			giveResource: `{"data":{"x":null}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '<nil>' does not match '' at path /data/x/"},
		},
		{
			name:         "operator/\"\" against 0",
			givePattern:  `{"data":{"x":""}}`,
			giveResource: `{"data":{"x":0}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '0' does not match '' at path /data/x/"},
		},
		{
			name:         "operator/\"\" against false",
			givePattern:  `{"data":{"x":""}}`,
			giveResource: `{"data":{"x":false}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value 'false' does not match '' at path /data/x/"},
		},
		{
			name:         "operator/\"1|2|3\" against 2",
			givePattern:  `{"data":{"x":"1|2|3"}}`,
			giveResource: `{"data":{"x":2}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"<5 | >10\" against 7",
			givePattern:  `{"data":{"x":"<5 | >10"}}`,
			giveResource: `{"data":{"x":7}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '7' does not match '<5 | >10' at path /data/x/"},
		},
		{
			name:         "operator/\"<5 | >10\" against 12",
			givePattern:  `{"data":{"x":"<5 | >10"}}`,
			giveResource: `{"data":{"x":12}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\">1\" against true",
			givePattern:  `{"data":{"x":">1"}}`,
			giveResource: `{"data":{"x":true}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value 'true' does not match '>1' at path /data/x/"},
		},
		{
			name:         "operator/\"!a\" against [\"b\", \"c\"]",
			givePattern:  `{"data":{"x":"!a"}}`,
			giveResource: `{"data":{"x":["b","c"]}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"!a\" against [\"a\", \"c\"]",
			givePattern:  `{"data":{"x":"!a"}}`,
			giveResource: `{"data":{"x":["a","c"]}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '[a c]' does not match '!a' at path /data/x/"},
		},
		{
			name:         "operator/\">=2\" against [1, 2]",
			givePattern:  `{"data":{"x":">=2"}}`,
			giveResource: `{"data":{"x":[1,2]}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '[1 2]' does not match '>=2' at path /data/x/"},
		},
		{
			name:         "operator/\"1.-5\" against 3",
			givePattern:  `{"data":{"x":"1.-5"}}`,
			giveResource: `{"data":{"x":3}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '3' does not match '1.-5' at path /data/x/"},
		},
		{
			name:         "operator/\"1e-5\" against 2",
			givePattern:  `{"data":{"x":"1e-5"}}`,
			giveResource: `{"data":{"x":2}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '2' does not match '1e-5' at path /data/x/"},
		},
		{
			name:         "operator/\"+1-+5\" against 3",
			givePattern:  `{"data":{"x":"+1-+5"}}`,
			giveResource: `{"data":{"x":3}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"<1.5m\" against \"1m\"",
			givePattern:  `{"data":{"x":"<1.5m"}}`,
			giveResource: `{"data":{"x":"1m"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "operator/\"1h30m\" against \"90m\"",
			givePattern:  `{"data":{"x":"1h30m"}}`,
			giveResource: `{"data":{"x":"90m"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "number/5 against 5",
			givePattern:  `{"data":{"x":5}}`,
			giveResource: `{"data":{"x":5}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "number/5 against 5.5",
			givePattern:  `{"data":{"x":5}}`,
			giveResource: `{"data":{"x":5.5}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '5.5' does not match '5' at path /data/x/"},
		},
		{
			name:         "number/5 against \"5\"",
			givePattern:  `{"data":{"x":5}}`,
			giveResource: `{"data":{"x":"5"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "number/5 against \"5.0\"",
			givePattern:  `{"data":{"x":5}}`,
			giveResource: `{"data":{"x":"5.0"}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '5.0' does not match '5' at path /data/x/"},
		},
		{
			name:         "number/5 against \"abc\"",
			givePattern:  `{"data":{"x":5}}`,
			giveResource: `{"data":{"x":"abc"}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value 'abc' does not match '5' at path /data/x/"},
		},
		{
			name:         "number/5 against null",
			givePattern:  `{"data":{"x":5}}`,
			giveResource: `{"data":{"x":null}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '<nil>' does not match '5' at path /data/x/"},
		},
		{
			name:         "number/0 against null",
			givePattern:  `{"data":{"x":0}}`,
			giveResource: `{"data":{"x":null}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '<nil>' does not match '0' at path /data/x/"},
		},
		{
			name:         "number/1.5 against 1.5",
			givePattern:  `{"data":{"x":1.5}}`,
			giveResource: `{"data":{"x":1.5}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "number/1.5 against \"1.5\"",
			givePattern:  `{"data":{"x":1.5}}`,
			giveResource: `{"data":{"x":"1.5"}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "number/1.5 against 1",
			givePattern:  `{"data":{"x":1.5}}`,
			giveResource: `{"data":{"x":1}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '1' does not match '1.5' at path /data/x/"},
		},
		{
			name:         "number/true against true",
			givePattern:  `{"data":{"x":true}}`,
			giveResource: `{"data":{"x":true}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "number/true against \"true\"",
			givePattern:  `{"data":{"x":true}}`,
			giveResource: `{"data":{"x":"true"}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value 'true' does not match 'true' at path /data/x/"},
		},
		{
			name:         "number/false against null",
			givePattern:  `{"data":{"x":false}}`,
			giveResource: `{"data":{"x":null}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '<nil>' does not match 'false' at path /data/x/"},
		},
		{
			name:         "number/false against false",
			givePattern:  `{"data":{"x":false}}`,
			giveResource: `{"data":{"x":false}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "number/1000000 against 1000000",
			givePattern:  `{"data":{"x":1000000}}`,
			giveResource: `{"data":{"x":1000000}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "number/1000000 against 999",
			givePattern:  `{"data":{"x":1000000}}`,
			giveResource: `{"data":{"x":999}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '999' does not match '1000000' at path /data/x/"},
		},
		{
			name:         "number/1000000 against \"x\"",
			givePattern:  `{"data":{"x":1000000}}`,
			giveResource: `{"data":{"x":"x"}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value 'x' does not match '1000000' at path /data/x/"},
		},
		{
			name:         "list/scalar against each element",
			givePattern:  `{"data":{"x":"a*"}}`,
			giveResource: `{"data":{"x":["ab","ac"]}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "list/scalar against failing element",
			givePattern:  `{"data":{"x":"a*"}}`,
			giveResource: `{"data":{"x":["ab","x"]}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '[ab x]' does not match 'a*' at path /data/x/"},
		},
		{
			name:         "list/scalar against empty list",
			givePattern:  `{"data":{"x":"a*"}}`,
			giveResource: `{"data":{"x":[]}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "list/scalar list against elements",
			givePattern:  `{"data":{"x":["a*"]}}`,
			giveResource: `{"data":{"x":["ab",5]}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '[ab 5]' does not match 'a*' at path /data/x/"},
		},
		{
			name:         "list/scalar list against nested list",
			givePattern:  `{"data":{"x":["a*"]}}`,
			giveResource: `{"data":{"x":[["ab"],"ab"]}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '[[ab] ab]' does not match 'a*' at path /data/x/"},
		},
		{
			name:         "list/only first map counts",
			givePattern:  `{"data":{"x":[{"a":"1"},{"b":"2"}]}}`,
			giveResource: `{"data":{"x":[{"a":"1"}]}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "list/list of lists too short",
			givePattern:  `{"data":{"x":[["a"],["b"]]}}`,
			giveResource: `{"data":{"x":[["a"]]}}`,
			want:         Result{Status: Error, Message: "validate Array failed, array length mismatch, resource Array len is 1 and pattern Array len is 2"},
		},
		{
			name:         "list/list of lists by position",
			givePattern:  `{"data":{"x":[["a"],["b"]]}}`,
			giveResource: `{"data":{"x":[["a"],["b"],["c"]]}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "list/list of lists element fails",
			givePattern:  `{"data":{"x":[["a"],["b"]]}}`,
			giveResource: `{"data":{"x":[["a"],["c"]]}}`,
			want:         Result{Status: Fail, Path: "/data/x/1/", Message: "resource value '[c]' does not match 'b' at path /data/x/1/"},
		},
		{
			name:         "list/list of lists skipped",
			givePattern:  `{"data":{"x":[[{"(a)":"1"}]]}}`,
			giveResource: `{"data":{"x":[[{"a":"2"}]]}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: resource value '2' does not match '1' at path /data/x/0/0/a/"},
		},
		{
			name:         "list/maps against scalars",
			givePattern:  `{"data":{"x":[{"a":"1"}]}}`,
			giveResource: `{"data":{"x":["s",5]}}`,
			want:         Result{Status: Fail, Path: "/data/x/0/", Message: "pattern and resource have different structures. Path: /data/x/0/. Expected map[string]interface {}, found string"},
		},
		{
			name:         "list/maps against empty list",
			givePattern:  `{"data":{"x":[{"a":"1"}]}}`,
			giveResource: `{"data":{"x":[]}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "list/top level",
			givePattern:  `[{"a":"1"}]`,
			giveResource: `[{"a":"1"},{"a":"2"}]`,
			want:         Result{Status: Fail, Path: "/1/a/", Message: "resource value '2' does not match '1' at path /1/a/"},
		},
		{
			name:         "metadata/label wildcard key matches",
			givePattern:  `{"metadata":{"labels":{"app*":"foo"}}}`,
			giveResource: `{"metadata":{"labels":{"app.kubernetes.io/name":"foo"}}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "metadata/label wildcard key value fails",
			givePattern:  `{"metadata":{"labels":{"app*":"foo"}}}`,
			giveResource: `{"metadata":{"labels":{"app.kubernetes.io/name":"bar"}}}`,
			want:         Result{Status: Fail, Path: "/metadata/labels/app.kubernetes.io/name/", Message: "resource value 'bar' does not match 'foo' at path /metadata/labels/app.kubernetes.io/name/"},
		},
		{
			name:         "metadata/label wildcard key no match",
			givePattern:  `{"metadata":{"labels":{"app*":"foo"}}}`,
			giveResource: `{"metadata":{"labels":{"x":"foo"}}}`,
			want:         Result{Status: Fail, Path: "/metadata/labels/app*/", Message: "resource value '<nil>' does not match 'foo' at path /metadata/labels/app*/"},
		},
		{
			name:         "metadata/no labels in resource",
			givePattern:  `{"metadata":{"labels":{"app*":"foo"}}}`,
			giveResource: `{"metadata":{"annotations":{"x":"foo"}}}`,
			want:         Result{Status: Fail, Path: "/metadata/labels/", Message: "pattern and resource have different structures. Path: /metadata/labels/. Expected map[string]interface {}, found <nil>"},
		},
		{
			name:         "metadata/question mark key",
			givePattern:  `{"metadata":{"labels":{"ap?":"?*"}}}`,
			giveResource: `{"metadata":{"labels":{"apx":"v"}}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "metadata/equality anchor on wildcard key",
			givePattern:  `{"metadata":{"labels":{"=(team-*)":"a*"}}}`,
			giveResource: `{"metadata":{"labels":{"team-x":"b"}}}`,
			want:         Result{Status: Fail, Path: "/metadata/labels/team-x/", Message: "resource value 'b' does not match 'a*' at path /metadata/labels/team-x/"},
		},
		{
			name:         "metadata/condition on wildcard key skips",
			givePattern:  `{"metadata":{"labels":{"(team-*)":"a*","env":"prod"}}}`,
			giveResource: `{"metadata":{"labels":{"team-x":"b","env":"dev"}}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: resource value 'b' does not match 'a*' at path /metadata/labels/team-x/"},
		},
		{
			name:         "metadata/condition on wildcard key holds",
			givePattern:  `{"metadata":{"labels":{"(team-*)":"a*","env":"prod"}}}`,
			giveResource: `{"metadata":{"labels":{"team-x":"abc","env":"dev"}}}`,
			want:         Result{Status: Fail, Path: "/metadata/labels/env/", Message: "resource value 'dev' does not match 'prod' at path /metadata/labels/env/"},
		},
		{
			name:         "metadata/negation on wildcard key",
			givePattern:  `{"metadata":{"labels":{"X(bad*)":"*"}}}`,
			giveResource: `{"metadata":{"labels":{"badlabel":"x"}}}`,
			want:         Result{Status: Fail, Path: "/metadata/labels/badlabel/", Message: "negation anchor matched in resource: /metadata/labels/badlabel/ is not allowed"},
		},
		{
			name:         "metadata/annotation wildcard key",
			givePattern:  `{"metadata":{"annotations":{"*.io/foo":"bar"}}}`,
			giveResource: `{"metadata":{"annotations":{"a.io/foo":"baz"}}}`,
			want:         Result{Status: Fail, Path: "/metadata/annotations/a.io/foo/", Message: "resource value 'baz' does not match 'bar' at path /metadata/annotations/a.io/foo/"},
		},
		{
			name:         "metadata/anchored labels key",
			givePattern:  `{"metadata":{"=(labels)":{"app*":"foo"}}}`,
			giveResource: `{"metadata":{"labels":{"apple":"foo"}}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "metadata/pod template labels",
			givePattern:  `{"spec":{"template":{"metadata":{"labels":{"app*":"?*"}}}}}`,
			giveResource: `{"spec":{"template":{"metadata":{"labels":{"apps":""}}}}}`,
			want:         Result{Status: Fail, Path: "/spec/template/metadata/labels/apps/", Message: "resource value '' does not match '?*' at path /spec/template/metadata/labels/apps/"},
		},
		{
			name:         "metadata/expansion persists across list elements",
			givePattern:  `{"things":[{"metadata":{"labels":{"app*":"x"}}}]}`,
			giveResource: `{"things":[{"metadata":{"labels":{"app1":"x"}}},{"metadata":{"labels":{"app2":"x"}}}]}`,
			want:         Result{Status: Fail, Path: "/things/1/metadata/labels/app1/", Message: "resource value '<nil>' does not match 'x' at path /things/1/metadata/labels/app1/"},
		},
		{
			name:         "metadata/non-string label values dropped",
			givePattern:  `{"metadata":{"labels":{"x":null,"y":5,"z":"v"}}}`,
			giveResource: `{"metadata":{"labels":{"z":"v"}}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "metadata/non-string label values kept without resource labels",
			givePattern:  `{"metadata":{"labels":{"y":5}}}`,
			giveResource: `{"metadata":{"name":"n"}}`,
			want:         Result{Status: Fail, Path: "/metadata/labels/", Message: "pattern and resource have different structures. Path: /metadata/labels/. Expected map[string]interface {}, found <nil>"},
		},
		{
			name:         "metadata/wildcard ignores non-string resource labels",
			givePattern:  `{"metadata":{"labels":{"app*":"foo"}}}`,
			giveResource: `{"metadata":{"labels":{"app1":5}}}`,
			want:         Result{Status: Fail, Path: "/metadata/labels/app*/", Message: "resource value '<nil>' does not match 'foo' at path /metadata/labels/app*/"},
		},
		{
			name:         "metadata/wildcard keys elsewhere are literal",
			givePattern:  `{"data":{"a*":"1"}}`,
			giveResource: `{"data":{"ab":"1"}}`,
			want:         Result{Status: Fail, Path: "/data/a*/", Message: "resource value '<nil>' does not match '1' at path /data/a*/"},
		},
		{
			name:         "metadata/expansion changes key order",
			givePattern:  `{"metadata":{"labels":{"a*":"x","n":{"(k)":"v"}},"z":"1"}}`,
			giveResource: `{"metadata":{"labels":{"ab":"y","n":{"k":"w"}},"z":"2"}}`,
			want:         Result{Status: Fail, Path: "/metadata/labels/ab/", Message: "resource value 'y' does not match 'x' at path /metadata/labels/ab/"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CompileSubstituted(decode(t, tt.givePattern)).Validate(decode(t, tt.giveResource))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate(%s, %s) mismatch (-want +got):\n%s", tt.givePattern, tt.giveResource, diff)
			}
		})
	}
}

// TestValidateIntResources pins the webhook's view of resources, whose
// integers are int64 (here json.Number): string comparisons and messages
// differ from float64 values.
func TestValidateIntResources(t *testing.T) {
	tests := []struct {
		name         string
		givePattern  string
		giveResource string
		want         Result
	}{
		{
			name:         "int resource/\"*5\" against 5",
			givePattern:  `{"data":{"x":"*5"}}`,
			giveResource: `{"data":{"x":5}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "int resource/\"5E*\" against 5",
			givePattern:  `{"data":{"x":"5E*"}}`,
			giveResource: `{"data":{"x":5}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '5' does not match '5E*' at path /data/x/"},
		},
		{
			name:         "int resource/\"1*\" against 15",
			givePattern:  `{"data":{"x":"1*"}}`,
			giveResource: `{"data":{"x":15}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "int resource/\"?\" against 5",
			givePattern:  `{"data":{"x":"?"}}`,
			giveResource: `{"data":{"x":5}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "int resource/\"!5\" against 5",
			givePattern:  `{"data":{"x":"!5"}}`,
			giveResource: `{"data":{"x":5}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '5' does not match '!5' at path /data/x/"},
		},
		{
			name:         "int resource/\"5\" against 5",
			givePattern:  `{"data":{"x":"5"}}`,
			giveResource: `{"data":{"x":5}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "int resource/5 against 5",
			givePattern:  `{"data":{"x":5}}`,
			giveResource: `{"data":{"x":5}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "int resource/null against 0",
			givePattern:  `{"data":{"x":null}}`,
			giveResource: `{"data":{"x":0}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "int resource/1.5 against 1",
			givePattern:  `{"data":{"x":1.5}}`,
			giveResource: `{"data":{"x":1}}`,
			want:         Result{Status: Fail, Path: "/data/x/", Message: "resource value '1' does not match '1.5' at path /data/x/"},
		},
		{
			name:         "int resource/1000000 against 1000000",
			givePattern:  `{"data":{"x":1000000}}`,
			giveResource: `{"data":{"x":1000000}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "int resource/\"<1h\" against 0",
			givePattern:  `{"data":{"x":"<1h"}}`,
			giveResource: `{"data":{"x":0}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "int resource/\">=1\" against 2",
			givePattern:  `{"data":{"x":">=1"}}`,
			giveResource: `{"data":{"x":2}}`,
			want:         Result{Status: Pass},
		},
		{
			name:         "int resource/printed in full",
			givePattern:  `{"data":{"(x)":"abc"}}`,
			giveResource: `{"data":{"x":1000000}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: resource value '1000000' does not match 'abc' at path /data/x/"},
		},
		{
			name:         "int resource/type name",
			givePattern:  `{"data":{"(x)":{"a":1}}}`,
			giveResource: `{"data":{"x":7}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: pattern and resource have different structures. Path: /data/x/. Expected map[string]interface {}, found int64"},
		},
		{
			name:         "int resource/inside list",
			givePattern:  `{"data":{"(x)":"abc"}}`,
			giveResource: `{"data":{"x":[1,2.5,10000000]}}`,
			want:         Result{Status: Skip, Message: "conditional anchor mismatch: resource value '[1 2.5 10000000]' does not match 'abc' at path /data/x/"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile(decode(t, tt.givePattern))
			if err != nil {
				t.Fatalf("Compile(%s) = %v", tt.givePattern, err)
			}
			got := p.Validate(decodeNumbers(t, tt.giveResource))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate(%s, %s) mismatch (-want +got):\n%s", tt.givePattern, tt.giveResource, diff)
			}
		})
	}
}

// TestValidateHugeExponents pins that quantities with huge exponents, which
// a resource author controls, are compared at a cost bounded by their
// length (resource.Quantity's own arithmetic would run for minutes).
func TestValidateHugeExponents(t *testing.T) {
	tests := []struct {
		name         string
		givePattern  any
		giveResource any
		want         Status
	}{
		{name: "huge value against a limit", givePattern: map[string]any{"a": "<=2Gi"}, giveResource: map[string]any{"a": "1E3333333333333"}, want: Fail},
		{name: "tiny value against a limit", givePattern: map[string]any{"a": "<=2Gi"}, giveResource: map[string]any{"a": "1e-3333333333333"}, want: Pass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := CompileSubstituted(tt.givePattern)
			if got := p.Validate(tt.giveResource).Status; got != tt.want {
				t.Errorf("Validate(%v against %v) = %v, want %v", tt.giveResource, tt.givePattern, got, tt.want)
			}
		})
	}
}
