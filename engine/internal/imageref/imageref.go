package imageref

import (
	"fmt"
	"strings"

	"github.com/distribution/reference"
)

// Ref is an image reference split as Kyverno's ImageInfo splits it.
type Ref struct {
	Registry, Path string
	// Tag is "latest" when the reference has neither tag nor digest.
	Tag, Digest string
}

// Qualify returns image with defaultRegistry added when it names none, as
// Kyverno decides it: the part before the first "/" is a registry when it
// holds a "." or ":", is "localhost" or is not lowercase.
func Qualify(image, defaultRegistry string) string {
	if i := strings.IndexRune(image, '/'); i == -1 || (!strings.ContainsAny(image[:i], ".:") && image[:i] != "localhost" && strings.ToLower(image[:i]) == image[:i]) {
		return defaultRegistry + "/" + image
	}
	return image
}

// Split parses a qualified image reference (Qualify); the error is the
// parser's.
func Split(image string) (Ref, error) {
	var r Ref
	ref, err := reference.Parse(image)
	if err != nil {
		return r, err
	}
	if named, ok := ref.(reference.Named); ok {
		r.Registry, r.Path = reference.Domain(named), reference.Path(named)
	}
	if t, ok := ref.(reference.Tagged); ok {
		r.Tag = t.Tag()
	}
	if d, ok := ref.(reference.Digested); ok {
		r.Digest = d.Digest().String()
	}
	if r.Digest == "" && r.Tag == "" {
		r.Tag = "latest"
	}
	return r, nil
}

// Info parses an image reference the way Kyverno fills `images`
// (pkg/utils/image.GetImageInfo):
// docker.io is the default registry and latest the default tag.
func Info(image string) (map[string]any, error) {
	r, err := Split(Qualify(image, "docker.io"))
	if err != nil {
		return nil, fmt.Errorf("bad image %s: %w", image, err)
	}
	registry, path, tag, digest := r.Registry, r.Path, r.Tag, r.Digest
	name := path[strings.LastIndex(path, "/")+1:]
	referenceWithTag := path + ":" + tag
	if registry != "" {
		referenceWithTag = registry + "/" + referenceWithTag
	}
	refStr := r.String()
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

// String is Kyverno's ImageInfo.String of r: registry/path:tag, or
// registry/path@digest.
func (r Ref) String() string {
	s := r.Path
	if r.Registry != "" {
		s = r.Registry + "/" + r.Path
	}
	if r.Digest != "" {
		return s + "@" + r.Digest
	}
	return s + ":" + r.Tag
}

// String is Kyverno's ImageInfo.String of image (Info's reference).
func String(image string) (string, error) {
	r, err := Split(Qualify(image, "docker.io"))
	if err != nil {
		return "", fmt.Errorf("bad image %s: %w", image, err)
	}
	return r.String(), nil
}
