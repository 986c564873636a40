package client_test

import (
	"context"
	"fmt"
	"iter"
	"log"
	"net"
	"os"
	"path/filepath"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/engine/cases"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/server"
)

// exampleServer starts a decision server on a loopback port with the
// policy below, from a folder, and returns its address and a function that
// stops it.
func exampleServer() (addr string, stop func()) {
	dir, err := os.MkdirTemp("", "verdict-example")
	if err != nil {
		log.Fatal(err)
	}
	// The policy of engine/cases/policies/require-team-label.yaml: Pods
	// need the label team.
	policy := cases.RequireTeamLabel
	if err := os.WriteFile(filepath.Join(dir, "policy.yaml"), []byte(policy), 0o644); err != nil {
		log.Fatal(err)
	}
	srv, err := server.New(server.Options{Sources: []server.PolicySource{&server.FolderSource{Dir: dir}}})
	if err != nil {
		log.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Run(ctx, lis); err != nil {
			log.Print(err)
		}
	}()
	return lis.Addr().String(), func() {
		cancel()
		<-done
		os.RemoveAll(dir)
	}
}

func ExampleDial() {
	addr, stop := exampleServer()
	defer stop()

	// In a cluster the target is the headless Service of the decision
	// servers, e.g. "dns:///verdict.verdict-system.svc:9443": calls are
	// balanced over every replica. WaitForReady lets the first call wait
	// until the server has loaded its policies.
	c, err := client.Dial(addr, client.Options{WaitForReady: true})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	policies, err := c.ListPolicies(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range policies.GetPolicies() {
		fmt.Println(p.GetKind(), p.GetName(), "ready:", p.GetReady())
	}
	// Output:
	// ClusterPolicy require-team-label ready: true
}

func ExampleClient_EvaluateResource() {
	addr, stop := exampleServer()
	defer stop()
	c, err := client.Dial(addr, client.Options{WaitForReady: true})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	pod := map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   map[string]any{"name": "web", "namespace": "shop"},
		"spec":       map[string]any{"containers": []any{map[string]any{"name": "nginx", "image": "nginx:1.27"}}},
	}
	resp, err := c.EvaluateResource(context.Background(), pod, client.Operation(verdictv1.Operation_OPERATION_CREATE))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("allowed:", resp.GetAllowed())
	for _, r := range resp.GetResults() {
		fmt.Printf("%s/%s: %s %q\n", r.GetPolicy(), r.GetRule(), r.GetResult(), r.GetMessage())
	}
	// Output:
	// allowed: false
	// require-team-label/check-team: RESULT_FAIL "validation error: The label `team` is required. rule check-team failed at path /metadata/labels/"
}

func ExampleClient_Scan() {
	addr, stop := exampleServer()
	defer stop()
	c, err := client.Dial(addr, client.Options{WaitForReady: true})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// The items: any iterator, here five Pods of which the even ones carry
	// the team label. A scanner would list them from a cluster or files.
	items := func(yield func(client.Item) bool) {
		for i := range 5 {
			labels := map[string]any{}
			if i%2 == 0 {
				labels["team"] = "shop"
			}
			pod := map[string]any{
				"apiVersion": "v1",
				"kind":       "Pod",
				"metadata":   map[string]any{"name": fmt.Sprintf("web-%d", i), "namespace": "shop", "labels": labels},
				"spec":       map[string]any{"containers": []any{map[string]any{"name": "nginx", "image": "nginx:1.27"}}},
			}
			req, err := client.NewRequest(pod, client.Background())
			if err != nil {
				log.Fatal(err)
			}
			if !yield(client.Item{ID: fmt.Sprintf("shop/web-%d", i), Request: req}) {
				return
			}
		}
	}
	// Results come in the order of the items, with their ids.
	err = c.Scan(context.Background(), iter.Seq[client.Item](items), func(r client.Result) error {
		if r.Err != nil {
			return r.Err
		}
		for _, rr := range r.Response.GetResults() {
			fmt.Println(r.ID, rr.GetRule(), rr.GetResult())
		}
		return nil
	}, client.ScanOptions{BatchSize: 2})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// shop/web-0 check-team RESULT_PASS
	// shop/web-1 check-team RESULT_FAIL
	// shop/web-2 check-team RESULT_PASS
	// shop/web-3 check-team RESULT_FAIL
	// shop/web-4 check-team RESULT_PASS
}

func ExampleFieldViolations() {
	addr, stop := exampleServer()
	defer stop()
	c, err := client.Dial(addr, client.Options{WaitForReady: true})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// A policy sent with the request that does not compile: the error
	// names the field inside it.
	bad := []byte(`apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: bad}
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [ConfigMap]}}]}
    validate:
      message: "{{ request.object.metadata.name | }}"
      deny: {}
`)
	_, err = c.EvaluateResource(context.Background(), map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}, client.InlinePolicies(bad))
	for _, v := range client.FieldViolations(err) {
		fmt.Println(v.GetField(), v.GetReason())
	}
	// Output:
	// inline_policies.documents[0].spec.rules[0].validate.message invalid_variable
}
