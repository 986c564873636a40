package kubelookup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/internal/jsonvalue"
)

// newConfigMapInformer returns the informer factory of the ConfigMaps
// that carry CacheLabel, in every namespace, without resync.
func newConfigMapInformer(kube kubernetes.Interface) informers.SharedInformerFactory {
	return informers.NewSharedInformerFactoryWithOptions(kube, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = CacheLabel }))
}

// ConfigMap implements eval.Lookup. It returns what Kyverno puts in a
// configMap context entry: {"data": ..., "metadata": ...}. A ConfigMap
// labelled CacheLabel is read from the informer once it has synced; any
// other (and one the informer does not hold yet) with a GET whose result,
// found or not, is kept CacheTTL.
func (l *Lookup) ConfigMap(ctx context.Context, namespace, name string) (map[string]any, error) {
	inf := l.informer.Core().V1().ConfigMaps()
	if inf.Informer().HasSynced() {
		if cm, err := inf.Lister().ConfigMaps(namespace).Get(name); err == nil {
			return l.watchedEntry(cm)
		}
	}
	return l.configMaps.get(namespace+"/"+name, func() (map[string]any, error) {
		cm, err := l.opts.Kube.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, clusterError("configMap "+namespace+"/"+name, err)
		}
		return configMapEntry(cm)
	}, keepError)
}

// watched is the configMap entry of one version of a ConfigMap of the
// informer (which replaces the object on every change).
type watched struct {
	cm    *corev1.ConfigMap
	entry map[string]any
}

// watchedEntry is configMapEntry of an informer's ConfigMap, converted
// once per version. The entries are as many as the labelled
// ConfigMaps the informer holds (plus deleted ones, until the name is
// used again).
func (l *Lookup) watchedEntry(cm *corev1.ConfigMap) (map[string]any, error) {
	key := cm.Namespace + "/" + cm.Name
	if v, ok := l.watched.Load(key); ok && v.(watched).cm == cm {
		return v.(watched).entry, nil
	}
	m, err := configMapEntry(cm)
	if err != nil {
		return nil, err
	}
	l.watched.Store(key, watched{cm, m})
	return m, nil
}

// configMapEntry is Kyverno's configMap context entry: the data and the
// metadata of cm, as JSON values.
func configMapEntry(cm *corev1.ConfigMap) (map[string]any, error) {
	b, err := json.Marshal(map[string]any{"data": cm.Data, "metadata": cm.ObjectMeta})
	if err != nil {
		return nil, fmt.Errorf("configMap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return jsonvalue.DecodeObject(b)
}

// clusterError wraps an API error about what: a NotFound also wraps
// engine.ErrNotFound.
func clusterError(what string, err error) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%s: %w (%w)", what, engine.ErrNotFound, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// keepError tells the caches which errors to keep: the answer "it does
// not exist", not transient failures.
func keepError(err error) bool {
	return errors.Is(err, engine.ErrNotFound)
}
