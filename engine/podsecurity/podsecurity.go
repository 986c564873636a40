package podsecurity

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/match"
)

// Checker is a compiled validate.podSecurity block: the checks of its level
// and version, chosen once, and its exclusions. It is immutable and safe
// for concurrent use.
type Checker struct {
	// Level and Version are as written in the policy (Version may be "").
	Level, Version string
	level          api.LevelVersion
	checks         []check
	exclude        []Exclude
}

// check is one Pod Security Standards check at the version the rule asks
// for.
type check struct {
	id string
	// key names the check and its selected version: checks with the same
	// key give the same result for a pod (Memo).
	key string
	// slot is the index of key in checkSlots: where a Memo keeps the
	// result.
	slot int
	fn   policy.CheckPodFn
}

// checkSlots numbers every version of every default check by its key
// (check.key), for the results of a Memo.
var checkSlots = func() map[string]int {
	slots := map[string]int{}
	for _, c := range policy.DefaultChecks() {
		for _, v := range c.Versions {
			slots[checkKey(c.ID, v.MinimumVersion)] = len(slots)
		}
	}
	return slots
}()

func checkKey(id policy.CheckID, v api.Version) string {
	return string(id) + "@" + v.String()
}

// fieldErrors are the options of a check run with field errors, one
// slice for every run (a variadic argument to a function value is
// otherwise built on the heap at each call).
var fieldErrors = []policy.Option{policy.WithFieldErrors()}

// Exclude exempts a control, as validate.podSecurity.exclude and
// PolicyException.spec.podSecurity write it.
type Exclude = kyverno.PodSecurityStandard

// Compile compiles a validate.podSecurity block. path locates it in the
// policy. It rejects what Kyverno's policy validation rejects: an unknown
// level or version, and exclusions that break the rules of
// ValidateExclusions.
func Compile(ps *kyverno.PodSecurity, path string) (*Checker, error) {
	var errs engine.Errors
	c := &Checker{Level: ps.Level, Version: ps.Version, exclude: ps.Exclude}
	lvl, err := api.ParseLevel(ps.Level)
	if err != nil {
		errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, path+".level", fmt.Sprintf("level %q %v", ps.Level, err)))
	}
	ver, err := parseVersion(ps.Version)
	if err != nil {
		errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, path+".version", fmt.Sprintf("version %q %v", ps.Version, err)))
	}
	c.level = api.LevelVersion{Level: lvl, Version: ver}
	errs = append(errs, ValidateExclusions(ps.Level, ps.Exclude, path+".exclude")...)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	c.checks = selectChecks(c.level)
	return c, nil
}

// parseVersion is Kyverno's pss.ParseVersion: "" and "latest" are the
// latest version, "v1.x" is that version.
func parseVersion(v string) (api.Version, error) {
	if v == "" || v == "latest" {
		return api.LatestVersion(), nil
	}
	parsed, err := api.ParseVersion(v)
	if err != nil {
		return api.Version{}, err
	}
	return api.MajorMinorVersion(parsed.Major(), parsed.Minor()), nil
}

// selectChecks picks, for each default check, the newest version not newer
// than the level's version, as Kyverno's evaluatePSS does. For the
// baseline level only baseline checks apply; for restricted and (as in
// Kyverno) privileged, all checks do.
func selectChecks(lv api.LevelVersion) []check {
	var out []check
	for _, c := range policy.DefaultChecks() {
		if lv.Level == api.LevelBaseline && c.Level != lv.Level {
			continue
		}
		selected := c.Versions[0]
		for i := 1; i < len(c.Versions); i++ {
			next := c.Versions[i]
			if !lv.Version.Older(next.MinimumVersion) && selected.MinimumVersion.Older(next.MinimumVersion) {
				selected = next
			}
		}
		key := checkKey(c.ID, selected.MinimumVersion)
		out = append(out, check{id: string(c.ID), key: key, slot: checkSlots[key], fn: selected.CheckPod})
	}
	return out
}

