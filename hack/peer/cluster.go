package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/verdict-policy/verdict/internal/testing/e2e"
)

// runner stands in for the testing.TB that e2e.Start expects: a fatal
// error runs the cleanups (which stop etcd, the apiserver and every
// process the harness started) and exits.
type runner struct {
	testing.TB // nil: only the methods below are called
	dir        string
	mu         sync.Mutex
	cleanups   []func()
	failed     bool
	exit       sync.Once
	parent     *runner // of a child: a fatal error ends the parent
}

// child returns a runner whose cleanups run at its close (a cluster
// stopped before the next scenario), or at r's close if still pending;
// its fatal errors are r's.
func (r *runner) child() *runner {
	c := &runner{dir: r.TempDir(), parent: r}
	r.Cleanup(c.close)
	return c
}

func newRunner() (*runner, error) {
	dir, err := os.MkdirTemp("", "verdict-peer-")
	if err != nil {
		return nil, err
	}
	return &runner{dir: dir}, nil
}

func (r *runner) Helper()                 {}
func (r *runner) Name() string            { return "bench-peer" }
func (r *runner) Logf(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
func (r *runner) Failed() bool            { r.mu.Lock(); defer r.mu.Unlock(); return r.failed }
func (r *runner) TempDir() string {
	d, err := os.MkdirTemp(r.dir, "tmp")
	if err != nil {
		r.Fatalf("temp dir: %v", err)
	}
	return d
}
func (r *runner) Cleanup(f func()) { r.mu.Lock(); r.cleanups = append(r.cleanups, f); r.mu.Unlock() }
func (r *runner) Fatal(a ...any)   { r.Fatalf("%s", fmt.Sprint(a...)) }
func (r *runner) Fatalf(f string, a ...any) {
	if r.parent != nil {
		r.parent.Fatalf(f, a...)
	}
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	fmt.Fprintf(os.Stderr, "bench-peer: "+f+"\n", a...)
	// The first caller stops everything and exits; a concurrent one (a
	// signal during a failure) waits in Do instead of exiting while
	// etcd or the apiserver are still being stopped.
	r.exit.Do(func() {
		r.close()
		os.Exit(1)
	})
	select {}
}
func (r *runner) Skipf(f string, a ...any) { r.Fatalf("cannot run: "+f, a...) }

// close runs the cleanups, last registered first, once.
func (r *runner) close() {
	r.mu.Lock()
	cs := r.cleanups
	r.cleanups = nil
	r.mu.Unlock()
	for i := len(cs) - 1; i >= 0; i-- {
		cs[i]()
	}
}

// writeKubeconfig writes a kubeconfig for the cluster's admin user.
func writeKubeconfig(c *e2e.Cluster, path string) error {
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: e2e
  context: {cluster: e2e, user: admin}
current-context: e2e
`, c.URL, base64.StdEncoding.EncodeToString(c.Config.CAData), c.Config.BearerToken)
	return os.WriteFile(path, []byte(kc), 0o600)
}

var (
	crdGVR  = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	cpolGVR = schema.GroupVersionResource{Group: "kyverno.io", Version: "v1", Resource: "clusterpolicies"}
	nsGVR   = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	saGVR   = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
)

// readObjects decodes every YAML document of the files (a folder is
// walked for *.yaml).
func readObjects(paths ...string) ([]*unstructured.Unstructured, error) {
	var files []string
	for _, p := range paths {
		err := filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
		for {
			var m map[string]any
			if err := d.Decode(&m); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if len(m) == 0 {
				continue
			}
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
	return objs, nil
}

// install creates Kyverno's CRDs (waiting until they are established),
// the namespaces and the ClusterPolicies (none when policyFile is "").
func install(ctx context.Context, cfg *rest.Config, crdDir, policyFile string, namespaces []string) (int, error) {
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	crds, err := readObjects(crdDir)
	if err != nil {
		return 0, err
	}
	for _, o := range crds {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		if _, err := dc.Resource(crdGVR).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return 0, fmt.Errorf("CRD %s: %w", o.GetName(), err)
		}
	}
	for _, o := range crds {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		if err := waitEstablished(ctx, dc, o.GetName()); err != nil {
			return 0, err
		}
	}
	for _, ns := range namespaces {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if _, err := dc.Resource(nsGVR).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return 0, fmt.Errorf("namespace %s: %w", ns, err)
		}
		// No controller-manager runs: the service account admission
		// plugin needs the namespace's default ServiceAccount.
		sa := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "default", "namespace": ns}}}
		if _, err := dc.Resource(saGVR).Namespace(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
			return 0, fmt.Errorf("service account %s/default: %w", ns, err)
		}
	}
	if policyFile == "" {
		return 0, nil
	}
	return installPolicies(ctx, dc, policyFile)
}

// installPolicies creates the ClusterPolicies of policyFile and returns
// their number.
func installPolicies(ctx context.Context, dc dynamic.Interface, policyFile string) (int, error) {
	pols, err := readObjects(policyFile)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range pols {
		if o.GetKind() != "ClusterPolicy" {
			continue
		}
		if _, err := dc.Resource(cpolGVR).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return 0, fmt.Errorf("ClusterPolicy %s: %w", o.GetName(), err)
		}
		n++
	}
	return n, nil
}

func waitEstablished(ctx context.Context, dc dynamic.Interface, name string) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		o, err := dc.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("CRD %s not established after 60s", name)
}
