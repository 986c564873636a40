package kyvernotest

import (
	"fmt"

	"sigs.k8s.io/yaml"

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
	var u UserInfo
	if err := yaml.UnmarshalStrict(data, &u); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if u.APIVersion != "" && u.APIVersion != "cli.kyverno.io/v1alpha1" {
		return nil, fmt.Errorf("%s: apiVersion %q is not cli.kyverno.io/v1alpha1", name, u.APIVersion)
	}
	if u.Kind != "" && u.Kind != "UserInfo" {
		return nil, fmt.Errorf("%s: kind %q is not UserInfo", name, u.Kind)
	}
	return &u, nil
}