// ValidateExclusions checks exclusions as Kyverno's
// PodSecurityStandard.Validate and Rule.ValidatePSaControlNames do. level
// is the rule's level ("" for a PolicyException, which has none).
func ValidateExclusions(level string, excludes []Exclude, path string) engine.Errors {
	var errs engine.Errors
	for i, e := range excludes {
		p := fmt.Sprintf("%s[%d]", path, i)
		if _, ok := controlIDs[e.ControlName]; !ok {
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p+".controlName", fmt.Sprintf("unknown control %q", e.ControlName)))
		}
		switch {
		case slices.Contains(containerLevelControls, e.ControlName):
			if len(e.Images) == 0 {
				errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p+".controlName", "exclude.images must be specified for the container level control"))
			}
		case slices.Contains(podLevelControls, e.ControlName):
			if len(e.Images) != 0 {
				errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p+".controlName", "exclude.images must not be specified for the pod level control"))
			}
		}
		if e.RestrictedField != "" && len(e.Values) == 0 {
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p+".values", "values is required"))
		}
		if e.RestrictedField == "" && len(e.Values) != 0 {
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p+".restrictedField", "restrictedField is required"))
		}
		if level == "baseline" && e.ControlName != "Seccomp" && e.ControlName != "Capabilities" && slices.Contains(restrictedControls, e.ControlName) {
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p+".controlName", "Invalid control name defined at the given level"))
		}
	}
	return errs
}

// Result is a check the pod does not pass.
type Result struct {
	// ID is the check's ID ("privileged", "capabilities_restricted", ...).
	ID     string
	Result policy.CheckResult
}

// Evaluate runs the checks against pod and applies the rule's exclusions.
// allowed is true when no check fails.
func (c *Checker) Evaluate(pod *corev1.Pod) (allowed bool, failed []Result) {
	return c.EvaluateMemo(pod, nil)
}

// Memo remembers the results of checks on one pod, so that the
// podSecurity rules of several policies evaluating the same pod (a
// baseline and a restricted policy share the baseline checks) run each
// check once. A Memo belongs to one pod and one goroutine.
type Memo struct {
	// results holds a result per check slot (check.slot); nil until
	// the first check.
	results []memoResult
}

type memoResult struct {
	done   bool
	result policy.CheckResult
}

// EvaluateMemo is Evaluate with the check results of m, which must have
// been used only with pod (nil: no memo). The field errors of the
// failed results may be shared with other calls on the same Memo: they
// must not be modified (Exempt and Message do not).
func (c *Checker) EvaluateMemo(pod *corev1.Pod, m *Memo) (allowed bool, failed []Result) {
	failed = c.runMemo(&pod.ObjectMeta, &pod.Spec, m)
	if len(c.exclude) > 0 {
		failed = c.Exempt(failed, c.exclude, pod)
	}
	return len(failed) == 0, failed
}

// runMemo is run with the results of m.
func (c *Checker) runMemo(meta *metav1.ObjectMeta, spec *corev1.PodSpec, m *Memo) []Result {
	if m == nil {
		return c.run(meta, spec)
	}
	if m.results == nil {
		m.results = make([]memoResult, len(checkSlots))
	}
	n := 0
	for _, ch := range c.checks {
		e := &m.results[ch.slot]
		if !e.done {
			e.result = ch.check(meta, spec)
			e.done = true
		}
		if !e.result.Allowed {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]Result, 0, n)
	for _, ch := range c.checks {
		if r := m.results[ch.slot].result; !r.Allowed {
			out = append(out, Result{ID: ch.id, Result: r})
		}
	}
	return out
}

// run is Kyverno's evaluatePSS.
func (c *Checker) run(meta *metav1.ObjectMeta, spec *corev1.PodSpec) []Result {
	var out []Result
	for _, ch := range c.checks {
		r := ch.check(meta, spec)
		if !r.Allowed {
			out = append(out, Result{ID: ch.id, Result: r})
		}
	}
	return out
}

// check runs ch as Kyverno does, with field errors. A check that passes
// has none, and building their paths costs more than the check itself:
// the check runs first without them, and again with them when it fails
// (field errors only add ErrList to the result, TestFieldErrorsAddOnly).
func (ch check) check(meta *metav1.ObjectMeta, spec *corev1.PodSpec) policy.CheckResult {
	if r := ch.fn(meta, spec); r.Allowed {
		return r
	}
	return ch.fn(meta, spec, fieldErrors...)
}

