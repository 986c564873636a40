package kubelookup

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

// BenchmarkConfigMap reads a ConfigMap kept from a GET (the TTL cache)
// and one from the informer.
func BenchmarkConfigMap(b *testing.B) {
	c := &clock{t: time.Unix(1000, 0)}
	data := map[string]string{"a": "1", "b": "2", "c": "3"}
	l, _, _ := newTestLookup(b, c, []runtime.Object{
		configMap("team", "plain", data, nil),
		configMap("team", "watched", data, map[string]string{CacheLabel: "true"}),
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l.Start(ctx)
	for !l.informer.Core().V1().ConfigMaps().Informer().HasSynced() {
		time.Sleep(time.Millisecond)
	}
	for _, name := range []string{"plain", "watched"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := l.ConfigMap(ctx, "team", name); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
