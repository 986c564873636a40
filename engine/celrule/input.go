package celrule

import (
	"github.com/verdict-policy/verdict/engine/internal/celtypes"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// Request describes the admission request as Kyverno gives it to CEL.
type Request struct {
	// Group, Version and Kind of the resource.
	Group, Version, Kind string
	// Resource is the plural resource name ("pods"); Kyverno's CLI leaves
	// it empty.
	Resource string
	// Name and Namespace of the object. Namespace is ignored for a
	// Namespace object, which has none in CEL.
	Name, Namespace string
	// Operation is CREATE, UPDATE, DELETE or CONNECT.
	Operation string
	// User is the requester.
	User UserInfo
}

// UserInfo is the requester (authentication/v1 UserInfo).
type UserInfo = celtypes.UserInfo

// Input is the data of one request, as CEL expressions see it. Build it
// once per request with NewInput and share it between rules: it is never
// modified.
type Input struct {
	object, oldObject map[string]any
	request           map[string]any
	namespace         map[string]any
	user              *user.DefaultInfo
	authz             authorizer.Authorizer
	resource          authzResource
}

// NewInput prepares the variables of a request: object and oldObject (nil
// when absent), request (the admission request, shaped as Kubernetes'
// AdmissionRequest with the fields Kyverno sets), and namespaceObject,
// built from namespace (the request's Namespace object, or nil: it is
// then {metadata: {name}} as in Kyverno's CLI; always null for
// cluster-scoped requests). authz answers authorizer checks; nil makes
// every check an error, as in Kyverno's CLI.
func NewInput(req Request, object, oldObject, namespace map[string]any, authz authorizer.Authorizer) *Input {
	in := newInput(req, object, oldObject, authz)
	if ns := in.resource.namespace; ns != "" {
		in.namespace = NamespaceObject(ns, namespace)
	}
	return in
}

func newInput(req Request, object, oldObject map[string]any, authz authorizer.Authorizer) *Input {
	ns := req.Namespace
	if req.Group == "" && req.Version == "v1" && req.Kind == "Namespace" {
		ns = ""
	}
	in := &Input{
		object:    object,
		oldObject: oldObject,
		request:   requestObject(req, ns),
		authz:     authz,
		user: &user.DefaultInfo{
			Name:   req.User.Username,
			UID:    req.User.UID,
			Groups: req.User.Groups,
			Extra:  req.User.Extra,
		},
		resource: authzResource{
			gvr:       schema.GroupVersionResource{Group: req.Group, Version: req.Version, Resource: req.Resource},
			name:      req.Name,
			namespace: ns,
		},
	}
	if in.authz == nil {
		in.authz = noAuthorizer{}
	}
	return in
}

// requestObject is the request as Kubernetes converts its AdmissionRequest
// to JSON for CEL (CreateAdmissionRequest, then ToUnstructured): omitted
// fields are absent, so has() tells them apart. Kyverno never sets the
// subresource and always a false dryRun.
func requestObject(req Request, ns string) map[string]any {
	out := celtypes.RequestObject(
		map[string]any{"group": req.Group, "version": req.Version, "kind": req.Kind},
		map[string]any{"group": req.Group, "version": req.Version, "resource": req.Resource},
		req.Operation, req.User, false)
	out["name"] = req.Name
	if ns != "" {
		out["namespace"] = ns
	}
	return out
}

// NamespaceObject is namespaceObject for the namespace name: the fields of
// ns (a Namespace object) that Kubernetes keeps (CreateNamespaceObject),
// or, when ns is nil, a Namespace with only its name, as Kyverno builds it
// outside a cluster.
func NamespaceObject(name string, ns map[string]any) map[string]any {
	if ns == nil {
		return map[string]any{
			"metadata": map[string]any{"name": name, "creationTimestamp": nil},
			"spec":     map[string]any{},
			"status":   map[string]any{},
		}
	}
	out := map[string]any{"spec": map[string]any{}, "status": map[string]any{}}
	if s, ok := ns["spec"].(map[string]any); ok {
		out["spec"] = s
	}
	if s, ok := ns["status"].(map[string]any); ok {
		out["status"] = s
	}
	meta := map[string]any{"creationTimestamp": nil}
	if m, ok := ns["metadata"].(map[string]any); ok {
		for _, k := range []string{"name", "generateName", "namespace", "uid", "resourceVersion", "generation",
			"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "finalizers"} {
			if v, ok := m[k]; ok {
				meta[k] = v
			}
		}
	}
	if _, ok := meta["name"]; !ok {
		meta["name"] = name
	}
	out["metadata"] = meta
	return out
}