// Exempt removes from failed the field errors the exclusions cover, as
// Kyverno's ApplyPodSecurityExclusion does; checks left without errors
// are dropped. Unlike Kyverno, whose result order then follows Go's map
// order, the remaining checks keep their order. failed is modified, the
// field error lists it points to are not: a list that loses errors is
// replaced by a copy.
func (c *Checker) Exempt(failed []Result, excludes []Exclude, pod *corev1.Pod) []Result {
	for _, ex := range excludes {
		// Only the failed checks of the excluded control can lose errors:
		// run those alone, and nothing when there are none.
		ids := exemptable(failed, ex)
		if len(ids) == 0 {
			continue
		}
		if len(ex.Images) == 0 {
			// Pod-level: the pod without its containers. The checks only
			// read the pod, so a shallow copy with its own container
			// lists stands for Kyverno's DeepCopy.
			podSpec := pod.Spec
			podSpec.Containers = []corev1.Container{{Name: "fake"}}
			podSpec.InitContainers = nil
			podSpec.EphemeralContainers = nil
			failed = exempt(failed, c.runOnly(&pod.ObjectMeta, &podSpec, ids), ex, pod, nil, false)
			continue
		}
		matching := matchingContainers(ex.Images, pod)
		failed = exempt(failed, c.runOnly(&matching.ObjectMeta, &matching.Spec, ids), ex, pod, matching, true)
	}
	return failed
}

// exemptable returns the IDs of the failed checks that belong to the
// control ex excludes: exempt ignores the results of other checks.
func exemptable(failed []Result, ex Exclude) []string {
	var ids []string
	for _, id := range controlIDs[ex.ControlName] {
		for _, r := range failed {
			if r.ID == id {
				ids = append(ids, id)
				break
			}
		}
	}
	return ids
}

// runOnly is run restricted to the checks with the given IDs.
func (c *Checker) runOnly(meta *metav1.ObjectMeta, spec *corev1.PodSpec, ids []string) []Result {
	var out []Result
	for _, ch := range c.checks {
		if !slices.Contains(ids, ch.id) {
			continue
		}
		r := ch.fn(meta, spec, fieldErrors...)
		if !r.Allowed {
			out = append(out, Result{ID: ch.id, Result: r})
		}
	}
	return out
}

// matchingContainers is the pod with only the containers whose image
// matches one of images (Kyverno's GetPodWithMatchingContainers).
func matchingContainers(images []string, pod *corev1.Pod) *corev1.Pod {
	out := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}}
	for _, ct := range pod.Spec.Containers {
		if match.AnyWildcard(images, ct.Image) {
			out.Spec.Containers = append(out.Spec.Containers, ct)
		}
	}
	for _, ct := range pod.Spec.InitContainers {
		if match.AnyWildcard(images, ct.Image) {
			out.Spec.InitContainers = append(out.Spec.InitContainers, ct)
		}
	}
	for _, ct := range pod.Spec.EphemeralContainers {
		if match.AnyWildcard(images, ct.Image) {
			out.Spec.EphemeralContainers = append(out.Spec.EphemeralContainers, ct)
		}
	}
	return out
}

var (
	regexIndex = regexp.MustCompile(`\d+`)
	regexWord  = regexp.MustCompile(`[a-zA-Z]+`)
)

// exempt is Kyverno's exemptExclusions: every field error of the excluded
// pod (or containers) that the exclusion covers removes the same field
// error (same field, indexes replaced by *, and for containers the same
// container name) from the failed checks.
func exempt(failed, excluded []Result, ex Exclude, pod, matching *corev1.Pod, containerLevel bool) []Result {
	byID := make(map[string]int, len(failed))
	for i, r := range failed {
		byID[r.ID] = i
	}
	removed := make([]bool, len(failed))
	// copied marks the results whose error list is already this call's
	// own copy.
	copied := make([]bool, len(failed))
	for _, exr := range excluded {
		for _, id := range controlIDs[ex.ControlName] {
			if exr.ID != id || exr.Result.ErrList == nil {
				continue
			}
			for _, exErr := range *exr.Result.ErrList {
				var exContainer corev1.Container
				exField, exIdx, exType, isContainerField := errorField(exErr.Field, containerLevel)
				if isContainerField {
					exContainer = containerAt(matching, exIdx[0], exType)
				}
				if ex.RestrictedField != "" && exField != ex.RestrictedField {
					continue
				}
				if len(ex.Values) != 0 && !allMatch(ex.Values, badValues(exErr)) {
					continue
				}
				i, ok := byID[id]
				if !ok || removed[i] || failed[i].Result.ErrList == nil {
					continue
				}
				list := failed[i].Result.ErrList
				for idx, defErr := range *list {
					if !matchesExcluded(defErr, containerLevel, exField, exContainer, pod) {
						continue
					}
					if !copied[i] {
						l := slices.Clone(*list)
						list = &l
						failed[i].Result.ErrList = list
						copied[i] = true
					}
					removeAt(list, idx)
					break
				}
				if len(*list) == 0 {
					removed[i] = true
				}
			}
		}
	}
	out := failed[:0]
	for i, r := range failed {
		if !removed[i] {
			out = append(out, r)
		}
	}
	return out
}

