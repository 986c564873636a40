package celdata

import (
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// testRegistry is an in-process registry on loopback holding one image,
// host/team/app:v1, that counts the manifest requests it answers and
// delays them by delay.
type testRegistry struct {
	host      string
	image     v1.Image
	manifests atomic.Int32
	delay     atomic.Int64 // nanoseconds
}

func startRegistry(t *testing.T) *testRegistry {
	t.Helper()
	r := &testRegistry{}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.Contains(req.URL.Path, "/manifests/") {
			r.manifests.Add(1)
			select {
			case <-time.After(time.Duration(r.delay.Load())):
			case <-req.Context().Done():
				return
			}
		}
		reg.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.host = strings.TrimPrefix(srv.URL, "http://")
	img, err := random.Image(512, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(r.host + "/team/app:v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	r.image = img
	r.manifests.Store(0)
	return r
}

// loopbackImages are options that reach the test registry: every block
// but loopback's.
func loopbackImages(opts ImageOptions) ImageOptions {
	opts.Block = []string{"169.254.0.0/16"}
	return opts
}

func newImages(t *testing.T, opts ImageOptions) *Images {
	t.Helper()
	im, err := NewImages(opts)
	if err != nil {
		t.Fatalf("NewImages: %v", err)
	}
	return im
}

// TestImageData reads an image of an in-process registry: the fields of
// Kyverno's image data loader, from the image pushed.
func TestImageData(t *testing.T) {
	r := startRegistry(t)
	im := newImages(t, loopbackImages(ImageOptions{}))
	got, err := im.ImageData(t.Context(), r.host+"/team/app:v1")
	if err != nil {
		t.Fatalf("ImageData: %v", err)
	}
	digest, err := r.image.Digest()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := r.image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"image":         r.host + "/team/app:v1",
		"registry":      r.host,
		"repository":    "team/app",
		"identifier":    "v1",
		"tag":           "v1",
		"digest":        digest.String(),
		"resolvedImage": r.host + "/team/app:v1@" + digest.String(),
		"architecture":  cfg.Architecture,
		"schemaVersion": float64(2),
	}
	gotFields := map[string]any{"architecture": nil, "schemaVersion": nil}
	for k := range want {
		if _, ok := gotFields[k]; !ok {
			gotFields[k] = got[k]
		}
	}
	config, _ := got["config"].(map[string]any)
	manifest, _ := got["manifest"].(map[string]any)
	gotFields["architecture"], gotFields["schemaVersion"] = config["architecture"], manifest["schemaVersion"]
	if diff := cmp.Diff(want, gotFields); diff != "" {
		t.Errorf("ImageData(%s/team/app:v1) (-want +got):\n%s", r.host, diff)
	}
	if _, err := im.ImageData(t.Context(), r.host+"/team/missing:v1"); err == nil {
		t.Errorf("ImageData(an image the registry does not have) = nil error, want an error")
	}
}

// TestImageDataCache: the data of an image is read once within the TTL
// (concurrent reads too), and again after it.
func TestImageDataCache(t *testing.T) {
	r := startRegistry(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	opts := loopbackImages(ImageOptions{CacheTTL: time.Minute})
	opts.now = func() time.Time { return now }
	im := newImages(t, opts)
	image := r.host + "/team/app:v1"
	read := func() {
		if _, err := im.ImageData(t.Context(), image); err != nil {
			t.Fatalf("ImageData: %v", err)
		}
	}
	read()
	first := r.manifests.Load()
	if first == 0 {
		t.Fatalf("the first read made no manifest request")
	}
	read()
	if got := r.manifests.Load(); got != first {
		t.Errorf("a second read within the TTL made %d manifest requests, want none", got-first)
	}
	now = now.Add(2 * time.Minute)
	read()
	if got := r.manifests.Load(); got != 2*first {
		t.Errorf("a read after the TTL made %d manifest requests, want %d", got-first, first)
	}
}

// TestImageDataLimits: the registry's address is blocked by default
// (loopback; ErrRefused); a slow registry is cut at the timeout; a
// response of the byte limit is read and one byte over it fails the call.
func TestImageDataLimits(t *testing.T) {
	r := startRegistry(t)
	image := r.host + "/team/app:v1"

	if _, err := newImages(t, ImageOptions{}).ImageData(t.Context(), image); !errors.Is(err, ErrRefused) {
		t.Errorf("ImageData(a registry on loopback) with the default blocks = %v, want ErrRefused", err)
	}

	r.delay.Store(int64(2 * time.Second))
	start := time.Now()
	_, err := newImages(t, loopbackImages(ImageOptions{Timeout: 200 * time.Millisecond})).ImageData(t.Context(), image)
	if err == nil || time.Since(start) > time.Second {
		t.Errorf("ImageData(a slow registry) with a 200ms timeout = %v after %v, want an error within 1s", err, time.Since(start))
	}
	r.delay.Store(0)

	// The largest response is the manifest or the config file.
	manifest, err := r.image.RawManifest()
	if err != nil {
		t.Fatal(err)
	}
	config, err := r.image.RawConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	largest := int64(max(len(manifest), len(config)))
	if _, err := newImages(t, loopbackImages(ImageOptions{MaxResponseBytes: largest})).ImageData(t.Context(), image); err != nil {
		t.Errorf("ImageData with responses of at most %d bytes, the limit: %v", largest, err)
	}
	if _, err := newImages(t, loopbackImages(ImageOptions{MaxResponseBytes: largest - 1})).ImageData(t.Context(), image); !errors.Is(err, ErrRegistryResponseTooLarge) {
		t.Errorf("ImageData with a response of %d bytes, over the limit of %d = %v, want ErrRegistryResponseTooLarge", largest, largest-1, err)
	}
}
