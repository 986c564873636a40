package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// benchNamespace holds the reviews' objects.
const benchNamespace = "peer-bench"

// The four objects of the mix: a Pod and a Deployment that pass the
// restricted profile, and a Pod and a Deployment that fail it (privileged,
// host network, hostPath volume, added capability).
const (
	goodPodSpec = `{"securityContext":{"runAsNonRoot":true,"runAsUser":1000,"seccompProfile":{"type":"RuntimeDefault"}},
"containers":[{"name":"app","image":"ghcr.io/acme/api:2.4.1","ports":[{"containerPort":8080}],
"securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]},"runAsNonRoot":true},
"resources":{"requests":{"cpu":"100m","memory":"64Mi"},"limits":{"memory":"128Mi"}}},
{"name":"sidecar","image":"registry.k8s.io/pause:3.9","securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}}}],
"volumes":[{"name":"cache","emptyDir":{}}]}`
	badPodSpec = `{"hostNetwork":true,"containers":[{"name":"app","image":"nginx:1.27","ports":[{"containerPort":80,"hostPort":80}],
"securityContext":{"privileged":true,"capabilities":{"add":["NET_ADMIN"]}},
"volumeMounts":[{"name":"host","mountPath":"/host"}]},
{"name":"sidecar","image":"busybox:latest"}],
"volumes":[{"name":"host","hostPath":{"path":"/var/lib"}}]}`
)

type reviewKind struct {
	name    string
	allowed bool // Kyverno's decision for the restricted profile
	body    func(uid string) []byte
}

func podObject(name, spec string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":%q,"labels":{"app":%q}},"spec":%s}`,
		name, benchNamespace, name, spec)
}

func deploymentObject(name, spec string) string {
	return fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q,"namespace":%q,"labels":{"app":%q}},
"spec":{"replicas":2,"selector":{"matchLabels":{"app":%q}},"template":{"metadata":{"labels":{"app":%q}},"spec":%s}}}`,
		name, benchNamespace, name, name, name, spec)
}

// review is a CREATE AdmissionReview with the fields the API server sends.
func review(uid, group, version, kind, resource, name, object string) []byte {
	gvk := fmt.Sprintf(`{"group":%q,"version":%q,"kind":%q}`, group, version, kind)
	gvr := fmt.Sprintf(`{"group":%q,"version":%q,"resource":%q}`, group, version, resource)
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":%q,"kind":%s,"resource":%s,"requestKind":%s,"requestResource":%s,"name":%q,"namespace":%q,"operation":"CREATE","userInfo":{"username":"system:serviceaccount:%s:deployer","uid":"5b1f6c2e-0d7a-4c47-a3f5-5b5d3a7c9e10","groups":["system:serviceaccounts","system:serviceaccounts:%s","system:authenticated"]},"object":%s,"oldObject":null,"dryRun":false,"options":{"apiVersion":"meta.k8s.io/v1","kind":"CreateOptions"}}}`,
		uid, gvk, gvr, gvk, gvr, name, benchNamespace, benchNamespace, benchNamespace, object)
	return b.Bytes()
}

var kinds = []reviewKind{
	{"pod-pass", true, func(uid string) []byte {
		return review(uid, "", "v1", "Pod", "pods", "good-pod", podObject("good-pod", goodPodSpec))
	}},
	{"pod-fail", false, func(uid string) []byte {
		return review(uid, "", "v1", "Pod", "pods", "bad-pod", podObject("bad-pod", badPodSpec))
	}},
	{"deployment-pass", true, func(uid string) []byte {
		return review(uid, "apps", "v1", "Deployment", "deployments", "good-deploy", deploymentObject("good-deploy", goodPodSpec))
	}},
	{"deployment-fail", false, func(uid string) []byte {
		return review(uid, "apps", "v1", "Deployment", "deployments", "bad-deploy", deploymentObject("bad-deploy", badPodSpec))
	}},
}

// reviewSet is the bodies the load generator cycles through: each kind in
// turn, each body with its own uid.
type reviewSet struct {
	bodies [][]byte
	kind   []int
}

func newReviewSet(n int) *reviewSet {
	s := &reviewSet{}
	for i := range n {
		k := i % len(kinds)
		uid := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		s.bodies = append(s.bodies, kinds[k].body(uid))
		s.kind = append(s.kind, k)
	}
	return s
}

// client posts AdmissionReviews over HTTPS (HTTP/2, as the API server).
type client struct {
	hc   *http.Client
	path string // /validate/fail
}

func newClient(timeout time.Duration) *client {
	tr := &http.Transport{
		// Both webhooks serve self-signed certificates for 127.0.0.1; the
		// handshake costs the same with or without the check.
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 1024,
	}
	return &client{hc: &http.Client{Transport: tr, Timeout: timeout}, path: "/validate/fail"}
}

