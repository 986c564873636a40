package vpol

import (
	"context"
	"math"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/verdict-policy/verdict/engine/internal/celtypes"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
)

// Request is one admission request (or one stored resource of a
// background scan), as the host describes it.
type Request struct {
	// Group, Version and Kind of the resource. Empty: from Object (or
	// OldObject)'s apiVersion and kind.
	Group, Version, Kind string
	// Resource is the plural resource name ("pods"). Empty: guessed from
	// the kind, as Kyverno's CLI maps kinds without a cluster.
	Resource string
	// ResourceGroup and ResourceVersion are the group and version of
	// Resource, when they differ from the kind's (deployments/scale is an
	// autoscaling/v1 Scale). Empty: the kind's. Only read with Resource.
	ResourceGroup, ResourceVersion string
	// Subresource of the request ("status"), "" for the resource itself.
	Subresource string
	// Name and Namespace of the request. Empty: from the object's
	// metadata.
	Name, Namespace string
	// Operation is CREATE, UPDATE, DELETE or CONNECT (default CREATE).
	Operation string
	// UserInfo is the requester.
	UserInfo UserInfo
	// DryRun is the request's dryRun flag.
	DryRun bool
	// Object and OldObject are the object and its previous state (nil when
	// absent: OldObject on CREATE, Object on DELETE).
	Object, OldObject map[string]any
	// NamespaceObject is the Namespace of the request's namespace, as the
	// host knows it; nil: namespaceObject is null, as in Kyverno when the
	// namespace cannot be resolved.
	NamespaceObject map[string]any
	// NamespaceLabels are the labels of the request's namespace, for
	// namespaceSelector, when NamespaceObject is nil. nil: the labels
	// Kubernetes gives every namespace ({kubernetes.io/metadata.name:
	// <name>}), as Kyverno's CLI does.
	NamespaceLabels map[string]string
	// Sources are the data sources of the CEL libraries.
	Sources kyvernocel.Sources
	// ApplyTypes gives the structured-merge-diff type of an object's kind
	// to the ApplyConfigurations of MutatingPolicies (mpol.Schemas: the
	// custom resources of CRDs). nil: the built-in kinds only.
	ApplyTypes ApplyTypes
	// Now is the clock of time.now() and of exceptions' expiresAt
	// (default: time.Now at NewInput).
	Now time.Time
}

// ApplyTypes gives the structured-merge-diff type of an object's kind.
type ApplyTypes interface {
	TypeOf(obj map[string]any) (*typed.ParseableType, error)
}

// ApplyTypes returns the request's ApplyTypes (nil: built-in kinds only).
func (in *Input) ApplyTypes() ApplyTypes { return in.req.ApplyTypes }

// UserInfo is the authenticated user of a request (authentication/v1).
type UserInfo = celtypes.UserInfo

// Input is a Request prepared for evaluation: built once per request by
// NewInput and shared by the policies evaluated on it, by one goroutine at
// a time.
type Input struct {
	req Request

	group, version, kind           string
	resGroup, resVersion, resource string
	name, namespace, generateName  string
	operation                      string
	objectLabels, oldObjectLabels  map[string]string
	// namespaceLabels are made by nsLabels, on first use.
	namespaceLabels     map[string]string
	namespaceLabelsMade bool

	// The values of the CEL variables.
	object, oldObject, namespaceObject any
	// json is the object of JSON-mode policies.
	json any

	// request is `request`, built when an expression first reads it
	// (requestValue, which requestFunc is bound to).
	request      any
	requestBuilt bool
	requestFunc  func() any

	// libs are the CEL libraries read with libsCtx, made by the first
	// Evaluate (an Input is used by one goroutine at a time).
	libs    *kyvernocel.Libraries
	libsCtx context.Context

	// run is the state of the variant being evaluated, reused by the next
	// one (newRun).
	run run
}

// libraries returns the libraries of the request, read with ctx.
func (in *Input) libraries(ctx context.Context) *kyvernocel.Libraries {
	if in.libs == nil || in.libsCtx != ctx {
		in.libs, in.libsCtx = kyvernocel.NewLibraries(ctx, in.req.Sources), ctx
	}
	return in.libs
}

// NewInput prepares r.
func NewInput(r Request) *Input {
	in := &Input{req: r}
	if in.req.Now.IsZero() {
		in.req.Now = time.Now()
	}
	subject := r.Object
	if subject == nil {
		subject = r.OldObject
	}
	in.group, in.version, in.kind = r.Group, r.Version, r.Kind
	if in.kind == "" {
		in.group, in.version, in.kind = kyverno.ObjectGVK(subject)
	}
	in.resGroup, in.resVersion, in.resource = in.group, in.version, r.Resource
	if in.resource != "" && r.ResourceVersion != "" {
		in.resGroup, in.resVersion = r.ResourceGroup, r.ResourceVersion
	}
	if in.resource == "" && in.kind != "" {
		gvr, _ := meta.UnsafeGuessKindToResource(schema.GroupVersionKind{Group: in.group, Version: in.version, Kind: in.kind})
		in.resource = gvr.Resource
	}
	md, _ := subject["metadata"].(map[string]any)
	in.name, in.namespace = r.Name, r.Namespace
	if in.name == "" {
		in.name, _ = md["name"].(string)
	}
	if in.namespace == "" {
		in.namespace, _ = md["namespace"].(string)
	}
	objMeta, _ := r.Object["metadata"].(map[string]any)
	in.generateName, _ = objMeta["generateName"].(string)
	in.objectLabels = kyverno.MetadataStrings(r.Object, "labels")
	in.oldObjectLabels = kyverno.MetadataStrings(r.OldObject, "labels")
	in.operation = strings.ToUpper(r.Operation)
	if in.operation == "" {
		in.operation = "CREATE"
	}

	// Kyverno gives CEL the objects of the admission attributes as they
	// are (an absent one is an empty object, not null); the request is
	// built when an expression reads it (requestValue).
	in.object, in.oldObject = emptyObject, emptyObject
	if r.Object != nil {
		in.object = r.Object
		in.json = r.Object
	}
	if r.OldObject != nil {
		in.oldObject = r.OldObject
	}
	if r.NamespaceObject != nil {
		in.namespaceObject = r.NamespaceObject
	}
	in.requestFunc = in.requestValue
	return in
}

