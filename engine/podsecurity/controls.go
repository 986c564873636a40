package podsecurity

// The Pod Security Standards controls as Kyverno names them
// (pkg/pss/utils/mapping.go), with the IDs of the checks of
// k8s.io/pod-security-admission that implement them.
var controlIDs = map[string][]string{
	"Capabilities":             {"capabilities_baseline", "capabilities_restricted"},
	"Seccomp":                  {"seccompProfile_baseline", "seccompProfile_restricted"},
	"Privileged Containers":    {"privileged"},
	"Host Ports":               {"hostPorts"},
	"/proc Mount Type":         {"procMount"},
	"HostProcess":              {"windowsHostProcess"},
	"SELinux":                  {"seLinuxOptions"},
	"Host Namespaces":          {"hostNamespaces"},
	"HostPath Volumes":         {"hostPathVolumes"},
	"Sysctls":                  {"sysctls"},
	"AppArmor":                 {"appArmorProfile"},
	"Privilege Escalation":     {"allowPrivilegeEscalation"},
	"Running as Non-root":      {"runAsNonRoot"},
	"Running as Non-root user": {"runAsUser"},
	"Volume Types":             {"restrictedVolumes"},
}

// restrictedControls are the controls of the restricted level only.
var restrictedControls = []string{
	"Volume Types",
	"Privilege Escalation",
	"Running as Non-root",
	"Running as Non-root user",
	"Seccomp",
	"Capabilities",
}

// podLevelControls must not name images in an exclusion.
var podLevelControls = []string{
	"Host Namespaces",
	"HostPath Volumes",
	"Sysctls",
	"Volume Types",
}

// containerLevelControls must name images in an exclusion.
var containerLevelControls = []string{
	"Capabilities",
	"Privileged Containers",
	"Host Ports",
	"/proc Mount Type",
	"Privilege Escalation",
}
