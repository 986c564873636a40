package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/verdict-policy/verdict/internal/testing/e2e"
)

// verdictWebhook returns a function that registers Verdict's proxy as
// the validating webhook of Pod creates (Kyverno registers its own).
func verdictWebhook(s *system) func(ctx context.Context, kc kubernetes.Interface, dir string) error {
	return func(ctx context.Context, kc kubernetes.Interface, dir string) error {
		ca, err := os.ReadFile(filepath.Join(dir, "verdict-ca.pem"))
		if err != nil {
			return err
		}
		url := s.url + "/validate/fail"
		fail := admissionregistrationv1.Fail
		none := admissionregistrationv1.SideEffectClassNone
		timeout := int32(10)
		cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "verdict-peer"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{
				Name:                    "validate.verdict.peer",
				ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca},
				Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}},
				FailurePolicy:           &fail,
				SideEffects:             &none,
				TimeoutSeconds:          &timeout,
				AdmissionReviewVersions: []string{"v1"},
			}},
		}
		_, err = kc.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{})
		return err
	}
}

// apiServerScenario creates Pods (dry run: the webhooks are called, etcd
// is not written) through the API server, o.apiConcurrency in flight, for
// o.duration; half of them pass. register, when not nil, registers the
// webhook first and the configuration is deleted at the end; when nil,
// the system registers its own and the scenario waits for it.
func apiServerScenario(ctx context.Context, r *runner, o options, cl *e2e.Cluster, s *system, register func(context.Context, kubernetes.Interface, string) error) []*result {
	cfg := rest.CopyConfig(cl.Config)
	cfg.QPS, cfg.Burst = -1, 0
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		r.Fatalf("%v", err)
	}
	if register != nil {
		if err := register(ctx, kc, r.dir); err != nil {
			r.Fatalf("webhook configuration: %v", err)
		}
		defer func() {
			_ = kc.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, "verdict-peer", metav1.DeleteOptions{})
		}()
	}
	var good, bad corev1.Pod
	if err := json.Unmarshal([]byte(podObject("good-pod", goodPodSpec)), &good); err != nil {
		r.Fatalf("%v", err)
	}
	if err := json.Unmarshal([]byte(podObject("bad-pod", badPodSpec)), &bad); err != nil {
		r.Fatalf("%v", err)
	}
	good.Name, bad.Name = "", ""
	good.GenerateName, bad.GenerateName = "good-", "bad-"
	// Wait until the webhook decides: the bad Pod is refused.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		_, err := kc.CoreV1().Pods(benchNamespace).Create(ctx, &bad, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && (apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)) {
			if _, err := kc.CoreV1().Pods(benchNamespace).Create(ctx, &good, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			r.Logf("%s: the API server does not call its webhook after 3 minutes (last: %v); no API server scenario", s.name, err)
			return nil
		}
		time.Sleep(time.Second)
	}
	pods := []*corev1.Pod{&good, &bad}
	res := measure(r, s, fmt.Sprintf("API server: Pod creates, %d in flight", o.apiConcurrency), func(rec *recorder) time.Duration {
		var next atomic.Int64
		startAt := time.Now().Add(o.warmup)
		stopAt := startAt.Add(o.duration)
		var wg sync.WaitGroup
		for range o.apiConcurrency {
			wg.Go(func() {
				for {
					i := int(next.Add(1)) % 2
					t0 := time.Now()
					if t0.After(stopAt) {
						return
					}
					_, err := kc.CoreV1().Pods(benchNamespace).Create(ctx, pods[i], metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
					allowed, msg := err == nil, ""
					if err != nil {
						msg = err.Error()
					}
					if err != nil && (apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)) {
						err = nil
					}
					if t1 := time.Now(); t1.After(startAt) && !t1.After(stopAt) {
						// kinds[0] is the passing Pod, kinds[1] the failing one.
						rec.add(t1.Sub(t0), i, allowed, msg, err)
					}
				}
			})
		}
		wg.Wait()
		return o.duration
	})
	return []*result{res}
}
