package kyvernotest

import (
	"fmt"

	"github.com/verdict-policy/verdict/engine/eval"
)

// UserInfo is a cli.kyverno.io/v1alpha1 UserInfo file: the requester of
// the simulated admission requests.
type UserInfo struct {
	APIVersion   string         `json:"apiVersion,omitempty"`
	Kind         string         `json:"kind,omitempty"`
	Metadata     map[string]any `json:"metadata,omitempty"`
	Roles        []string       `json:"roles,omitempty"`
	ClusterRoles []string       `json:"clusterRoles,omitempty"`
	UserInfo     eval.UserInfo  `json:"userInfo"`
	// DryRun is the request's dryRun flag (Kyverno's RequestInfo names it
	// synchronize).
	DryRun bool `json:"synchronize,omitempty"`
}

// ParseUserInfo decodes a user info file strictly.
func ParseUserInfo(name string, data []byte) (*UserInfo, error) {
	return parseCLIFile(name, data, "UserInfo", func(u *UserInfo) (string, string) { return u.APIVersion, u.Kind })
}

// parseCLIFile decodes a cli.kyverno.io/v1alpha1 file of the given kind
// strictly; typeOf gives its apiVersion and kind, which may be empty but
// not another.
func parseCLIFile[T any](name string, data []byte, kind string, typeOf func(*T) (apiVersion, kind string)) (*T, error) {
	var v T
	if err := unmarshalStrict(data, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	apiVersion, k := typeOf(&v)
	if apiVersion != "" && apiVersion != "cli.kyverno.io/v1alpha1" {
		return nil, fmt.Errorf("%s: apiVersion %q is not cli.kyverno.io/v1alpha1", name, apiVersion)
	}
	if k != "" && k != kind {
		return nil, fmt.Errorf("%s: kind %q is not %s", name, k, kind)
	}
	return &v, nil
}
