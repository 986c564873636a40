package helm

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// ChartDir is the chart's folder, relative to this package.
const ChartDir = "verdict"

// KubeVersion is the Kubernetes version the chart is rendered for (the
// version of the module's k8s.io packages).
var KubeVersion = chartutil.KubeVersion{Version: "v1.36.0", Major: "1", Minor: "36"}

// Options are the inputs of Render, as helm template takes them.
type Options struct {
	Namespace   string   // -n; default "verdict"
	ValuesFiles []string // -f, relative to the chart's folder
	Set         []string // --set
}

// Values merges the values files and --set values of opts, as helm does
// (the chart's values.yaml not included).
func Values(opts Options) (map[string]any, error) {
	files := make([]string, len(opts.ValuesFiles))
	for i, f := range opts.ValuesFiles {
		files[i] = filepath.Join(ChartDir, f)
	}
	return (&values.Options{ValueFiles: files, Values: opts.Set}).MergeValues(nil)
}

// Render renders the chart as helm template does (release name verdict,
// an install, no cluster to look up), checks the values against
// values.schema.json, and returns its objects, ordered by template file
// then position. NOTES.txt and documents without an object are left out.
func Render(opts Options) ([]*unstructured.Unstructured, error) {
	ch, err := loader.Load(ChartDir)
	if err != nil {
		return nil, fmt.Errorf("load chart: %w", err)
	}
	vals, err := Values(opts)
	if err != nil {
		return nil, err
	}
	ns := opts.Namespace
	if ns == "" {
		ns = "verdict"
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = KubeVersion
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "verdict", Namespace: ns, Revision: 1, IsInstall: true}, caps)
	if err != nil {
		return nil, err
	}
	out, err := engine.Render(ch, rv)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(out))
	for name := range out {
		names = append(names, name)
	}
	sort.Strings(names)
	var objs []*unstructured.Unstructured
	for _, name := range names {
		if strings.HasSuffix(name, "NOTES.txt") {
			continue
		}
		docs := releaseutil.SplitManifests(out[name])
		keys := make([]string, 0, len(docs))
		for k := range docs {
			keys = append(keys, k)
		}
		// SplitManifests names the documents manifest-0, manifest-1, ...
		sort.Sort(releaseutil.BySplitManifestsOrder(keys))
		for _, k := range keys {
			j, err := yaml.YAMLToJSONStrict([]byte(docs[k]))
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", name, k, err)
			}
			if s := strings.TrimSpace(string(j)); s == "null" || s == "{}" {
				continue
			}
			o := &unstructured.Unstructured{}
			if err := o.UnmarshalJSON(j); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", name, k, err)
			}
			objs = append(objs, o)
		}
	}
	return objs, nil
}
