package eval

import (
	"github.com/verdict-policy/verdict/engine/internal/imageref"
)

// imagesOf returns Kyverno's `images` variable for a resource: for each
// container list of a Pod (or of the pod template of a controller), a map
// from container name to the parsed image reference.
func imagesOf(obj map[string]any) map[string]any {
	spec := podSpec(obj)
	if spec == nil {
		return map[string]any{}
	}
	out := map[string]any{}
	for _, list := range []string{"containers", "initContainers", "ephemeralContainers"} {
		cs, _ := spec[list].([]any)
		if len(cs) == 0 {
			continue
		}
		byName := map[string]any{}
		for _, c := range cs {
			cm, _ := c.(map[string]any)
			name, _ := cm["name"].(string)
			image, _ := cm["image"].(string)
			if image == "" {
				continue
			}
			info, err := imageInfo(image)
			if err != nil {
				continue
			}
			byName[name] = info
		}
		if len(byName) > 0 {
			out[list] = byName
		}
	}
	return out
}

// podSpec finds the pod spec of a Pod, a pod controller or a CronJob.
func podSpec(obj map[string]any) map[string]any {
	kind, _ := obj["kind"].(string)
	spec, _ := obj["spec"].(map[string]any)
	switch kind {
	case "Pod":
		return spec
	case "CronJob":
		jt, _ := spec["jobTemplate"].(map[string]any)
		js, _ := jt["spec"].(map[string]any)
		spec = js
	}
	tpl, _ := spec["template"].(map[string]any)
	ps, _ := tpl["spec"].(map[string]any)
	return ps
}

// imageInfo parses an image reference the way Kyverno fills `images`
// (imageref.Info).
func imageInfo(image string) (map[string]any, error) { return imageref.Info(image) }