type admissionResponse struct {
	Response struct {
		UID     string `json:"uid"`
		Allowed bool   `json:"allowed"`
		Status  struct {
			Message string `json:"message"`
		} `json:"status"`
	} `json:"response"`
}

// post sends one review and returns whether it was allowed.
func (c *client) post(ctx context.Context, base string, body []byte) (bool, error) {
	allowed, _, err := c.postMessage(ctx, base, body)
	return allowed, err
}

// postMessage sends one review and returns whether it was allowed and
// the message of the answer's status.
func (c *client) postMessage(ctx context.Context, base string, body []byte) (bool, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+c.path, bytes.NewReader(body))
	if err != nil {
		return false, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return false, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return false, "", err
	}
	if resp.StatusCode != http.StatusOK {
		return false, "", fmt.Errorf("%s: %s", resp.Status, truncate(b, 200))
	}
	var r admissionResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return false, "", fmt.Errorf("response: %w: %s", err, truncate(b, 200))
	}
	return r.Response.Allowed, r.Response.Status.Message, nil
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// result is one scenario on one system.
type result struct {
	system, scenario string
	latencies        []time.Duration
	wrong            int // decisions that differ from Kyverno's expected one
	firstWrong       string
	exited           string // the process of the system that exited during the scenario
	errors           int
	firstErr         error
	dropped          int // open loop: arrivals not sent because maxInFlight were in flight
	elapsed          time.Duration
	cpu              float64 // CPU seconds of the system's processes
	peakRSS          int64
	load1            string
}

type recorder struct {
	mu  sync.Mutex
	res *result
}

func (r *recorder) add(d time.Duration, kind int, allowed bool, msg string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.res.errors++
		if r.res.firstErr == nil {
			r.res.firstErr = err
		}
		return
	}
	r.res.latencies = append(r.res.latencies, d)
	if allowed != kinds[kind].allowed {
		r.res.wrong++
		if r.res.firstWrong == "" {
			r.res.firstWrong = fmt.Sprintf("%s allowed=%t: %s", kinds[kind].name, allowed, truncate([]byte(msg), 300))
		}
	}
}

// closedLoop keeps n reviews in flight for warmup + d and counts the
// reviews that complete during d.
func closedLoop(ctx context.Context, c *client, base string, set *reviewSet, n int, warmup, d time.Duration, rec *recorder) time.Duration {
	var next atomic.Int64
	startAt := time.Now().Add(warmup)
	stopAt := startAt.Add(d)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) % len(set.bodies)
				t0 := time.Now()
				if t0.After(stopAt) || ctx.Err() != nil {
					return
				}
				allowed, msg, err := c.postMessage(ctx, base, set.bodies[i])
				// Counted when it completes inside the window, whenever
				// it started: with latencies longer than the warm-up,
				// counting by start would see only a few.
				if t1 := time.Now(); t1.After(startAt) && !t1.After(stopAt) {
					rec.add(t1.Sub(t0), set.kind[i], allowed, msg, err)
				}
			}
		})
	}
	wg.Wait()
	return d
}

// openLoop sends rate reviews a second, evenly spaced, for d (after
// warmup, not counted); a review's latency counts from its scheduled
// time. At most maxInFlight are outstanding; arrivals past that are
// counted as dropped.
func openLoop(ctx context.Context, c *client, base string, set *reviewSet, rate float64, maxInFlight int, warmup, d time.Duration, rec *recorder) time.Duration {
	interval := time.Duration(float64(time.Second) / rate)
	begin := time.Now()
	startAt := begin.Add(warmup)
	stopAt := startAt.Add(d)
	sem := make(chan struct{}, maxInFlight)
	var wg sync.WaitGroup
	for i := 0; ; i++ {
		at := begin.Add(time.Duration(i) * interval)
		if at.After(stopAt) || ctx.Err() != nil {
			break
		}
		if w := time.Until(at); w > 0 {
			time.Sleep(w)
		}
		select {
		case sem <- struct{}{}:
		default:
			if at.After(startAt) {
				rec.mu.Lock()
				rec.res.dropped++
				rec.mu.Unlock()
			}
			continue
		}
		k := i % len(set.bodies)
		wg.Go(func() {
			defer func() { <-sem }()
			allowed, msg, err := c.postMessage(ctx, base, set.bodies[k])
			if at.After(startAt) {
				rec.add(time.Since(at), set.kind[k], allowed, msg, err)
			}
		})
	}
	wg.Wait()
	return d
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p * float64(len(sorted)))
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

func (r *result) sortLatencies() { slices.Sort(r.latencies) }
