package podsecurity

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/verdict-policy/verdict/engine/kyverno"
)

// TestMemo evaluates checkers that share checks (and exclusions that
// remove field errors in place) against pods, with one Memo per pod in
// every order: the results must be those of Evaluate without a Memo.
func TestMemo(t *testing.T) {
	checkers := map[string]*kyverno.PodSecurity{
		"baseline":        {Level: "baseline", Version: "latest"},
		"baseline v1.0":   {Level: "baseline", Version: "v1.0"},
		"restricted":      {Level: "restricted", Version: "latest"},
		"restricted v1.0": {Level: "restricted", Version: "v1.0"},
		"restricted excluding capabilities of nginx": {Level: "restricted", Version: "latest", Exclude: []kyverno.PodSecurityStandard{
			{ControlName: "Capabilities", Images: []string{"nginx*"}},
			{ControlName: "Running as Non-root"},
		}},
		"baseline excluding host ports and host path": {Level: "baseline", Version: "latest", Exclude: []kyverno.PodSecurityStandard{
			{ControlName: "Host Ports", Images: []string{"*"}},
			{ControlName: "HostPath Volumes"},
		}},
	}
	compiled := map[string]*Checker{}
	var names []string
	for name, ps := range checkers {
		c, err := Compile(ps, "ps")
		if err != nil {
			t.Fatalf("Compile(%s) = %v", name, err)
		}
		compiled[name] = c
		names = append(names, name)
	}
	pods := []map[string]any{
		{"kind": "Pod", "metadata": map[string]any{"name": "ok"}, "spec": map[string]any{
			"securityContext": map[string]any{"runAsNonRoot": true, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
			"containers": []any{map[string]any{"name": "c", "image": "nginx", "securityContext": map[string]any{
				"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}}}},
		}},
		{"kind": "Pod", "metadata": map[string]any{"name": "bad"}, "spec": map[string]any{
			"hostNetwork": true,
			"volumes":     []any{map[string]any{"name": "d", "hostPath": map[string]any{"path": "/d"}}},
			"containers": []any{
				map[string]any{"name": "a", "image": "nginx:1", "ports": []any{map[string]any{"containerPort": 80.0, "hostPort": 80.0}},
					"securityContext": map[string]any{"privileged": true, "capabilities": map[string]any{"add": []any{"NET_ADMIN", "SYS_TIME"}}}},
				map[string]any{"name": "b", "image": "busybox", "securityContext": map[string]any{"capabilities": map[string]any{"add": []any{"NET_RAW"}}}},
			},
		}},
	}
	for _, obj := range pods {
		pod, err := PodOf(obj)
		if err != nil {
			t.Fatal(err)
		}
		// Each checker first, then every other one, on one memo.
		for _, first := range names {
			var m Memo
			order := append([]string{first}, names...)
			for _, name := range order {
				wantAllowed, want := compiled[name].Evaluate(pod)
				gotAllowed, got := compiled[name].EvaluateMemo(pod, &m)
				if gotAllowed != wantAllowed {
					t.Errorf("EvaluateMemo(%s, pod %s) after %s allowed = %v, want %v", name, pod.Name, first, gotAllowed, wantAllowed)
				}
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("EvaluateMemo(%s, pod %s) after %s (-want +got):\n%s", name, pod.Name, first, diff)
				}
			}
		}
	}
}

// TestExemptKeepsLists pins that Exempt replaces the error lists it
// removes errors from instead of changing them: with a Memo, the lists
// belong to every rule that evaluates the pod.
func TestExemptKeepsLists(t *testing.T) {
	c, err := Compile(&kyverno.PodSecurity{Level: "baseline", Version: "latest"}, "ps")
	if err != nil {
		t.Fatal(err)
	}
	pod, err := PodOf(map[string]any{"kind": "Pod", "metadata": map[string]any{"name": "p"}, "spec": map[string]any{
		"hostNetwork": true,
		"volumes":     []any{map[string]any{"name": "d", "hostPath": map[string]any{"path": "/d"}}},
		"containers": []any{
			map[string]any{"name": "a", "image": "nginx", "ports": []any{map[string]any{"containerPort": 80.0, "hostPort": 80.0}}},
			map[string]any{"name": "b", "image": "busybox", "ports": []any{map[string]any{"containerPort": 81.0, "hostPort": 81.0}}},
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var m Memo
	_, failed := c.EvaluateMemo(pod, &m)
	fields := func(rs []Result) map[string][]string {
		out := map[string][]string{}
		for _, r := range rs {
			for _, e := range *r.Result.ErrList {
				out[r.ID] = append(out[r.ID], e.Field)
			}
		}
		return out
	}
	want := fields(failed)
	if len(want["hostPorts"]) != 2 || len(want["hostPathVolumes"]) != 1 {
		t.Fatalf("EvaluateMemo() failed checks %v, want two host ports and a host path", want)
	}
	shared := slices.Clone(failed)
	exempted := c.Exempt(failed, []Exclude{{ControlName: "Host Ports", Images: []string{"nginx"}}, {ControlName: "HostPath Volumes"}}, pod)
	wantExempted := map[string][]string{"hostNamespaces": want["hostNamespaces"], "hostPorts": {"spec.containers[1].ports[0].hostPort"}}
	if diff := cmp.Diff(wantExempted, fields(exempted)); diff != "" {
		t.Errorf("Exempt() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, fields(shared)); diff != "" {
		t.Errorf("lists of the results given to Exempt() afterwards (-want +got):\n%s", diff)
	}
	_, again := c.EvaluateMemo(pod, &m)
	if diff := cmp.Diff(want, fields(again)); diff != "" {
		t.Errorf("EvaluateMemo() after Exempt() (-want +got):\n%s", diff)
	}
}
