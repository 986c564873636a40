package eval_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/eval"
)

// caseFile is one file of the engine's case corpus in
// engine/testdata/cases/<area>/*.yaml: the executable specification of the
// engine's semantics.
type caseFile struct {
	Cases []testCase `json:"cases"`
}

type testCase struct {
	Note string `json:"note"`
	// Policy is one or more policy documents (YAML).
	Policy string `json:"policy"`
	// Resource is the object under evaluation.
	Resource map[string]any `json:"resource"`
	// Request holds the rest of the admission request.
	Request *caseRequest `json:"request,omitempty"`
	// ConfigMaps serves configMap context entries, keyed namespace/name.
	ConfigMaps map[string]map[string]any `json:"configMaps,omitempty"`
	// Exceptions are PolicyException documents (YAML) in force.
	Exceptions string `json:"exceptions,omitempty"`
	// Params are the params resources of validate.cel rules.
	Params []map[string]any `json:"params,omitempty"`
	// Want are the expected results, in order.
	Want []caseResult `json:"want"`
	// WantError is the expected compile error.
	WantError *caseError `json:"want_error,omitempty"`
	// Cluster, WantPatched, WantPatch, WantNoPatch, WantGenerated and
	// WantTargets are the objects and outputs of mutate and generate rules
	// (see caseOutputs in outputs_test.go).
	caseOutputs
	// The request and data of policies.kyverno.io kinds (see vpolCase in
	// vpol_cases_test.go).
	vpolCase
	// KyvernoCLI evaluates as Kyverno's CLI (eval.Options.KyvernoCLI;
	// ValidatingAdmissionPolicies, see vap_cases_test.go).
	KyvernoCLI bool `json:"kyvernoCLI,omitempty"`
}

type caseRequest struct {
	Operation       string            `json:"operation,omitempty"`
	OldObject       map[string]any    `json:"oldObject,omitempty"`
	NamespaceLabels map[string]string `json:"namespaceLabels,omitempty"`
	UserInfo        eval.UserInfo     `json:"userInfo,omitempty"`
	Roles           []string          `json:"roles,omitempty"`
	ClusterRoles    []string          `json:"clusterRoles,omitempty"`
	Background      bool              `json:"background,omitempty"`
	// GenerateExisting replays the resource as an existing trigger.
	GenerateExisting bool `json:"generateExisting,omitempty"`
	// MutateExisting replays the resource as an existing trigger of
	// mutateExistingOnPolicyUpdate rules.
	MutateExisting bool           `json:"mutateExisting,omitempty"`
	Variables      map[string]any `json:"variables,omitempty"`
	// RuleVariables are keyed "policy/rule".
	RuleVariables map[string]map[string]any `json:"ruleVariables,omitempty"`
}

type caseResult struct {
	Policy  string `json:"policy"`
	Rule    string `json:"rule"`
	Result  string `json:"result"`
	Message string `json:"message,omitempty"`
	Enforce bool   `json:"enforce,omitempty"`
	// Properties are checked only when the case gives them.
	Properties map[string]string `json:"properties,omitempty"`
	// Path is the failed field of a MutatingPolicy's error.
	Path string `json:"path,omitempty"`
}

type caseError struct {
	Code string `json:"code"`
	Path string `json:"path"`
}

type mapLookup struct {
	eval.Lookup
	configMaps map[string]map[string]any
	params     []map[string]any
	cluster    []map[string]any // outputs_test.go
	// cli serves the params of ValidatingAdmissionPolicyBindings as
	// Kyverno's CLI finds them (vap_cases_test.go).
	cli bool
}

func (m mapLookup) ConfigMap(_ context.Context, namespace, name string) (map[string]any, error) {
	if cm, ok := m.configMaps[namespace+"/"+name]; ok {
		return cm, nil
	}
	return nil, eval.ErrNotFound
}

func loadCases(t *testing.T, root string) []testCase {
	t.Helper()
	var out []testCase
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var f caseFile
		if err := yaml.UnmarshalStrict(data, &f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, f.Cases...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func runCase(ctx context.Context, tc testCase) ([]caseResult, *eval.Response, error) {
	pols, err := casePolicies(tc) // vpol_cases_test.go
	if err != nil {
		return nil, nil, err
	}
	exceptions, err := caseExceptions(tc)
	if err != nil {
		return nil, nil, err
	}
	eng := eval.New(eval.Options{
		Lookup:     mapLookup{configMaps: tc.ConfigMaps, params: tc.Params, cluster: tc.Cluster, cli: tc.KyvernoCLI},
		Now:        func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
		CELData:    tc.vpolCase.sources(),
		KyvernoCLI: tc.KyvernoCLI,
	})
	req := &eval.Request{Object: tc.Resource, Exceptions: exceptions}
	if err := tc.vpolCase.request(tc.Note, req); err != nil {
		return nil, nil, err
	}
	if req.VAPBindings, err = caseBindings(tc); err != nil { // vap_cases_test.go
		return nil, nil, err
	}
	if r := tc.Request; r != nil {
		req.Operation = r.Operation
		req.OldObject = r.OldObject
		req.NamespaceLabels = r.NamespaceLabels
		req.UserInfo = r.UserInfo
		req.Roles = r.Roles
		req.ClusterRoles = r.ClusterRoles
		req.Variables = r.Variables
		for k, v := range r.RuleVariables {
			pol, rule, _ := strings.Cut(k, "/")
			if req.RuleVariables == nil {
				req.RuleVariables = map[eval.RuleKey]map[string]any{}
			}
			req.RuleVariables[eval.RuleKey{Policy: pol, Rule: rule}] = v
		}
		if r.Background {
			req.Mode = eval.Background
		}
		req.GenerateExisting = r.GenerateExisting
		req.MutateExisting = r.MutateExisting
	}
	resp := eng.Evaluate(ctx, pols, req)
	var got []caseResult
	for _, r := range resp.Results {
		got = append(got, caseResult{Policy: r.Policy, Rule: r.Rule, Result: string(r.Status), Message: r.Message, Enforce: r.Enforce, Properties: r.Properties, Path: r.Path})
	}
	return got, resp, nil
}

func errorOf(err error) *caseError {
	if err == nil {
		return nil
	}
	es := engine.As(err)
	if len(es) == 0 {
		return &caseError{Code: "not an engine error", Path: err.Error()}
	}
	return &caseError{Code: string(es[0].Code), Path: es[0].Path}
}

func TestCases(t *testing.T) {
	cases := loadCases(t, "../testdata/cases")
	if len(cases) == 0 {
		t.Fatal("no cases found")
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.Note] {
			t.Errorf("duplicate case note %q", tc.Note)
		}
		seen[tc.Note] = true
		t.Run(tc.Note, func(t *testing.T) {
			t.Parallel()
			got, resp, err := runCase(t.Context(), tc)
			if diff := cmp.Diff(tc.WantError, errorOf(err)); diff != "" {
				t.Fatalf("runCase(%s) error mismatch (-want +got):\n%s\nerror: %v", tc.Note, diff, err)
			}
			if resp != nil {
				checkOutputs(t, tc, resp)
			}
			// A case that gives no message does not check messages.
			want := tc.Want
			for i := range got {
				if i < len(want) && want[i].Message == "" {
					got[i].Message = ""
				}
				if i < len(want) && want[i].Properties == nil {
					got[i].Properties = nil
				}
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("runCase(%s) results mismatch (-want +got):\n%s", tc.Note, diff)
			}
		})
	}
}
