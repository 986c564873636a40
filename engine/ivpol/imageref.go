package ivpol

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/kyverno/sdk/extensions/cel/libs/image"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/cel/environment"
)

// varRef is the variable of a matchImageReferences expression: the image
// reference (Kyverno's ImageRefKey).
const varRef = "ref"

// imageRefEnv is the environment of matchImageReferences expressions, as
// Kyverno's NewMatchImageEnv: the base environment, `ref` and the image
// library. Built once.
var imageRefEnv = sync.OnceValues(func() (*cel.Env, error) {
	base, err := environment.MustBaseEnvSet(version.MajorMinor(1, 0)).Env(environment.StoredExpressions)
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	env, err := base.Extend(cel.Variable(varRef, cel.StringType), image.Lib(image.Latest()))
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	return env, nil
})

// matchImage is Kyverno's matching.MatchImage: true without references,
// else whether one of them matches.
func (p *Policy) matchImage(img string) (bool, error) {
	if len(p.imageRefs) == 0 {
		return true, nil
	}
	for _, r := range p.imageRefs {
		if r.glob != nil {
			if r.glob.Match(img) {
				return true, nil
			}
			continue
		}
		out, _, err := r.prog.Eval(map[string]any{varRef: img})
		if err != nil {
			return false, err
		}
		if b, ok := out.Value().(bool); ok && b {
			return true, nil
		}
	}
	return false, nil
}
