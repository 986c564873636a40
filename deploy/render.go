package deploy

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

//go:embed base components crds overlays scan-job
var manifests embed.FS

// Kustomizations are the kustomizations a user installs, as paths relative
// to deploy/: the base alone (with a TLS Secret created by hand), the two
// overlays, and the one-off scan Job.
var Kustomizations = []string{"base", "overlays/dev", "overlays/ha", "overlays/cleanup", "scan-job"}

// ComponentLabel is the label that names the Verdict component of an object
// (server, webhook, reports, scanner).
const ComponentLabel = "app.kubernetes.io/component"

// Render builds the kustomization at dir (relative to deploy/, such as
// "overlays/ha") from the embedded manifests, as kustomize build does, and
// returns its objects in kustomize's output order.
func Render(dir string) ([]*unstructured.Unstructured, error) {
	mem := filesys.MakeFsInMemory()
	err := fs.WalkDir(manifests, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := manifests.ReadFile(p)
		if err != nil {
			return err
		}
		return mem.WriteFile(path.Join("/deploy", p), b)
	})
	if err != nil {
		return nil, fmt.Errorf("load manifests: %w", err)
	}
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(mem, path.Join("/deploy", dir))
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range rm.Resources() {
		m, err := r.Map()
		if err != nil {
			return nil, fmt.Errorf("kustomize build %s: %s: %w", dir, r.CurId(), err)
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs, nil
}

// YAML joins objects into one multi-document YAML stream, as kubectl
// apply -f takes it.
func YAML(objs []*unstructured.Unstructured) ([]byte, error) {
	var b strings.Builder
	for i, o := range objs {
		y, err := toYAML(o.Object)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(y)
	}
	return []byte(b.String()), nil
}

// Workload is one container of a rendered Deployment, StatefulSet, CronJob
// or Job.
type Workload struct {
	Kind, Name string // of the object
	Component  string // its app.kubernetes.io/component label
	Pod        corev1.PodSpec
	Container  corev1.Container
	// Indexed is set for the pods of an Indexed Job (also in a CronJob),
	// with the Job's completions and parallelism.
	Indexed                  bool
	Completions, Parallelism int32
	// VolumeClaims are the names of a StatefulSet's volumeClaimTemplates,
	// which its controller adds to each pod as volumes.
	VolumeClaims []string
}

// Workloads returns every container of the Deployments, StatefulSets,
// CronJobs and Jobs of objs, in order.
func Workloads(objs []*unstructured.Unstructured) ([]Workload, error) {
	var out []Workload
	for _, o := range objs {
		w := Workload{Kind: o.GetKind(), Name: o.GetName(), Component: o.GetLabels()[ComponentLabel]}
		var job *batchv1.JobSpec
		switch o.GetKind() {
		case "Deployment":
			var d appsv1.Deployment
			if err := fromUnstructured(o, &d); err != nil {
				return nil, err
			}
			w.Pod = d.Spec.Template.Spec
		case "StatefulSet":
			var s appsv1.StatefulSet
			if err := fromUnstructured(o, &s); err != nil {
				return nil, err
			}
			w.Pod = s.Spec.Template.Spec
			for _, c := range s.Spec.VolumeClaimTemplates {
				w.VolumeClaims = append(w.VolumeClaims, c.Name)
			}
		case "CronJob":
			var c batchv1.CronJob
			if err := fromUnstructured(o, &c); err != nil {
				return nil, err
			}
			job = &c.Spec.JobTemplate.Spec
		case "Job":
			var j batchv1.Job
			if err := fromUnstructured(o, &j); err != nil {
				return nil, err
			}
			job = &j.Spec
		default:
			continue
		}
		if job != nil {
			w.Pod = job.Template.Spec
			w.Indexed = job.CompletionMode != nil && *job.CompletionMode == batchv1.IndexedCompletion
			if job.Completions != nil {
				w.Completions = *job.Completions
			}
			if job.Parallelism != nil {
				w.Parallelism = *job.Parallelism
			}
		}
		for _, c := range w.Pod.Containers {
			w.Container = c
			out = append(out, w)
		}
	}
	return out, nil
}

// Args returns the arguments of the container of component (server,
// webhook, reports, scanner) in the kustomization at dir, with $(VAR)
// references replaced from env (such as JOB_COMPLETION_INDEX); a
// reference to a variable that env does not have is an error. It is the
// hook for tests that start Verdict's processes with the manifests' flags.
func Args(dir, component string, env map[string]string) ([]string, error) {
	objs, err := Render(dir)
	if err != nil {
		return nil, err
	}
	args, err := ComponentArgs(objs, component, env)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return args, nil
}

// ComponentArgs is Args for rendered objects, such as a Helm chart's: the
// arguments of the one container of component in objs, $(VAR) references
// replaced from env.
func ComponentArgs(objs []*unstructured.Unstructured, component string, env map[string]string) ([]string, error) {
	ws, err := Workloads(objs)
	if err != nil {
		return nil, err
	}
	var matches []Workload
	for _, w := range ws {
		if w.Component == component {
			matches = append(matches, w)
		}
	}
	switch len(matches) {
	case 0:
		return nil, fmt.Errorf("no container with %s=%s", ComponentLabel, component)
	case 1:
	default:
		return nil, fmt.Errorf("%d containers with %s=%s", len(matches), ComponentLabel, component)
	}
	w := matches[0]
	args := make([]string, len(w.Container.Args))
	for i, a := range w.Container.Args {
		if args[i], err = Expand(a, env); err != nil {
			return nil, fmt.Errorf("%s %s: %w", w.Kind, w.Name, err)
		}
	}
	return args, nil
}

// Expand replaces the $(VAR) references of s with the values of env, as
// the kubelet expands a container's args; $$ is a literal $.
func Expand(s string, env map[string]string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "$$"):
			b.WriteByte('$')
			i++
		case strings.HasPrefix(s[i:], "$("):
			end := strings.IndexByte(s[i:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String(), nil
			}
			name := s[i+2 : i+end]
			v, ok := env[name]
			if !ok {
				return "", fmt.Errorf("arg %q: no value for $(%s)", s, name)
			}
			b.WriteString(v)
			i += end
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// References returns the variable names of the $(VAR) references of s,
// sorted.
func References(s string) []string {
	var names []string
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "$$"):
			i++
		case strings.HasPrefix(s[i:], "$("):
			end := strings.IndexByte(s[i:], ')')
			if end < 0 {
				return names
			}
			names = append(names, s[i+2:i+end])
			i += end
		}
	}
	sort.Strings(names)
	return names
}