// matchesExcluded reports whether the field error defErr of the pod is
// the one of the excluded pod or containers: the same field (indexes
// replaced by *) and, for a container field, a container of the same
// name.
func matchesExcluded(defErr *field.Error, containerLevel bool, exField string, exContainer corev1.Container, pod *corev1.Pod) bool {
	defField, defIdx, defType, isDefContainer := errorField(defErr.Field, containerLevel)
	if isDefContainer {
		return exField == defField && exContainer.Name == containerAt(pod, defIdx[0], defType).Name
	}
	return exField == defField
}

func allMatch(patterns, values []string) bool {
	for _, v := range values {
		if !match.AnyWildcard(patterns, v) {
			return false
		}
	}
	return true
}

// badValues is Kyverno's extractBadValues.
func badValues(e *field.Error) []string {
	switch v := e.BadValue.(type) {
	case string:
		if v == "" {
			return nil
		}
		return []string{v}
	case bool:
		return []string{strconv.FormatBool(v)}
	case int:
		return []string{strconv.Itoa(v)}
	case []string:
		return v
	}
	return nil
}

// removeAt removes element i by moving the last one into its place, as
// Kyverno does (the order of the remaining errors changes with it).
func removeAt(s *field.ErrorList, i int) {
	(*s)[i] = (*s)[len(*s)-1]
	*s = (*s)[:len(*s)-1]
}

// parseField is Kyverno's parseField: the field with indexes replaced by
// *, its indexes, and its second word, which names the container list for
// container fields.
// errorField is the field of a field error as exclusions compare it: its
// path with indexes replaced by *, and at container level also its
// indexes, the kind of container list and whether it is a container's.
func errorField(f string, containerLevel bool) (string, []int, string, bool) {
	if !containerLevel {
		return regexIndex.ReplaceAllString(f, "*"), nil, "", false
	}
	return parseField(f)
}

func parseField(f string) (string, []int, string, bool) {
	idx := regexIndex.FindAllString(f, -1)
	words := regexWord.FindAllString(f, -1)
	field := regexIndex.ReplaceAllString(f, "*")
	indexes := make([]int, 0, len(idx))
	for _, m := range idx {
		n, _ := strconv.Atoi(m)
		indexes = append(indexes, n)
	}
	if len(words) < 2 {
		return field, indexes, "", false
	}
	kind := words[1]
	isContainer := (kind == "containers" || kind == "initContainers" || kind == "ephemeralContainers") && len(indexes) > 0
	return field, indexes, kind, isContainer
}

