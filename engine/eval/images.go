package eval

import (
	"fmt"
	"strings"

	"github.com/distribution/reference"
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

// imageInfo parses an image reference the way Kyverno fills `images`:
// docker.io is the default registry and latest the default tag.
func imageInfo(image string) (map[string]any, error) {
	full := image
	if i := strings.IndexRune(image, '/'); i == -1 || (!strings.ContainsAny(image[:i], ".:") && image[:i] != "localhost" && strings.ToLower(image[:i]) == image[:i]) {
		full = "docker.io/" + image
	}
	ref, err := reference.Parse(full)
	if err != nil {
		return nil, fmt.Errorf("bad image %s: %w", image, err)
	}
	var registry, path, name, tag, digest string
	if named, ok := ref.(reference.Named); ok {
		registry = reference.Domain(named)
		path = reference.Path(named)
		name = path[strings.LastIndex(path, "/")+1:]
	}
	if t, ok := ref.(reference.Tagged); ok {
		tag = t.Tag()
	}
	if d, ok := ref.(reference.Digested); ok {
		digest = d.Digest().String()
	}
	if digest == "" && tag == "" {
		tag = "latest"
	}
	referenceWithTag := path + ":" + tag
	if registry != "" {
		referenceWithTag = registry + "/" + referenceWithTag
	}
	refStr := path
	if registry != "" {
		refStr = registry + "/" + path
	}
	if digest != "" {
		refStr += "@" + digest
	} else {
		refStr += ":" + tag
	}
	if parts := strings.Split(path, "/"); len(parts) > 1 && registry == "" && strings.Contains(parts[0], "_") {
		registry = parts[0]
		path = strings.Join(parts[1:], "/")
	}
	info := map[string]any{
		"registry":         registry,
		"path":             path,
		"name":             name,
		"tag":              tag,
		"digest":           digest,
		"reference":        refStr,
		"referenceWithTag": referenceWithTag,
	}
	for _, k := range []string{"registry", "tag", "digest"} {
		if info[k] == "" {
			delete(info, k)
		}
	}
	return info, nil
}
