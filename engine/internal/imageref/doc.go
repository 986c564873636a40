// Package imageref parses image references as Kyverno does (its
// ImageInfo): docker.io is the default registry and latest the default
// tag. engine/eval fills `images` with it (Info), engine/ivpol names the
// images mutateDigest pins (String), engine/jmespath's image_normalize
// splits them (Qualify, Split).
package imageref
