package podsecurity

import (
	"errors"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/verdict-policy/verdict/engine/internal/jsonconv"
)

// ErrNotAPod is returned by PodOf for a resource that is neither a Pod
// nor a pod controller; Kyverno's message for it.
var ErrNotAPod = errors.New("could not find correct resource type")

// PodOf extracts the pod that podSecurity checks from a resource, as
// Kyverno's getSpec does: a Pod itself; the pod template (spec and
// metadata) of a DaemonSet, Deployment, Job, StatefulSet, ReplicaSet or
// ReplicationController; for a CronJob the job template's pod spec with
// the job template's metadata. The resource is decoded through JSON into
// the Kubernetes types with encoding/json's rules (jsonconv.DecodePod for
// a Pod, jsonconv.Decode otherwise), so a field of the wrong type is an
// error.
func PodOf(obj map[string]any) (*corev1.Pod, error) {
	kind, _ := obj["kind"].(string)
	switch kind {
	case "Pod", "DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet", "ReplicationController", "CronJob":
	default:
		return nil, ErrNotAPod
	}
	switch kind {
	case "Pod":
		pod, err := jsonconv.DecodePod(obj)
		if err != nil {
			return nil, err
		}
		// The decoded Pod is this call's: keep only its metadata and
		// spec.
		pod.TypeMeta = metav1.TypeMeta{}
		pod.Status = corev1.PodStatus{}
		return pod, nil
	case "CronJob":
		cj, err := jsonconv.Decode[batchv1.CronJob](obj)
		if err != nil {
			return nil, err
		}
		return &corev1.Pod{ObjectMeta: cj.Spec.JobTemplate.ObjectMeta, Spec: cj.Spec.JobTemplate.Spec.Template.Spec}, nil
	default:
		// Kyverno reads every controller as a Deployment.
		d, err := jsonconv.Decode[appsv1.Deployment](obj)
		if err != nil {
			return nil, err
		}
		return &corev1.Pod{ObjectMeta: d.Spec.Template.ObjectMeta, Spec: d.Spec.Template.Spec}, nil
	}
}
