package webhookproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/grpc"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// Decider decides one request. client.Client satisfies it.
type Decider interface {
	Evaluate(ctx context.Context, req *verdictv1.EvaluateRequest, opts ...grpc.CallOption) (*verdictv1.EvaluateResponse, error)
}

// NamespaceLabels returns the labels of a namespace, for namespaceSelector.
// An error means the labels are not known (a cache not yet synced, a
// namespace that does not exist): the request then fails as a Decider
// failure does.
type NamespaceLabels interface {
	NamespaceLabels(ctx context.Context, name string) (map[string]string, error)
}

// MapNamespaceLabels is a static NamespaceLabels: the labels of each
// namespace by name. A namespace that is not in the map has no labels. For
// tests and local use; in a cluster, use an informer-backed implementation.
type MapNamespaceLabels map[string]map[string]string

// NamespaceLabels implements NamespaceLabels.
func (m MapNamespaceLabels) NamespaceLabels(_ context.Context, name string) (map[string]string, error) {
	return m[name], nil
}

var operations = map[admissionv1.Operation]verdictv1.Operation{
	admissionv1.Create:  verdictv1.Operation_OPERATION_CREATE,
	admissionv1.Update:  verdictv1.Operation_OPERATION_UPDATE,
	admissionv1.Delete:  verdictv1.Operation_OPERATION_DELETE,
	admissionv1.Connect: verdictv1.Operation_OPERATION_CONNECT,
}

// parentKinds are the kinds of the built-in resources that have
// subresources, by group and resource: a subresource request is evaluated
// as Kind/subresource of its parent (Pod/exec, Deployment/scale), as
// Kyverno does through discovery, although the object of pods/exec is a
// PodExecOptions.
var parentKinds = map[[2]string]string{
	{"", "pods"}:                   "Pod",
	{"", "nodes"}:                  "Node",
	{"", "services"}:               "Service",
	{"", "namespaces"}:             "Namespace",
	{"", "replicationcontrollers"}: "ReplicationController",
	{"", "persistentvolumes"}:      "PersistentVolume",
	{"", "persistentvolumeclaims"}: "PersistentVolumeClaim",
	{"", "serviceaccounts"}:        "ServiceAccount",
	{"apps", "deployments"}:        "Deployment",
	{"apps", "replicasets"}:        "ReplicaSet",
	{"apps", "statefulsets"}:       "StatefulSet",
	{"apps", "daemonsets"}:         "DaemonSet",
	{"batch", "jobs"}:              "Job",
	{"batch", "cronjobs"}:          "CronJob",
}

// RequestFromAdmission builds the EvaluateRequest of an admission request.
// labels are the labels of the request's namespace. A request the decision
// service cannot take (no uid, an unknown operation, an object that is not
// a JSON object) is an error naming the field.
func RequestFromAdmission(ar *admissionv1.AdmissionRequest, labels map[string]string) (*verdictv1.EvaluateRequest, error) {
	if ar == nil {
		return nil, errors.New("request: missing")
	}
	if ar.UID == "" {
		return nil, errors.New("request.uid: missing")
	}
	op, ok := operations[ar.Operation]
	if !ok {
		return nil, fmt.Errorf("request.operation: unknown operation %q", ar.Operation)
	}
	req := &verdictv1.EvaluateRequest{
		Operation:       op,
		Namespace:       ar.Namespace,
		NamespaceLabels: labels,
		Subresource:     ar.SubResource,
		Mode:            verdictv1.Mode_MODE_ADMISSION,
	}
	var err error
	if req.Object, err = rawObject("request.object", ar.Object.Raw); err != nil {
		return nil, err
	}
	if req.OldObject, err = rawObject("request.oldObject", ar.OldObject.Raw); err != nil {
		return nil, err
	}
	switch {
	case req.Object != nil:
	case op == verdictv1.Operation_OPERATION_DELETE && req.OldObject != nil:
		// DELETE: the resource is the old object.
	case op == verdictv1.Operation_OPERATION_DELETE:
		return nil, errors.New("request.oldObject: missing for DELETE")
	default:
		return nil, errors.New("request.object: missing")
	}
	if ar.DryRun != nil {
		req.DryRun = *ar.DryRun
	}
	if k := ar.Kind; k.Kind != "" {
		req.Kind = &verdictv1.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}
		if ar.SubResource != "" {
			if parent, ok := parentKinds[[2]string{ar.Resource.Group, ar.Resource.Resource}]; ok {
				req.Kind = &verdictv1.GroupVersionKind{Group: ar.Resource.Group, Version: ar.Resource.Version, Kind: parent}
			}
		}
	}
	if r := ar.Resource; r.Resource != "" && r.Version != "" {
		req.Resource = &verdictv1.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
	}
	u := ar.UserInfo
	if u.Username != "" || u.UID != "" || len(u.Groups) > 0 || len(u.Extra) > 0 {
		req.UserInfo = &verdictv1.UserInfo{Username: u.Username, Uid: u.UID, Groups: u.Groups}
		if len(u.Extra) > 0 {
			req.UserInfo.Extra = make(map[string]*verdictv1.ExtraValue, len(u.Extra))
			for k, v := range u.Extra {
				req.UserInfo.Extra[k] = &verdictv1.ExtraValue{Values: v}
			}
		}
	}
	return req, nil
}

