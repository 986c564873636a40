package imageref

import (
	"fmt"
	"strings"

	"github.com/distribution/reference"
)

// Info parses an image reference the way Kyverno fills `images`
// (pkg/utils/image.GetImageInfo):
// docker.io is the default registry and latest the default tag.
func Info(image string) (map[string]any, error) {
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

// String is Kyverno's ImageInfo.String: registry/path:tag, or
// registry/path@digest.
func String(image string) (string, error) {
	info, err := Info(image)
	if err != nil {
		return "", err
	}
	return info["reference"].(string), nil
}
