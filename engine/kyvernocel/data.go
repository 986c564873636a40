package kyvernocel

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/kyverno/sdk/extensions/cel/libs/globalcontext"
	"github.com/kyverno/sdk/extensions/cel/libs/http"
	"github.com/kyverno/sdk/extensions/cel/libs/imagedata"
	"github.com/kyverno/sdk/extensions/cel/libs/resource"
	"github.com/verdict-policy/verdict/engine/internal/notfound"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ErrNoDataSource is the error of a library call whose data source the
// host did not supply (the field of Sources is nil).
var ErrNoDataSource = errors.New("no data source")

// Resources answers the resource library (resource.Get, resource.List,
// resource.Post): Kubernetes objects by apiVersion, plural resource name,
// namespace ("" for cluster-scoped resources or every namespace) and name.
// The server implements it with the cluster's API, the CLI with the
// test's context file.
type Resources interface {
	// GetResource returns one object; an object that does not exist is an
	// error wrapping engine.ErrNotFound.
	GetResource(ctx context.Context, apiVersion, resource, namespace, name string) (map[string]any, error)
	// ListResources returns the list object (at least {"items": [...]})
	// of the objects whose labels hold every label of labels.
	ListResources(ctx context.Context, apiVersion, resource, namespace string, labels map[string]string) (map[string]any, error)
	// PostResource creates an object (resource.Post) and returns it.
	PostResource(ctx context.Context, apiVersion, resource, namespace string, data map[string]any) (map[string]any, error)
}

// HTTP answers the http library (http.Get, http.Post, http.Client).
type HTTP interface {
	Get(ctx context.Context, url string, headers map[string]string) (any, error)
	Post(ctx context.Context, url string, body any, headers map[string]string) (any, error)
	// Client returns an HTTP source that trusts the PEM caBundle.
	Client(caBundle string) (HTTP, error)
}

// ImageData answers image.GetMetadata: the registry data of an image
// reference (its manifest, config, resolved digest...).
type ImageData interface {
	ImageData(ctx context.Context, image string) (map[string]any, error)
}

// GlobalContext answers globalContext.Get: the data of a
// GlobalContextEntry, or of one of its projections when projection is not
// empty.
type GlobalContext interface {
	GlobalReference(ctx context.Context, name, projection string) (any, error)
}

// Sources are the data sources of Kyverno's CEL libraries, as the host
// supplies them for one evaluation. A nil field makes the calls of its
// library fail with an error wrapping ErrNoDataSource, which CEL reports
// as the error of the expression.
type Sources struct {
	Resources     Resources
	HTTP          HTTP
	ImageData     ImageData
	GlobalContext GlobalContext
}

// contexts are the values the libraries find in their variables
// (resource, http, image, globalContext) for one evaluation: adapters from
// the sdk's interfaces to Sources, with the evaluation's context.
type contexts struct {
	resource      resource.Context
	http          http.Context
	image         imagedata.Context
	globalContext globalcontext.Context
}

func newContexts(ctx context.Context, s Sources) *contexts {
	return &contexts{
		resource:      resource.Context{ContextInterface: resourceAdapter{ctx: ctx, src: s.Resources}},
		http:          http.Context{ContextInterface: httpAdapter{ctx: ctx, src: s.HTTP}},
		image:         imagedata.Context{ContextInterface: imageAdapter{ctx: ctx, src: s.ImageData}},
		globalContext: globalcontext.Context{ContextInterface: globalAdapter{ctx: ctx, src: s.GlobalContext}},
	}
}

// noContexts are the library values of an evaluation without sources
// (compile-time defaults of the libraries too).
var noContexts = newContexts(context.Background(), Sources{})

type resourceAdapter struct {
	ctx context.Context
	src Resources
}

// notFound converts engine.ErrNotFound (notfound.Err) into the Kubernetes not-found error the
// resource library turns into null.
func notFound(resource, name string, err error) error {
	if errors.Is(err, notfound.Err) {
		return apierrors.NewNotFound(schema.GroupResource{Resource: resource}, name)
	}
	return err
}

func (a resourceAdapter) GetResource(apiVersion, res, namespace, name string) (*unstructured.Unstructured, error) {
	if a.src == nil {
		return nil, fmt.Errorf("resource.Get(%q, %q, %q, %q): %w for resources", apiVersion, res, namespace, name, ErrNoDataSource)
	}
	obj, err := a.src.GetResource(a.ctx, apiVersion, res, namespace, name)
	if err != nil {
		return nil, notFound(res, name, err)
	}
	return &unstructured.Unstructured{Object: obj}, nil
}

