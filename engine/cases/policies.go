package cases

import _ "embed" // the policies shared by the tests of the services

// The policies the tests of the client, the decision server, the scanner
// and the webhook proxy share: one copy of each, in policies/.
var (
	// RequireTeamLabel is an Enforce ClusterPolicy: Pods need the label
	// team (rule check-team; category Best Practices, severity medium;
	// label set=baseline).
	//
	//go:embed policies/require-team-label.yaml
	RequireTeamLabel string
	// DisallowLatestTag is an Audit ClusterPolicy with emitWarning: the
	// containers of Pods must not use the latest tag (rule no-latest).
	//
	//go:embed policies/disallow-latest-tag.yaml
	DisallowLatestTag string
)
