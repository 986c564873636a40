package podsecurity

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/verdict-policy/verdict/engine/internal/imageref"
	"github.com/verdict-policy/verdict/engine/internal/jsonquote"
	"github.com/verdict-policy/verdict/engine/internal/memo"
)

// controlNames are the Pod Security Standards controls' names by check ID,
// as Kyverno's pss/utils.PSS_control_name_to_ids names them.
var controlNames = map[string]string{
	"capabilities_baseline":     "Capabilities",
	"capabilities_restricted":   "Capabilities",
	"seccompProfile_baseline":   "Seccomp",
	"seccompProfile_restricted": "Seccomp",
	"privileged":                "Privileged Containers",
	"hostPorts":                 "Host Ports",
	"procMount":                 "/proc Mount Type",
	"windowsHostProcess":        "HostProcess",
	"seLinuxOptions":            "SELinux",
	"hostNamespaces":            "Host Namespaces",
	"hostPathVolumes":           "HostPath Volumes",
	"sysctls":                   "Sysctls",
	"appArmorProfile":           "AppArmor",
	"allowPrivilegeEscalation":  "Privilege Escalation",
	"runAsNonRoot":              "Running as Non-root",
	"runAsUser":                 "Running as Non-root user",
	"restrictedVolumes":         "Volume Types",
}

// containerList is what Kyverno's regexContainerNames,
// `container(?:s)?\s*(.*?)\s*must`, captures of a check's forbidden detail
// (`container "a" must ...`, `containers "a", "b" must ...`): the text
// between the first "container" (or "containers") and the first "must"
// after it, without the whitespace around it.
func containerList(detail string) (string, bool) {
	i := strings.Index(detail, "container")
	if i < 0 {
		return "", false
	}
	rest := strings.TrimPrefix(detail[i+len("container"):], "s")
	rest = strings.TrimLeft(rest, reSpace)
	m := strings.Index(rest, "must")
	if m < 0 {
		return "", false
	}
	return strings.TrimRight(rest[:m], reSpace), true
}

// reSpace is the regexp package's \s.
const reSpace = " \t\n\f\r"

// Properties are the report properties of a failed podSecurity rule, as
// Kyverno's report.addPodSecurityProperties writes them: standard and
// version (the rule's level and version as written), controls (the IDs
// of the failed checks, comma-separated) and controlsJSON (each failed
// control's ID, name and the images of the containers its detail names,
// as Kyverno's addImages finds them: the image reference as ImageInfo
// writes it, or the container's name when pod has no such container).
// It is nil when failed is empty.
func (c *Checker) Properties(failed []Result, pod *corev1.Pod) map[string]string {
	if len(failed) == 0 {
		return nil
	}
	// controlsJSON is json.Marshal of Kyverno's []report.Control: ID,
	// Name and Images (null when the detail names no container).
	b := make([]byte, 0, 96*len(failed))
	b = append(b, '[')
	ids := make([]string, len(failed))
	for i, f := range failed {
		ids[i] = f.ID
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"ID":`...)
		b = jsonquote.Append(b, f.ID, jsonquote.Marshal)
		b = append(b, `,"Name":`...)
		b = jsonquote.Append(b, controlNames[f.ID], jsonquote.Marshal)
		b = append(b, `,"Images":`...)
		b = appendImages(b, f.Result.ForbiddenDetail, pod)
		b = append(b, '}')
	}
	b = append(b, ']')
	return map[string]string{
		"standard":     c.Level,
		"version":      c.Version,
		"controls":     strings.Join(ids, ","),
		"controlsJSON": string(b),
	}
}

// appendImages appends Kyverno's addImages of one check as JSON: null
// when the detail names no container, else the image of each container
// it names.
func appendImages(b []byte, detail string, pod *corev1.Pod) []byte {
	list, ok := containerList(detail)
	if !ok {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, name := range strings.Split(list, ",") {
		if i > 0 {
			b = append(b, ',')
		}
		// Kyverno drops every quote and space of the list (most are
		// around the names).
		if name = strings.Trim(name, `" `); strings.ContainsAny(name, `" `) {
			name = strings.ReplaceAll(strings.ReplaceAll(name, `"`, ""), " ", "")
		}
		b = jsonquote.Append(b, imageOf(name, pod), jsonquote.Marshal)
	}
	return append(b, ']')
}

// imageOf is Kyverno's getImageReference: the image of the container,
// init container or ephemeral container named name, as ImageInfo.String
// writes it; name itself when there is none.
func imageOf(name string, pod *corev1.Pod) string {
	image, ok := "", false
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			image, ok = c.Image, true
			break
		}
	}
	if !ok {
		for _, c := range pod.Spec.InitContainers {
			if c.Name == name {
				image, ok = c.Image, true
				break
			}
		}
	}
	if !ok {
		for _, c := range pod.Spec.EphemeralContainers {
			if c.Name == name {
				image, ok = c.Image, true
				break
			}
		}
	}
	if !ok {
		return name
	}
	if s := imageRefs.Get(image, imageString); s != "" {
		return s
	}
	return name
}

// imageRefs are the images of the Pods evaluated, as ImageInfo.String
// writes them ("" for one that does not parse): the same images come
// again and again, and parsing one is most of Properties' cost.
var imageRefs = memo.New[string, string](maxImageRefs)

// maxImageRefs bounds imageRefs (images come from the resources
// evaluated).
const maxImageRefs = 4096

func imageString(image string) string {
	s, _ := imageref.String(image)
	return s
}
