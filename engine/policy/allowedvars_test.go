package policy_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/policy"
)

// TestCompileAllowedVariables: the messages are kyverno apply's (v1.19)
// for the same files ("Policies Skipped: 1. <name>: <message>").
func TestCompileAllowedVariables(t *testing.T) {
	tests := []struct {
		file string
		want []*engine.Error // Code, Path, Message
	}{
		{
			file: "badvar.yaml", // a misspelled variable, background off
			want: []*engine.Error{{Code: engine.CodeInvalidVariable, Path: "spec.rules[0].validate.message",
				Message: `policy contains invalid variables: variable substitution failed for rule check-name: variable reqest.object.metadata.name must match regex "request|serviceAccountName|serviceAccountNamespace|element|elementIndex|@|images|image|([a-z_0-9]+\()[^{}]" or patterns []`}},
		},
		{
			file: "bg.yaml", // background on, a configMap entry
			want: []*engine.Error{{Code: engine.CodeInvalidVariable, Path: "spec.rules[0].validate.message",
				Message: `policy contains invalid variables: variable substitution failed for rule r: variable cm.spec must match regex "request\.|element|elementIndex|@|images|images\.|image\.|([a-z_0-9]+\()[^{}]" or patterns [cm.data cm.metadata cm.data.* cm.metadata.*]`}},
		},
		{
			file: "tgt.yaml", // a target variable in the target's own fields
			want: []*engine.Error{{Code: engine.CodeInvalidVariable, Path: "spec.rules[0].mutate.targets[0].name",
				Message: `policy contains invalid variables: invalid variables defined at mutate.targets[0]: variable target.metadata.name must match regex "request\.|element|elementIndex|@|images|images\.|image\.|([a-z_0-9]+\()[^{}]" or patterns [v*]`}},
		},
		{
			file: "tgtw.yaml", // target variables allowed in the patch, w is not
			want: []*engine.Error{{Code: engine.CodeInvalidVariable, Path: "spec.rules[0].mutate.patchStrategicMerge.metadata.labels.a",
				Message: `policy contains invalid variables: variable substitution failed for rule r: variable w must match regex "request\.|element|elementIndex|@|images|images\.|image\.|target\.|([a-z_0-9]+\()[^{}]" or patterns [v*]`}},
		},
		{
			file: "fe.yaml", // foreach context entries and element (imgs matches img*)
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "allowedvars", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			_, err = policy.Compile(decode(t, string(b)))
			var got []*engine.Error
			for _, e := range engine.As(err) {
				got = append(got, &engine.Error{Code: e.Code, Path: e.Path, Message: e.Message})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Compile(%s) errors mismatch (-want +got):\n%s", tt.file, diff)
			}
		})
	}
}

// TestCompileAutogenProblemOnce: a problem of a rule is reported once, not
// again for each of its autogen copies.
func TestCompileAutogenProblemOnce(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "allowedvars", "badjp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = policy.Compile(decode(t, string(b)))
	var paths []string
	for _, e := range engine.As(err) {
		paths = append(paths, e.Path)
	}
	if diff := cmp.Diff([]string{"spec.rules[0].validate.deny.conditions.any[0].key"}, paths); diff != "" {
		t.Errorf("Compile(badjp.yaml) error paths mismatch (-want +got):\n%s", diff)
	}
}
