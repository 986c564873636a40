package kubelookup

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/verdict-policy/verdict/engine/kyvernocel"
)

// CELSources returns the data sources of Kyverno's CEL libraries that the
// cluster answers, for ValidatingPolicies: resource.Get and resource.List
// through the dynamic client (a list holds at most MaxListObjects
// objects, as for context entries). resource.Post is refused: the decision
// server never writes to a cluster. globalContext.Get reads the
// GlobalContextEntries the Lookup keeps (globalcontext.go). http and
// image.GetMetadata are server/celdata's.
func (l *Lookup) CELSources() kyvernocel.Sources {
	src := kyvernocel.Sources{Resources: celResources{l}}
	if l.gctx != nil {
		src.GlobalContext = l.gctx
	}
	return src
}

// celResources implements kyvernocel.Resources with the Lookup's clients.
type celResources struct{ l *Lookup }

// ri is the dynamic client of resource in apiVersion, in namespace when
// it is not empty (Kyverno's resource library does the same).
func (r celResources) ri(apiVersion, resource, namespace string) (dynamic.ResourceInterface, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	ri := r.l.opts.Dynamic.Resource(gv.WithResource(resource))
	if namespace != "" {
		return ri.Namespace(namespace), nil
	}
	return ri, nil
}

// GetResource implements kyvernocel.Resources with a GET.
func (r celResources) GetResource(ctx context.Context, apiVersion, resource, namespace, name string) (map[string]any, error) {
	what := fmt.Sprintf("%s %s %s", apiVersion, resource, objectKey(namespace, name))
	ri, err := r.ri(apiVersion, resource, namespace)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	u, err := ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, clusterError(what, err)
	}
	return u.Object, nil
}

// ListResources implements kyvernocel.Resources with a list in pages,
// the labels sent to the API server as a selector.
func (r celResources) ListResources(ctx context.Context, apiVersion, resource, namespace string, lbls map[string]string) (map[string]any, error) {
	what := fmt.Sprintf("%s %s in namespace %q", apiVersion, resource, namespace)
	ri, err := r.ri(apiVersion, resource, namespace)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	opts := metav1.ListOptions{Limit: 500}
	if len(lbls) > 0 {
		opts.LabelSelector = labels.SelectorFromSet(lbls).String()
	}
	objs, err := r.l.list(ctx, what, ri, opts, nil)
	if err != nil {
		return nil, err
	}
	items := make([]any, len(objs))
	for i, o := range objs {
		items[i] = o
	}
	return map[string]any{"items": items}, nil
}

// PostResource implements kyvernocel.Resources: the decision server never
// writes to a cluster.
func (r celResources) PostResource(_ context.Context, apiVersion, resource, _ string, _ map[string]any) (map[string]any, error) {
	return nil, fmt.Errorf("resource.Post(%s, %s): the decision server does not create resources", apiVersion, resource)
}

func objectKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
