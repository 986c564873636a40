package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// blockedTexts are names and messages whose YAML style is subtle.
var blockedTexts = []string{
	"validation error: Privileged mode is disallowed. The fields spec.containers[*].securityContext.privileged must be unset or set to `false`. rule privileged-containers failed at path /spec/containers/0/securityContext/privileged/",
	"validation error: Images must come from ghcr.io. rule autogen-validate-registries failed at path /spec/template/spec/containers/0/image/",
	"disallow-capabilities", "autogen-cronjob-require-drop-all", "rule10", "rule9", "rule09", "a1b", "a10b", "ab",
	"it's", "key: value", "key:value", "a #comment", "a#b", "#x", "-x", "- x", "?x", "? x", ":x", ": x", "x:",
	"---x", "...x", "x---", " leading", "trailing ", "[x]", "{x}", "x, y", "&x", "*x", "!x", "|x", ">x", "'x", "\"x", "%x", "@x", "`x",
	"true", "True", "yes", "no", "on", "off", "y", "n", "null", "~", "tru", "nope", "off-by-one", "yesterday",
	"0", "1.5", "-1", "+1", ".5", ".inf", "2024-01-01", "1:20", "12:30:45", "<<", "<x", "=", "x=y",
	"", "multi\nline", "tab\there", "héllo", "\x7f", "a  b", "a ' b", "''", "' '",
	"looooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooong-key",
}

// TestEncodeFailuresMatchesYAML compares the fast encoder with yaml.v3
// wherever it claims the input.
func TestEncodeFailuresMatchesYAML(t *testing.T) {
	fast := 0
	for _, policy := range blockedTexts {
		for _, rule := range blockedTexts[:12] {
			for _, msg := range blockedTexts {
				failures := map[string]map[string]string{policy: {rule: msg, "other-rule": "x"}, "zz-policy": {"r": "m"}}
				got, ok := encodeFailures(failures)
				if !ok {
					continue
				}
				fast++
				if want := yamlFailures(failures); string(got) != string(want) {
					t.Fatalf("encodeFailures(%q) differs from yaml.v3 (-want +got):\n%s", failures, cmp.Diff(string(want), string(got)))
				}
			}
		}
	}
	if fast == 0 {
		t.Fatal("encodeFailures took no input")
	}
}

// TestEncodeFailuresFastPath pins that Kyverno's usual messages do not
// fall back to yaml.v3.
func TestEncodeFailuresFastPath(t *testing.T) {
	failures := map[string]map[string]string{
		"disallow-privileged-containers": {"privileged-containers": blockedTexts[0]},
		"restrict-image-registries":      {"autogen-validate-registries": blockedTexts[1]},
	}
	if _, ok := encodeFailures(failures); !ok {
		t.Errorf("encodeFailures(%q) fell back to yaml.v3", failures)
	}
}

func FuzzEncodeFailures(f *testing.F) {
	for _, s := range blockedTexts[:20] {
		f.Add(s, "rule", s)
	}
	f.Fuzz(func(t *testing.T, policy, rule, msg string) {
		failures := map[string]map[string]string{policy: {rule: msg, rule + "2": msg + "'"}, msg: {policy: rule}}
		got, ok := encodeFailures(failures)
		if !ok {
			return
		}
		if want := yamlFailures(failures); string(got) != string(want) {
			t.Fatalf("encodeFailures(%q) differs from yaml.v3 (-want +got):\n%s", failures, cmp.Diff(string(want), string(got)))
		}
	})
}

func BenchmarkBlockedMessage(b *testing.B) {
	failures := map[string]map[string]string{
		"disallow-privileged-containers": {"privileged-containers": blockedTexts[0]},
		"restrict-image-registries":      {"autogen-validate-registries": blockedTexts[1]},
	}
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			encodeFailures(failures)
		}
	})
	b.Run("yaml.v3", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			yamlFailures(failures)
		}
	})
}