func toYAML(obj map[string]any) ([]byte, error) { return yaml.Marshal(obj) }

func fromUnstructured(o *unstructured.Unstructured, into any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into); err != nil {
		return fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
	}
	return nil
}

// LocalArgs adapts the args of a manifest's container to a process started
// outside the cluster, such as by an end-to-end test: --in-cluster becomes
// --kubeconfig=kubeconfig (dropped when kubeconfig is empty), and each
// --name=value flag named in set takes the value of set (such as
// "listen": "127.0.0.1:0"; a flag the args do not have is appended). The
// other flags stay as the manifest has them.
func LocalArgs(args []string, kubeconfig string, set map[string]string) []string {
	out := make([]string, 0, len(args)+len(set))
	seen := map[string]bool{}
	for _, a := range args {
		if a == "--in-cluster" {
			if kubeconfig != "" {
				out = append(out, "--kubeconfig="+kubeconfig)
			}
			continue
		}
		if name, _, ok := strings.Cut(strings.TrimPrefix(a, "--"), "="); ok && strings.HasPrefix(a, "--") {
			if v, ok := set[name]; ok {
				out = append(out, "--"+name+"="+v)
				seen[name] = true
				continue
			}
		}
		out = append(out, a)
	}
	names := make([]string, 0, len(set))
	for name := range set {
		if !seen[name] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		out = append(out, "--"+name+"="+set[name])
	}
	return out
}
