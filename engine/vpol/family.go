package vpol

import (
	"strings"

	"github.com/verdict-policy/verdict/engine/kyverno"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Doc is a document of a policies.kyverno.io policy kind or of its
// namespaced form, as written (any served version: the spec is the same
// Go type, S, in every version, Kyverno's github.com/kyverno/api types).
// The kinds' packages name it Document.
type Doc[S any] struct {
	APIVersion string
	Kind       string
	Metadata   metav1.ObjectMeta
	Spec       S
}

// Namespaced reports whether the document is of the namespaced kind
// (NamespacedMutatingPolicy, ...).
func (d *Doc[S]) Namespaced() bool { return strings.HasPrefix(d.Kind, "Namespaced") }

// Identity returns what the compiled policy of the document says of
// itself: its kind, name, namespace (empty for the cluster-wide kind) and
// hash (Hash of the kind, name, metadata namespace, annotations and spec).
func (d *Doc[S]) Identity() (kind, name, namespace, hash string) {
	if d.Namespaced() {
		namespace = d.Metadata.Namespace
	}
	return d.Kind, d.Metadata.Name, namespace, Hash(d.Kind, d.Metadata.Name, d.Metadata.Namespace, d.Metadata.Annotations, &d.Spec)
}

// Family is a policies.kyverno.io policy kind and its namespaced form
// ("MutatingPolicy" and "NamespacedMutatingPolicy"), decoded strictly
// against the CRD schemas of their versions into Doc[S].
type Family[S any] struct {
	kind, namespaced string
	kinds            *Kinds
}

// NewFamily describes kind and "Namespaced"+kind, in the versions their
// CRDs serve (and Kyverno's CLI loads): v1, v1beta1 and v1alpha1 of kind,
// v1 and v1beta1 of the namespaced kind (it has no v1alpha1), as for
// ValidatingPolicy. pkg names the package whose embedded schemaJSON
// (schemas by "Kind/version") this is, for the panic of a broken embedded
// file.
func NewFamily[S any](pkg, kind string, schemaJSON []byte) *Family[S] {
	namespaced := "Namespaced" + kind
	versions := map[string][]string{
		kind:       {"v1", "v1beta1", "v1alpha1"},
		namespaced: {"v1", "v1beta1"},
	}
	return &Family[S]{kind: kind, namespaced: namespaced, kinds: NewKinds(pkg, schemaJSON, versions)}
}

// IsPolicy reports whether apiVersion and kind name one of the family's
// kinds, in any version (a version that is not served is a decoding error).
func (f *Family[S]) IsPolicy(apiVersion, kind string) bool {
	return (kind == f.kind || kind == f.namespaced) && kyverno.APIGroup(apiVersion) == Group
}

// DecodePolicy decodes one document of the family (a JSON object, as
// kyverno.SplitDocuments returns it), strictly against the CRD schema of
// its version: an unknown field, or a value of the wrong type, is an
// error with Code engine.CodeDecode and the field path; a version the CRD
// does not serve is an error with Code engine.CodeUnsupported at
// "apiVersion". Every problem is reported, as engine.Errors sorted by
// path.
func (f *Family[S]) DecodePolicy(m map[string]any) (*Doc[S], error) {
	d := new(Doc[S])
	var err error
	if d.APIVersion, d.Kind, err = f.kinds.Decode(m, &d.Metadata, &d.Spec); err != nil {
		return nil, err
	}
	return d, nil
}

// Decode reads every document of the family in data (multi-document YAML
// or JSON, Lists included) and returns them in order; other documents are
// skipped. source names the input in errors; the problems of a document
// are wrapped with the source, its index and its line.
func (f *Family[S]) Decode(source string, data []byte) ([]*Doc[S], error) {
	return decodeAll(source, data, f.IsPolicy, f.DecodePolicy)
}
