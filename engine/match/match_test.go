package match

import (
	"testing"

	"github.com/verdict-policy/verdict/engine/kyverno"
)

// Requests used by the tables. Each helper returns a fresh value.

// podReq is a CREATE of a Pod by alice.
func podReq() Resource {
	return Resource{
		Version: "v1", Kind: "Pod", Name: "nginx", Namespace: "default",
		Labels:          map[string]string{"app": "nginx", "tier": "web"},
		Annotations:     map[string]string{"imageregistry": "https://hub.docker.com/", "example.com/scan": "true"},
		NamespaceLabels: map[string]string{"env": "prod", "kubernetes.io/metadata.name": "default"},
		Operation:       "CREATE",
		Username:        "alice", Groups: []string{"system:authenticated", "devs"},
		Roles: []string{"default:editor"}, ClusterRoles: []string{"view"},
	}
}

func with(r Resource, edit func(*Resource)) Resource {
	edit(&r)
	return r
}

func podSub(sub string) Resource {
	return with(podReq(), func(r *Resource) { r.Subresource = sub })
}

func deployReq() Resource {
	return with(podReq(), func(r *Resource) { r.Group, r.Kind, r.Name = "apps", "Deployment", "web" })
}

func nsReq() Resource {
	return Resource{
		Version: "v1", Kind: "Namespace", Name: "team-a",
		Labels:    map[string]string{"env": "prod"},
		Operation: "CREATE", Username: "alice",
	}
}

func nodeReq() Resource {
	return Resource{Version: "v1", Kind: "Node", Name: "node-1", Operation: "CREATE", Username: "alice"}
}