// nsLabels returns the labels of the request's namespace, for
// namespaceSelector: those of NamespaceObject, or NamespaceLabels, or the
// label Kubernetes gives every namespace.
func (in *Input) nsLabels() map[string]string {
	if in.namespaceLabelsMade {
		return in.namespaceLabels
	}
	switch {
	case in.req.NamespaceObject != nil:
		in.namespaceLabels = kyverno.MetadataStrings(in.req.NamespaceObject, "labels")
	case in.req.NamespaceLabels != nil:
		in.namespaceLabels = in.req.NamespaceLabels
	default:
		in.namespaceLabels = map[string]string{"kubernetes.io/metadata.name": in.namespace}
	}
	in.namespaceLabelsMade = true
	return in.namespaceLabels
}

// emptyObject is object or oldObject when the request has none: an empty
// object, which expressions only read.
var emptyObject any = map[string]any{}

// requestValue is `request`, built on first use: Kyverno gives CEL the
// request as JSON, so request.object and request.oldObject are the
// objects with their numbers as JSON decoding gives them (whole numbers
// are int64, Normalize), null when absent. Building it on first use gives
// the same values: the request depends only on the Input, which does not
// change.
func (in *Input) requestValue() any {
	if in.requestBuilt {
		return in.request
	}
	var object, oldObject any
	if in.req.Object != nil {
		object = Normalize(in.req.Object)
	}
	if in.req.OldObject != nil {
		oldObject = Normalize(in.req.OldObject)
	}
	in.request, in.requestBuilt = in.requestObject(object, oldObject), true
	return in.request
}

// requestObject is the admission request as Kyverno converts it to JSON
// for CEL (an admission/v1 AdmissionRequest through the unstructured
// converter): omitted fields are absent, so has() tells them apart.
func (in *Input) requestObject(object, oldObject any) map[string]any {
	r := in.req
	out := celtypes.RequestObject(
		map[string]any{"group": in.group, "version": in.version, "kind": in.kind},
		map[string]any{"group": in.resGroup, "version": in.resVersion, "resource": in.resource},
		in.operation, r.UserInfo, r.DryRun)
	out["object"] = object
	out["oldObject"] = oldObject
	if r.Subresource != "" {
		out["subResource"] = r.Subresource
		out["requestSubResource"] = r.Subresource
	}
	if in.name != "" {
		out["name"] = in.name
	}
	if in.namespace != "" {
		out["namespace"] = in.namespace
	}
	return out
}

// Normalize returns v with its numbers as Kubernetes decodes JSON: a whole
// number that fits an int64 is an int64, others are float64 (the engine's
// JSON values may hold whole numbers as float64). Maps and lists that hold
// no number to change are returned as they are; the others are copied, so
// v is never modified.
func Normalize(v any) any {
	out, _ := normalize(v)
	return out
}

// normalize returns v normalized, and whether it differs from v.
func normalize(v any) (any, bool) {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && x >= -(1<<63) && x < 1<<63 {
			return int64(x), true
		}
		return x, false
	case int:
		return int64(x), true
	case map[string]any:
		var cp map[string]any
		for k, e := range x {
			n, changed := normalize(e)
			if !changed {
				continue
			}
			if cp == nil {
				cp = make(map[string]any, len(x))
				for k2, e2 := range x {
					cp[k2] = e2
				}
			}
			cp[k] = n
		}
		if cp == nil {
			return x, false
		}
		return cp, true
	case []any:
		var cp []any
		for i, e := range x {
			n, changed := normalize(e)
			if !changed {
				continue
			}
			if cp == nil {
				cp = make([]any, len(x))
				copy(cp, x)
			}
			cp[i] = n
		}
		if cp == nil {
			return x, false
		}
		return cp, true
	}
	return v, false
}

// Activation returns an activation of the request's variables (object,
// oldObject, request, namespaceObject) whose libraries read the request's
// sources with ctx and whose time.now() is the request's clock, for the
// other kinds of the group (engine/mpol).
func (in *Input) Activation(ctx context.Context) *kyvernocel.Activation {
	act := in.libraries(ctx).NewActivation(in.req.Now)
	act.Object, act.OldObject, act.NamespaceObject = in.object, in.oldObject, in.namespaceObject
	act.RequestFunc = in.requestFunc // built on first read, from the request's objects
	return act
}

// WithObject returns a copy of the input whose object is obj (its labels
// too, for objectSelector), request unchanged: the request as Kyverno's
// mutating policies see it after a mutation, whose request.object is
// still the object admitted.
func (in *Input) WithObject(obj map[string]any) *Input {
	cp := *in
	cp.object = obj
	cp.objectLabels = kyverno.MetadataStrings(obj, "labels")
	return &cp
}

// Now is the request's clock.
func (in *Input) Now() time.Time { return in.req.Now }

// JSON is the payload of a JSON-mode policy: the request's object.
func (in *Input) JSON() any { return in.json }

// Resource is the group, version and plural resource of the request.
func (in *Input) Resource() (group, version, resource string) {
	return in.resGroup, in.resVersion, in.resource
}