func (a resourceAdapter) ListResources(apiVersion, res, namespace string, labels map[string]string) (*unstructured.UnstructuredList, error) {
	if a.src == nil {
		return nil, fmt.Errorf("resource.List(%q, %q, %q): %w for resources", apiVersion, res, namespace, ErrNoDataSource)
	}
	list, err := a.src.ListResources(a.ctx, apiVersion, res, namespace, labels)
	if err != nil {
		return nil, notFound(res, "", err)
	}
	// The library converts the list back with UnstructuredContent: keep
	// the list's fields and items as the source gave them.
	out := &unstructured.UnstructuredList{Object: map[string]any{}}
	for k, v := range list {
		if k != "items" {
			out.Object[k] = v
		}
	}
	items, _ := list["items"].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		out.Items = append(out.Items, unstructured.Unstructured{Object: m})
	}
	if maps, ok := list["items"].([]map[string]any); ok {
		for _, m := range maps {
			out.Items = append(out.Items, unstructured.Unstructured{Object: m})
		}
	}
	return out, nil
}

func (a resourceAdapter) PostResource(apiVersion, res, namespace string, data map[string]any) (*unstructured.Unstructured, error) {
	if a.src == nil {
		return nil, fmt.Errorf("resource.Post(%q, %q, %q): %w for resources", apiVersion, res, namespace, ErrNoDataSource)
	}
	obj, err := a.src.PostResource(a.ctx, apiVersion, res, namespace, data)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: obj}, nil
}

// ToGVR maps a kind to its resource as Kyverno's CLI does without a
// cluster: the plural guessed from the kind (which is the resource name of
// every built-in kind of Kubernetes).
func (a resourceAdapter) ToGVR(apiVersion, kind string) (*schema.GroupVersionResource, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	gvr, _ := meta.UnsafeGuessKindToResource(gv.WithKind(kind))
	return &gvr, nil
}

type httpAdapter struct {
	ctx context.Context
	src HTTP
}

func (a httpAdapter) Get(url string, headers map[string]string) (any, error) {
	if a.src == nil {
		return nil, fmt.Errorf("http.Get(%q): %w for HTTP", url, ErrNoDataSource)
	}
	return a.src.Get(a.ctx, url, headers)
}

func (a httpAdapter) Post(url string, data any, headers map[string]string) (any, error) {
	if a.src == nil {
		return nil, fmt.Errorf("http.Post(%q): %w for HTTP", url, ErrNoDataSource)
	}
	return a.src.Post(a.ctx, url, data, headers)
}

func (a httpAdapter) Client(caBundle string) (http.ContextInterface, error) {
	if a.src == nil {
		return nil, fmt.Errorf("http.Client: %w for HTTP", ErrNoDataSource)
	}
	c, err := a.src.Client(caBundle)
	if err != nil {
		return nil, err
	}
	return httpAdapter{ctx: a.ctx, src: c}, nil
}

type imageAdapter struct {
	ctx context.Context
	src ImageData
}

func (a imageAdapter) GetImageData(image string, _ []remote.Option) (map[string]any, error) {
	if a.src == nil {
		return nil, fmt.Errorf("image.GetMetadata(%q): %w for image data", image, ErrNoDataSource)
	}
	return a.src.ImageData(a.ctx, image)
}

type globalAdapter struct {
	ctx context.Context
	src GlobalContext
}

func (a globalAdapter) GetGlobalReference(name, projection string) (any, error) {
	if a.src == nil {
		return nil, fmt.Errorf("globalContext.Get(%q, %q): %w for the global context", name, projection, ErrNoDataSource)
	}
	return a.src.GlobalReference(a.ctx, name, projection)
}

// ErrNoGenerator is the error of generator.Apply evaluated without a
// generator (Activation.SetGenerator).
var ErrNoGenerator = errors.New("no generator: generator.Apply is evaluated by GeneratingPolicies only")

// noGenerator is the generator of an environment's programs, which
// activations replace.
type noGenerator struct{}

func (noGenerator) GenerateResources(string, []map[string]any) error { return ErrNoGenerator }