func TestMatcher(t *testing.T) {
	tests := []struct {
		name         string
		giveBlock    string // a match or exclude block, as JSON
		giveResource Resource
		wantMatch    bool // Matches: the block used as match
		wantExclude  bool // Excludes: the block used as exclude
	}{
		// kinds
		{name: "kind", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "kind mismatch", giveBlock: `{"any":[{"resources":{"kinds":["Deployment"]}}]}`, giveResource: podReq()},
		{name: "kind is case sensitive", giveBlock: `{"any":[{"resources":{"kinds":["pod"]}}]}`, giveResource: podReq()},
		{name: "one of the kinds", giveBlock: `{"any":[{"resources":{"kinds":["Deployment","Pod"]}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "version/kind", giveBlock: `{"any":[{"resources":{"kinds":["v1/Pod"]}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "version/kind other version", giveBlock: `{"any":[{"resources":{"kinds":["v2/Pod"]}}]}`, giveResource: podReq()},
		{name: "group/version/kind", giveBlock: `{"any":[{"resources":{"kinds":["apps/v1/Deployment"]}}]}`, giveResource: deployReq(), wantMatch: true, wantExclude: true},
		{name: "group/version/kind other group", giveBlock: `{"any":[{"resources":{"kinds":["extensions/v1/Deployment"]}}]}`, giveResource: deployReq()},
		{name: "core group is empty in group/version/kind", giveBlock: `{"any":[{"resources":{"kinds":["core/v1/Pod"]}}]}`, giveResource: podReq()},
		{name: "group/*/kind", giveBlock: `{"any":[{"resources":{"kinds":["apps/*/Deployment"]}}]}`, giveResource: with(deployReq(), func(r *Resource) { r.Version = "v1beta2" }), wantMatch: true, wantExclude: true},
		{name: "group/*/*", giveBlock: `{"any":[{"resources":{"kinds":["apps/*/*"]}}]}`, giveResource: deployReq(), wantMatch: true, wantExclude: true},
		{name: "*/kind", giveBlock: `{"any":[{"resources":{"kinds":["*/Pod"]}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "wildcard in kind", giveBlock: `{"any":[{"resources":{"kinds":["Dep*"]}}]}`, giveResource: deployReq(), wantMatch: true, wantExclude: true},
		{name: "star kind", giveBlock: `{"any":[{"resources":{"kinds":["*"]}}]}`, giveResource: nodeReq(), wantMatch: true, wantExclude: true},
		{name: "star kind skips subresources", giveBlock: `{"any":[{"resources":{"kinds":["*"]}}]}`, giveResource: podSub("exec")},
		{name: "star/star includes subresources", giveBlock: `{"any":[{"resources":{"kinds":["*/*"]}}]}`, giveResource: podSub("exec"), wantMatch: true, wantExclude: true},
		{name: "kind does not select its subresources", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]}}]}`, giveResource: podSub("exec")},
		{name: "kind/subresource", giveBlock: `{"any":[{"resources":{"kinds":["Pod/exec"]}}]}`, giveResource: podSub("exec"), wantMatch: true, wantExclude: true},
		{name: "kind.subresource", giveBlock: `{"any":[{"resources":{"kinds":["Pod.exec"]}}]}`, giveResource: podSub("exec"), wantMatch: true, wantExclude: true},
		{name: "kind/subresource skips the main resource", giveBlock: `{"any":[{"resources":{"kinds":["Pod/exec"]}}]}`, giveResource: podReq()},
		{name: "kind/subresource other subresource", giveBlock: `{"any":[{"resources":{"kinds":["Pod/exec"]}}]}`, giveResource: podSub("status")},
		{name: "version/kind/subresource", giveBlock: `{"any":[{"resources":{"kinds":["v1/Pod/status"]}}]}`, giveResource: podSub("status"), wantMatch: true, wantExclude: true},
		{name: "kind/star selects the main resource", giveBlock: `{"any":[{"resources":{"kinds":["Pod/*"]}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "kind/star selects subresources", giveBlock: `{"any":[{"resources":{"kinds":["Pod/*"]}}]}`, giveResource: podSub("status"), wantMatch: true, wantExclude: true},
		{name: "star/subresource", giveBlock: `{"any":[{"resources":{"kinds":["*/status"]}}]}`, giveResource: with(deployReq(), func(r *Resource) { r.Subresource = "status" }), wantMatch: true, wantExclude: true},
		{name: "star/subresource skips the main resource", giveBlock: `{"any":[{"resources":{"kinds":["*/status"]}}]}`, giveResource: podReq()},
		{name: "group/version/kind/subresource", giveBlock: `{"any":[{"resources":{"kinds":["apps/v1/Deployment/scale"]}}]}`, giveResource: with(deployReq(), func(r *Resource) { r.Subresource = "scale" }), wantMatch: true, wantExclude: true},
		{name: "shared subresource kind is not the request kind", giveBlock: `{"any":[{"resources":{"kinds":["Scale"]}}]}`, giveResource: with(deployReq(), func(r *Resource) { r.Subresource = "scale" })},
		{name: "Pod selects ephemeralcontainers", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]}}]}`, giveResource: podSub("ephemeralcontainers"), wantMatch: true, wantExclude: true},
		{name: "star selects pod ephemeralcontainers", giveBlock: `{"any":[{"resources":{"kinds":["*"]}}]}`, giveResource: podSub("ephemeralcontainers"), wantMatch: true, wantExclude: true},
		{name: "ephemeralcontainers only for core v1 Pod", giveBlock: `{"any":[{"resources":{"kinds":["Deployment"]}}]}`, giveResource: with(deployReq(), func(r *Resource) { r.Subresource = "ephemeralcontainers" })},
		{name: "PodExecOptions is not Pod/exec", giveBlock: `{"any":[{"resources":{"kinds":["PodExecOptions"]}}]}`, giveResource: podSub("exec")},
		{name: "PodExecOptions as the object kind", giveBlock: `{"any":[{"resources":{"kinds":["PodExecOptions"]}}]}`, giveResource: with(podReq(), func(r *Resource) { r.Kind = "PodExecOptions" }), wantMatch: true, wantExclude: true},

		// names
		{name: "name", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"name":"nginx"}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "name wildcard", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"name":"ngi*"}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "name mismatch", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"name":"redis"}}]}`, giveResource: podReq()},
		{name: "names one of", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"names":["redis","ngin?"]}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "names none", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"names":["redis","web-*"]}}]}`, giveResource: podReq()},
		{name: "names match generateName when there is no name", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"names":["nginx-*"]}}]}`, giveResource: with(podReq(), func(r *Resource) { r.Name, r.GenerateName = "", "nginx-" }), wantMatch: true, wantExclude: true},
		{name: "names ignore generateName when there is a name", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"names":["gen-*"]}}]}`, giveResource: with(podReq(), func(r *Resource) { r.GenerateName = "gen-" })},

		// namespaces
		{name: "namespace", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"namespaces":["kube-system","default"]}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "namespace wildcard", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"namespaces":["def*"]}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "namespace mismatch", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"namespaces":["prod"]}}]}`, giveResource: podReq()},
		{name: "a Namespace is in its own namespace", giveBlock: `{"any":[{"resources":{"kinds":["Namespace"],"namespaces":["team-*"]}}]}`, giveResource: nsReq(), wantMatch: true, wantExclude: true},
		{name: "a Namespace is not in other namespaces", giveBlock: `{"any":[{"resources":{"kinds":["Namespace"],"namespaces":["default"]}}]}`, giveResource: nsReq()},
		{name: "cluster-scoped resource and namespace star", giveBlock: `{"any":[{"resources":{"kinds":["Node"],"namespaces":["*"]}}]}`, giveResource: nodeReq(), wantMatch: true, wantExclude: true},
		{name: "cluster-scoped resource and a namespace", giveBlock: `{"any":[{"resources":{"kinds":["Node"],"namespaces":["default"]}}]}`, giveResource: nodeReq()},
		{name: "cluster-scoped resource and ?*", giveBlock: `{"any":[{"resources":{"kinds":["Node"],"namespaces":["?*"]}}]}`, giveResource: nodeReq()},

		// annotations
		{name: "annotation", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"annotations":{"imageregistry":"https://hub.docker.com/"}}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "annotation other value", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"annotations":{"imageregistry":"quay.io"}}}]}`, giveResource: podReq()},
		{name: "annotation absent", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"annotations":{"owner":"*"}}}]}`, giveResource: podReq()},
		{name: "annotation wildcard key", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"annotations":{"example.com/*":"true"}}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "annotation wildcard value", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"annotations":{"imageregistry":"https://*"}}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "annotation wildcard key and value from different entries", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"annotations":{"example.com/*":"https://*"}}}]}`, giveResource: podReq()},
		{name: "annotations all must match", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"annotations":{"imageregistry":"*","owner":"*"}}}]}`, giveResource: podReq()},

		// selector
		{name: "selector matchLabels", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"selector":{"matchLabels":{"app":"nginx"}}}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "selector matchLabels mismatch", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"selector":{"matchLabels":{"app":"redis"}}}}]}`, giveResource: podReq()},
		{name: "selector wildcard value", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"selector":{"matchLabels":{"app":"ng*"}}}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "selector wildcard key", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"selector":{"matchLabels":{"ti?r":"web"}}}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "selector matchExpressions", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"selector":{"matchExpressions":[{"key":"tier","operator":"In","values":["web","db"]}]}}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "selector matchExpressions mismatch", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"selector":{"matchExpressions":[{"key":"tier","operator":"NotIn","values":["web"]}]}}}]}`, giveResource: podReq()},
		{name: "unbuildable wildcard selector never matches", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"selector":{"matchLabels":{"app":"*"},"matchExpressions":[{"key":"tier","operator":"Gt","values":["1"]}]}}}]}`, giveResource: podReq()},

		// namespaceSelector
		{name: "namespaceSelector", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"namespaceSelector":{"matchLabels":{"env":"prod"}}}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "namespaceSelector mismatch", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"namespaceSelector":{"matchLabels":{"env":"dev"}}}}]}`, giveResource: podReq()},
		{name: "namespaceSelector expression", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"namespaceSelector":{"matchExpressions":[{"key":"env","operator":"NotIn","values":["platform","ci"]}]}}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "namespaceSelector reads namespace labels, not the object's", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"namespaceSelector":{"matchLabels":{"app":"nginx"}}}}]}`, giveResource: podReq()},
		{name: "namespaceSelector never selects a Namespace", giveBlock: `{"any":[{"resources":{"kinds":["Namespace"],"namespaceSelector":{"matchLabels":{"env":"prod"}}}}]}`, giveResource: with(nsReq(), func(r *Resource) { r.NamespaceLabels = map[string]string{"env": "prod"} })},
		{name: "empty namespaceSelector never selects a Namespace", giveBlock: `{"any":[{"resources":{"kinds":["Namespace"],"namespaceSelector":{}}}]}`, giveResource: nsReq()},
		{name: "namespaceSelector is skipped without a kind", giveBlock: `{"any":[{"resources":{"names":["nginx"],"namespaceSelector":{"matchLabels":{"env":"dev"}}}}]}`, giveResource: with(podReq(), func(r *Resource) { r.Kind = "" }), wantMatch: true, wantExclude: true},
		{name: "namespaceSelector is checked without a kind under kinds star", giveBlock: `{"any":[{"resources":{"kinds":["*"],"namespaceSelector":{"matchLabels":{"env":"dev"}}}}]}`, giveResource: with(podReq(), func(r *Resource) { r.Version, r.Kind = "", "" })},
		{name: "unbuildable namespaceSelector never matches", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"namespaceSelector":{"matchExpressions":[{"key":"env","operator":"in","values":["prod"]}]}}}]}`, giveResource: podReq()},

		// operations
		{name: "no operations selects every operation", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]}}]}`, giveResource: with(podReq(), func(r *Resource) { r.Operation = "DELETE" }), wantMatch: true, wantExclude: true},
		{name: "operation listed", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"operations":["CREATE","UPDATE"]}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "operation not listed", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"operations":["UPDATE"]}}]}`, giveResource: podReq()},
		{name: "operation CONNECT", giveBlock: `{"any":[{"resources":{"kinds":["Pod/exec"],"operations":["CONNECT"]}}]}`, giveResource: with(podSub("exec"), func(r *Resource) { r.Operation = "CONNECT" }), wantMatch: true, wantExclude: true},
		{name: "operations and an unknown operation", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"operations":["CREATE"]}}]}`, giveResource: with(podReq(), func(r *Resource) { r.Operation = "" })},

		// subjects, roles, clusterRoles
		{name: "subject user", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]},"subjects":[{"kind":"User","name":"alice"}]}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "subject user wildcard", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]},"subjects":[{"kind":"User","name":"ali*"}]}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "subject user mismatch", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]},"subjects":[{"kind":"User","name":"bob"}]}]}`, giveResource: podReq()},
		{name: "subjects are ORed", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]},"subjects":[{"kind":"User","name":"bob"},{"kind":"Group","name":"devs"}]}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "subject group", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]},"subjects":[{"kind":"Group","name":"system:authenticated"}]}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "subject group wildcard", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]},"subjects":[{"kind":"Group","name":"system:*"}]}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "subject group mismatch", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]},"subjects":[{"kind":"Group","name":"admins"}]}]}`, giveResource: podReq()},
		{name: "subject group is not the user name", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]},"subjects":[{"kind":"Group","name":"alice"}]}]}`, giveResource: podReq()},
		{name: "subject service account", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]},"subjects":[{"kind":"ServiceAccount","name":"builder","namespace":"ci"}]}]}`, giveResource: with(podReq(), func(r *Resource) { r.Username = "system:serviceaccount:ci:builder" }), wantMatch: true, wantExclude: true},
		{name: "subject service account wildcard name", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]},"subjects":[{"kind":"ServiceAccount","name":"*","namespace":"ci"}]}]}`, giveResource: with(podReq(), func(r *Resource) { r.Username = "system:serviceaccount:ci:builder" }), wantMatch: true, wantExclude: true},
		{name: "subject service account other namespace", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]},"subjects":[{"kind":"ServiceAccount","name":"builder","namespace":"ci"}]}]}`, giveResource: with(podReq(), func(r *Resource) { r.Username = "system:serviceaccount:dev:builder" })},
		{name: "role", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]},"roles":["default:editor"]}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "role mismatch", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]},"roles":["default:admin"]}]}`, giveResource: podReq()},
		{name: "roles have no wildcards", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]},"roles":["default:*"]}]}`, giveResource: podReq()},
		{name: "clusterRole", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]},"clusterRoles":["admin","view"]}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "clusterRole mismatch", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]},"clusterRoles":["cluster-admin"]}]}`, giveResource: podReq()},
		{name: "user filters are ANDed across types", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]},"clusterRoles":["view"],"subjects":[{"kind":"User","name":"bob"}]}]}`, giveResource: podReq()},
		{name: "user filter without resources", giveBlock: `{"any":[{"clusterRoles":["view"]}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},

		// requests without user info
		{name: "background skips user filters of match but not of exclude", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]},"subjects":[{"kind":"User","name":"alice"}]}]}`, giveResource: with(podReq(), func(r *Resource) { r.Background = true }), wantMatch: true},
		{name: "no user info skips user filters of match", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]},"roles":["default:admin"]}]}`, giveResource: with(podReq(), func(r *Resource) { r.Username, r.Groups, r.Roles, r.ClusterRoles = "", nil, nil, nil }), wantMatch: true},
		{name: "background user-only filter selects nothing in match", giveBlock: `{"any":[{"clusterRoles":["view"]}]}`, giveResource: with(podReq(), func(r *Resource) { r.Background = true })},
		{name: "background exclude sees an empty user name", giveBlock: `{"any":[{"subjects":[{"kind":"User","name":"*"}]}]}`, giveResource: with(podReq(), func(r *Resource) { r.Background = true }), wantExclude: true},
		{name: "background exclude sees no groups", giveBlock: `{"any":[{"subjects":[{"kind":"Group","name":"*"}]}]}`, giveResource: with(podReq(), func(r *Resource) { r.Background = true })},

		// empty filters
		{name: "empty legacy block", giveBlock: `{}`, giveResource: podReq()},
		{name: "empty any filter", giveBlock: `{"any":[{}]}`, giveResource: podReq()},
		{name: "empty resources", giveBlock: `{"any":[{"resources":{}}]}`, giveResource: podReq()},
		{name: "empty kinds list is no filter", giveBlock: `{"any":[{"resources":{"kinds":[]}}]}`, giveResource: podReq()},
		{name: "explicit empty roles count as user info", giveBlock: `{"roles":[]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "explicit empty roles without requester", giveBlock: `{"roles":[]}`, giveResource: with(podReq(), func(r *Resource) { r.Background = true }), wantExclude: true},

		// any, all and the legacy form
		{name: "any: one filter is enough", giveBlock: `{"any":[{"resources":{"kinds":["Deployment"]}},{"resources":{"kinds":["Pod"]}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "any: none", giveBlock: `{"any":[{"resources":{"kinds":["Deployment"]}},{"resources":{"kinds":["Service"]}}]}`, giveResource: podReq()},
		{name: "all: every filter", giveBlock: `{"all":[{"resources":{"kinds":["Pod"]}},{"resources":{"namespaces":["default"]}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "all: one fails", giveBlock: `{"all":[{"resources":{"kinds":["Pod"]}},{"resources":{"namespaces":["prod"]}}]}`, giveResource: podReq()},
		{name: "all: an empty filter fails", giveBlock: `{"all":[{"resources":{"kinds":["Pod"]}},{}]}`, giveResource: podReq()},
		{name: "conditions in a filter are ANDed", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"namespaces":["prod"]}}]}`, giveResource: podReq()},
		{name: "legacy resources", giveBlock: `{"resources":{"kinds":["Pod"],"namespaces":["default"]}}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "legacy user info", giveBlock: `{"resources":{"kinds":["Pod"]},"subjects":[{"kind":"User","name":"bob"}]}`, giveResource: podReq()},
		{name: "legacy user info alone", giveBlock: `{"clusterRoles":["view"]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "legacy user info is ignored next to any", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]}}],"subjects":[{"kind":"User","name":"bob"}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
		{name: "any wins over all", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]}}],"all":[{"resources":{"kinds":["Service"]}}]}`, giveResource: podReq(), wantMatch: true, wantExclude: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			block := decode[kyverno.MatchResources](t, tt.giveBlock)
			m, _ := Compile(block, "match") // some rows are blocks Compile rejects; the matcher still works
			if m == nil {
				t.Fatalf("Compile(%s) = nil", tt.giveBlock)
			}
			res := tt.giveResource
			if got := m.Matches(&res); got != tt.wantMatch {
				t.Errorf("Compile(%s).Matches(%+v) = %v, want %v", tt.giveBlock, res, got, tt.wantMatch)
			}
			if got := m.Excludes(&res); got != tt.wantExclude {
				t.Errorf("Compile(%s).Excludes(%+v) = %v, want %v", tt.giveBlock, res, got, tt.wantExclude)
			}
		})
	}
}

func TestMatcherNil(t *testing.T) {
	var m *Matcher
	r := podReq()
	if m.Matches(&r) || m.Excludes(&r) {
		t.Errorf("(*Matcher)(nil).Matches/Excludes = true, want false")
	}
	mt, err := Compile(decode[kyverno.MatchResources](t, `{"any":[{"resources":{"kinds":["*"]}}]}`), "match")
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	if mt.Matches(nil) || mt.Excludes(nil) {
		t.Errorf("Matches(nil)/Excludes(nil) = true, want false")
	}
}