// rawObject returns raw when it is a JSON object, nil when it is empty or
// null.
func rawObject(field string, raw []byte) ([]byte, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	if t[0] != '{' {
		return nil, fmt.Errorf("%s: not a JSON object", field)
	}
	return raw, nil
}

// Endpoint is the kind of webhook a review arrived at.
type Endpoint string

// The endpoints.
const (
	Validate Endpoint = "validate"
	Mutate   Endpoint = "mutate"
)

// ResponseFromDecision builds the AdmissionResponse to request uid from
// the decision of the server:
//
//   - Validate: allowed as decided; when denied, status code 403 with the
//     server's message; the server's warnings;
//   - Mutate: allowed; the server's JSON patch (patchType JSONPatch), unless
//     the operation is DELETE or the patch is empty.
func ResponseFromDecision(ep Endpoint, ar *admissionv1.AdmissionRequest, resp *verdictv1.EvaluateResponse) *admissionv1.AdmissionResponse {
	out := &admissionv1.AdmissionResponse{UID: ar.UID, Allowed: true}
	switch ep {
	case Validate:
		out.Warnings = resp.GetWarnings()
		if !resp.GetAllowed() {
			out.Allowed = false
			out.Result = &metav1.Status{
				Status:  metav1.StatusFailure,
				Code:    http.StatusForbidden,
				Reason:  metav1.StatusReasonForbidden,
				Message: resp.GetMessage(),
			}
		}
	case Mutate:
		if p := resp.GetJsonPatch(); len(p) > 0 && ar.Operation != admissionv1.Delete && !emptyPatch(p) {
			pt := admissionv1.PatchTypeJSONPatch
			out.Patch, out.PatchType = p, &pt
		}
	}
	return out
}

// emptyPatch reports whether p is the JSON patch "[]".
func emptyPatch(p []byte) bool {
	var ops []json.RawMessage
	return json.Unmarshal(p, &ops) == nil && len(ops) == 0
}

// failureResponse is the answer when no decision could be made: allowed
// with a warning when failOpen, denied with status 500 otherwise; the
// message names the cause either way.
func failureResponse(ar *admissionv1.AdmissionRequest, failOpen bool, cause error) *admissionv1.AdmissionResponse {
	out := &admissionv1.AdmissionResponse{UID: ar.UID}
	if failOpen {
		out.Allowed = true
		out.Warnings = []string{"verdict: no policy decision, request allowed (fail open): " + cause.Error()}
		return out
	}
	out.Result = &metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusInternalServerError,
		Reason:  metav1.StatusReasonInternalError,
		Message: "verdict: no policy decision, request denied (fail closed): " + cause.Error(),
	}
	return out
}