func containerAt(pod *corev1.Pod, i int, kind string) corev1.Container {
	if pod == nil || i < 0 {
		return corev1.Container{}
	}
	switch kind {
	case "containers":
		if i < len(pod.Spec.Containers) {
			return pod.Spec.Containers[i]
		}
	case "initContainers":
		if i < len(pod.Spec.InitContainers) {
			return pod.Spec.InitContainers[i]
		}
	case "ephemeralContainers":
		if i < len(pod.Spec.EphemeralContainers) {
			return corev1.Container(pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		}
	}
	return corev1.Container{}
}

// Message is Kyverno's text for failed checks of a resource of kind
// (FormatChecksPrint after convertChecks): field paths are rewritten for
// pod controllers. failed is not modified: its field errors may be
// shared with other rules evaluating the same pod (Memo), and Kyverno
// rewrites the paths of each rule's own results once.
func Message(failed []Result, kind string) string {
	var b strings.Builder
	b.Grow(256 * len(failed))
	writeChecks(&b, failed, kind)
	return b.String()
}

// FailMessage is Kyverno's message for the rule named rule that failed
// the checks of c: "Validation rule '<rule>' failed. It violates
// PodSecurity "<level>:<version>": " and the Message of failed.
func (c *Checker) FailMessage(rule string, failed []Result, kind string) string {
	var b strings.Builder
	b.Grow(80 + len(rule) + len(c.Level) + len(c.Version) + 256*len(failed))
	b.WriteString("Validation rule '")
	b.WriteString(rule)
	b.WriteString("' failed. It violates PodSecurity \"")
	b.WriteString(c.Level)
	b.WriteByte(':')
	b.WriteString(c.Version)
	b.WriteString("\": ")
	writeChecks(&b, failed, kind)
	return b.String()
}

// writeChecks writes the Message of failed.
func writeChecks(b *strings.Builder, failed []Result, kind string) {
	prefix := specPrefix(kind)
	for _, r := range failed {
		b.WriteString("(Forbidden reason: ")
		b.WriteString(r.Result.ForbiddenReason)
		b.WriteString(", field error list: [")
		if r.Result.ErrList != nil {
			list := *r.Result.ErrList
			for i, e := range list {
				writeFieldError(b, e, prefix)
				if i != len(list)-1 {
					b.WriteString(", ")
				}
			}
		}
		b.WriteString("])")
	}
}

// writeFieldError writes what FormatChecksPrint writes for e, with the
// field path of convertChecks: "%s is forbidden, forbidden values found:
// %+v" for a Forbidden error with a value (not ""), e.Error() otherwise.
func writeFieldError(b *strings.Builder, e *field.Error, prefix string) {
	badValue := true
	if s, ok := e.BadValue.(string); ok && s == "" {
		badValue = false
	}
	if e.Type == field.ErrorTypeForbidden && badValue {
		writeField(b, e.Field, prefix)
		b.WriteString(" is forbidden, forbidden values found: ")
		writeValue(b, e.BadValue)
		return
	}
	switch e.Type {
	case field.ErrorTypeRequired, field.ErrorTypeForbidden, field.ErrorTypeTooLong, field.ErrorTypeTooShort, field.ErrorTypeInternal:
		// Error() is "field: type" and ": detail" when there is one,
		// whatever the value.
		writeField(b, e.Field, prefix)
		b.WriteString(": ")
		b.WriteString(e.Type.String())
		if e.Detail != "" {
			b.WriteString(": ")
			b.WriteString(e.Detail)
		}
		return
	}
	c := *e
	c.Field = convertField(e.Field, prefix)
	b.WriteString(c.Error())
}

// writeValue writes v as fmt's %+v does.
func writeValue(b *strings.Builder, v any) {
	switch v := v.(type) {
	case string:
		b.WriteString(v)
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case int:
		b.WriteString(strconv.Itoa(v))
	case []string:
		b.WriteByte('[')
		for i, s := range v {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(s)
		}
		b.WriteByte(']')
	default:
		fmt.Fprintf(b, "%+v", v)
	}
}

// specPrefix is what convertChecks writes for "spec" in the field paths
// of a resource of kind ("" keeps "spec").
func specPrefix(kind string) string {
	switch kind {
	case "DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet", "ReplicationController":
		return "spec.template.spec"
	case "CronJob":
		return "spec.jobTemplate.spec.template.spec"
	}
	return ""
}

// convertField is Kyverno's convertChecks for one field path: "spec"
// becomes the pod template's spec in pod controllers (prefix), and
// "metadata" becomes spec.template.metadata for every kind (Pods
// included, as in Kyverno).
func convertField(f, prefix string) string {
	if prefix != "" {
		f = strings.ReplaceAll(f, "spec", prefix)
	}
	return strings.ReplaceAll(f, "metadata", "spec.template.metadata")
}

// writeField writes convertField(f, prefix) without building it.
// Neither word overlaps itself, the other or the text that replaces
// "spec", so one pass from the left finds the occurrences both
// strings.ReplaceAll calls replace.
func writeField(b *strings.Builder, f, prefix string) {
	for {
		i := strings.IndexAny(f, "sm")
		if i < 0 {
			b.WriteString(f)
			return
		}
		b.WriteString(f[:i])
		f = f[i:]
		switch {
		case prefix != "" && strings.HasPrefix(f, "spec"):
			b.WriteString(prefix)
			f = f[len("spec"):]
		case strings.HasPrefix(f, "metadata"):
			b.WriteString("spec.template.metadata")
			f = f[len("metadata"):]
		default:
			b.WriteByte(f[0])
			f = f[1:]
		}
	}
}
