package vap

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/verdict-policy/verdict/engine/celrule"
	"github.com/verdict-policy/verdict/engine/internal/celtypes"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// Request is the resource a policy is evaluated on, as the host describes
// it. Kyverno evaluates ValidatingAdmissionPolicies on a resource as it
// stands, as a CREATE without old object, whatever the operation that
// brought it (pkg/admissionpolicy.Validate).
type Request struct {
	// Group, Version and Kind of the resource. Empty: from Object's
	// apiVersion and kind.
	Group, Version, Kind string
	// Resource is the plural resource name ("deployments"). Empty: guessed
	// from the kind, as Kyverno's CLI maps kinds without a cluster.
	Resource string
	// Name and Namespace of the resource. Empty: from Object's metadata.
	Name, Namespace string
	// UserInfo is the requester. Kyverno fills an empty username, uid and
	// groups with "system:kyverno:background-scan" (ResolveUser), and so
	// does NewInput.
	UserInfo UserInfo
	// Object is the resource.
	Object map[string]any
	// NamespaceObject is the resource's Namespace as the host knows it
	// (a cluster's); nil: namespaceObject is a Namespace with the name and
	// NamespaceLabels only, as Kyverno builds it without a client.
	NamespaceObject map[string]any
	// NamespaceLabels are the labels of the resource's namespace, for the
	// namespace selectors (nil: those of NamespaceObject, else none).
	NamespaceLabels map[string]string
}

// UserInfo is the authenticated user of a request (authentication/v1).
type UserInfo = celtypes.UserInfo

// BackgroundUser is the identity Kyverno gives CEL for an empty username,
// uid or groups (pkg/admissionpolicy.ResolveUser), so that
// request.userInfo holds them in background scans.
const BackgroundUser = "system:kyverno:background-scan"

// Input is a Request prepared for evaluation with Options: built once per
// request by NewInput and shared by the policies evaluated on it. It is
// never modified.
type Input struct {
	opts  Options
	match *vpol.Input
	cel   *celrule.Input
	// namespace is the namespace Kyverno gives params lookups: the
	// resource's, none for a Namespace.
	namespace string
}

// NewInput prepares r for evaluations with opts. Outside Kyverno's CLI,
// the whole numbers of the object are ints, as the API server gives them
// (vpol.Normalize); Kyverno's CLI gives CEL the numbers of its resource
// files as doubles, and so does NewInput with opts.CLI when the host's
// numbers are float64.
func NewInput(r Request, opts Options) *Input {
	object := r.Object
	if !opts.CLI {
		object, _ = vpol.Normalize(object).(map[string]any)
	}
	group, version, kind, resource := r.Group, r.Version, r.Kind, r.Resource
	if kind == "" {
		group, version, kind = kyverno.ObjectGVK(object)
	}
	if resource == "" && kind != "" {
		gvr, _ := meta.UnsafeGuessKindToResource(schema.GroupVersionKind{Group: group, Version: version, Kind: kind})
		resource = gvr.Resource
	}
	md, _ := object["metadata"].(map[string]any)
	name, namespace := r.Name, r.Namespace
	if name == "" {
		name, _ = md["name"].(string)
	}
	if namespace == "" {
		namespace, _ = md["namespace"].(string)
	}
	labels := r.NamespaceLabels
	if labels == nil && r.NamespaceObject != nil {
		labels = kyverno.MetadataStrings(r.NamespaceObject, "labels")
	}
	if labels == nil {
		labels = map[string]string{}
	}
	mr := vpol.NewInput(vpol.Request{
		Group: group, Version: version, Kind: kind, Resource: resource,
		Name: name, Namespace: namespace,
		Operation:       "CREATE",
		Object:          object,
		NamespaceLabels: labels,
	})

	user := r.UserInfo
	if user.Username == "" {
		user.Username = BackgroundUser
	}
	if user.UID == "" {
		user.UID = BackgroundUser
	}
	if len(user.Groups) == 0 {
		user.Groups = []string{BackgroundUser}
	}
	nsName := namespace
	if group == "" && version == "v1" && kind == "Namespace" {
		nsName = ""
	}
	var nsObject map[string]any
	switch {
	case nsName == "":
		nsObject = namespaceObject("", nil)
	case r.NamespaceObject != nil:
		nsObject = celrule.NamespaceObject(nsName, r.NamespaceObject)
	default:
		nsObject = namespaceObject(nsName, labels)
	}
	cr := celrule.Request{
		Group: group, Version: version, Kind: kind, Resource: resource,
		Name: name, Namespace: namespace,
		Operation: "CREATE",
		User:      user,
	}
	return &Input{
		opts:      opts,
		match:     mr,
		cel:       celrule.NewAdmissionInput(cr, object, nsObject),
		namespace: nsName,
	}
}

// namespaceObject is the Namespace Kyverno builds without a client, as
// Kubernetes gives it to CEL (CreateNamespaceObject, then the unstructured
// converter): the name and labels only; for a cluster-scoped resource, an
// empty Namespace (not null).
func namespaceObject(name string, labels map[string]string) map[string]any {
	meta := map[string]any{"creationTimestamp": nil}
	if name != "" {
		meta["name"] = name
	}
	if len(labels) > 0 {
		l := make(map[string]any, len(labels))
		for k, v := range labels {
			l[k] = v
		}
		meta["labels"] = l
	}
	return map[string]any{"metadata": meta, "spec": map[string]any{}, "status": map[string]any{}}
}
