package scanner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// DefaultFieldManager is the server-side apply field manager of the
// resources generateExisting creates.
const DefaultFieldManager = "verdict"

// RecordPrefix starts the annotation the scanner puts on a trigger once
// generateExisting was applied for it; the value is the policy's content
// hash. A trigger that carries the annotation with the policy's current
// hash is not replayed again.
const RecordPrefix = "generate-existing.verdict.io/"

// MutateRecordPrefix is RecordPrefix for mutateExisting: the annotation
// that records the policy version whose target patches were applied for a
// trigger.
const MutateRecordPrefix = "mutate-existing.verdict.io/"

// Replay names what is replayed for existing triggers.
type Replay int

// The replays, with their record annotations.
const (
	Generated Replay = iota // generateExisting (RecordPrefix)
	Mutated                 // mutateExistingOnPolicyUpdate (MutateRecordPrefix)
)

// RecordKey is the annotation that records on a trigger the version of p
// applied for it: RecordPrefix followed by the policy name (namespace_name
// for a Policy), shortened with a hash when longer than the 63 characters
// an annotation name may have.
func RecordKey(p *PolicyRef) string { return recordKey(RecordPrefix, p) }

func recordKey(prefix string, p *PolicyRef) string {
	name := p.Name
	if p.Namespace != "" {
		name = p.Namespace + "_" + p.Name
	}
	if len(name) > 63 {
		sum := sha256.Sum256([]byte(name))
		name = name[:46] + "-" + hex.EncodeToString(sum[:])[:16]
	}
	return prefix + name
}

func (what Replay) recordKey(p *PolicyRef) string {
	if what == Mutated {
		return recordKey(MutateRecordPrefix, p)
	}
	return recordKey(RecordPrefix, p)
}

// Generator applies what generateExisting rules generate for existing
// triggers: each resource by server-side apply (field manager "verdict",
// conflicts forced, as Kyverno's background controller overwrites what it
// generates), a clone source's label by a merge patch, a delete intent by
// a delete. Generated resources carry the labels the server put on them:
// Kyverno's app.kubernetes.io/managed-by and generate.kyverno.io/*, and
// kyverno.io/background-gen-rule: <rule>, so that
//
//	kubectl delete <kind> -A -l kyverno.io/background-gen-rule=<rule>
//
// removes them. Once every resource of a trigger and policy is written,
// the trigger is annotated with the policy's version (RecordKey), so that
// later scans do not apply it again until the policy changes; a trigger
// whose generation failed is not annotated and is tried again by the next
// scan.
type Generator struct {
	client       dynamic.Interface
	mapper       meta.RESTMapper
	fieldManager string
	log          *slog.Logger
	failed       func(Failure)
}

// GeneratorOptions configure a Generator.
type GeneratorOptions struct {
	// FieldManager of the server-side applies. Default "verdict".
	FieldManager string
	// Logger. Default: discard.
	Logger *slog.Logger
	// Failed is told of each generate or mutateExisting rule that failed
	// for a trigger, for Kyverno's PolicyError events
	// (internal/kubeevents). It must not wait. Optional.
	Failed func(Failure)
}

// Failure is a generateExisting or mutateExisting rule that failed.
type Failure struct {
	// Mutate is true for a mutateExisting rule, false for a generate rule.
	Mutate bool
	// PolicyKind, PolicyNamespace, PolicyName and Rule name the rule.
	PolicyKind, PolicyNamespace, PolicyName, Rule string
	// APIVersion, Kind, Namespace and Name are the trigger (generate) or
	// the target (mutateExisting): the object Kyverno's event is about.
	APIVersion, Kind, Namespace, Name string
	Err                               error
}

// fail tells GeneratorOptions.Failed of a failure of policy key's rule.
func (g *Generator) fail(mutate bool, kinds map[string]string, ns, name, rule string, obj *unstructured.Unstructured, trigger *Resource, err error) {
	if g.failed == nil {
		return
	}
	kind := kinds[policyKey(ns, name)]
	if kind == "" {
		kind = "ClusterPolicy"
		if ns != "" {
			kind = "Policy"
		}
	}
	f := Failure{Mutate: mutate, PolicyKind: kind, PolicyNamespace: ns, PolicyName: name, Rule: rule, Err: err}
	if obj != nil {
		f.APIVersion, f.Kind, f.Namespace, f.Name = obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace(), obj.GetName()
	} else {
		f.APIVersion, f.Kind, f.Namespace, f.Name = trigger.APIVersion, trigger.Kind, trigger.Namespace, trigger.Name
	}
	g.failed(f)
}

// policyKinds maps the policies of an answer to their kind.
func policyKinds(resp *verdictv1.EvaluateResponse) map[string]string {
	m := map[string]string{}
	for _, v := range resp.GetPolicies() {
		m[policyKey(v.GetNamespace(), v.GetName())] = v.GetKind()
	}
	return m
}

// NewGenerator returns a Generator that writes through c, mapping kinds to
// resources with mapper.
func NewGenerator(c dynamic.Interface, mapper meta.RESTMapper, opts GeneratorOptions) (*Generator, error) {
	if c == nil || mapper == nil {
		return nil, errors.New("generator: no client or REST mapper")
	}
	if opts.FieldManager == "" {
		opts.FieldManager = DefaultFieldManager
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Generator{client: c, mapper: mapper, fieldManager: opts.FieldManager, log: opts.Logger, failed: opts.Failed}, nil
}

// Applied reports whether trigger r was replayed (what) for p's current
// version.
func (g *Generator) Applied(r *Resource, p *PolicyRef, what Replay) bool {
	return p.Hash != "" && objectAnnotations(r.Object)[what.recordKey(p)] == p.Hash
}

// resourceClient returns the client of apiVersion/kind in namespace.
func (g *Generator) resourceClient(apiVersion, kind, namespace string) (dynamic.ResourceInterface, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	m, err := g.mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", apiVersion, kind, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return g.client.Resource(m.Resource).Namespace(namespace), nil
	}
	return g.client.Resource(m.Resource), nil
}

// Apply writes the generate intents of resp, the answer to a
// generateExisting replay of trigger for policies, then records on
// trigger the policies whose resources were all written. It returns the
// number of resources created or updated.
func (g *Generator) Apply(ctx context.Context, trigger *Resource, policies []*PolicyRef, resp *verdictv1.EvaluateResponse) (int, error) {
	failed := map[string]bool{}
	kinds := policyKinds(resp)
	var errs []error
	for _, f := range resp.GetGenerateFailures() {
		key := policyKey(f.GetPolicyNamespace(), f.GetPolicy())
		failed[key] = true
		errs = append(errs, fmt.Errorf("policy %s rule %s: %s", key, f.GetRule(), f.GetMessage()))
		g.fail(false, kinds, f.GetPolicyNamespace(), f.GetPolicy(), f.GetRule(), nil, trigger, errors.New(f.GetMessage()))
	}
	n := 0
	for _, in := range resp.GetGenerates() {
		key := policyKey(in.GetPolicyNamespace(), in.GetPolicy())
		wrote, err := g.write(ctx, in)
		if err != nil {
			failed[key] = true
			errs = append(errs, fmt.Errorf("policy %s rule %s: %w", key, in.GetRule(), err))
			g.fail(false, kinds, in.GetPolicyNamespace(), in.GetPolicy(), in.GetRule(), nil, trigger, err)
			continue
		}
		if wrote {
			n++
		}
	}
	// Record the policies that generated for the trigger (a pass result
	// of a generate rule) and did not fail, at the version the server
	// used.
	passed := map[string]bool{}
	for _, r := range resp.GetResults() {
		if r.GetType() == verdictv1.RuleType_RULE_TYPE_GENERATION && r.GetResult() == verdictv1.Result_RESULT_PASS {
			passed[policyKey(r.GetPolicyNamespace(), r.GetPolicy())] = true
		}
	}
	versions := map[string]string{}
	for _, v := range resp.GetPolicies() {
		versions[policyKey(v.GetNamespace(), v.GetName())] = v.GetContentHash()
	}
	record := map[string]any{}
	for _, p := range policies {
		key := p.Key()
		if !passed[key] || failed[key] {
			continue
		}
		hash := versions[key]
		if hash == "" {
			hash = p.Hash
		}
		record[RecordKey(p)] = hash
	}
	if len(record) > 0 {
		if err := g.record(ctx, trigger, record); err != nil {
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}

func policyKey(namespace, name string) string {
	if namespace != "" {
		return namespace + "/" + name
	}
	return name
}

// write carries out one generate intent.
func (g *Generator) write(ctx context.Context, in *verdictv1.GenerateIntent) (bool, error) {
	var obj map[string]any
	if err := json.Unmarshal(in.GetResource(), &obj); err != nil {
		return false, fmt.Errorf("generated resource: %w", err)
	}
	u := &unstructured.Unstructured{Object: obj}
	rc, err := g.resourceClient(u.GetAPIVersion(), u.GetKind(), u.GetNamespace())
	if err != nil {
		return false, err
	}
	name := u.GetName()
	switch {
	case in.GetCloneSource():
		// Only the clone-source label: the source belongs to others.
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": u.GetLabels()}})
		if err != nil {
			return false, err
		}
		if _, err := rc.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: g.fieldManager}); err != nil {
			return false, fmt.Errorf("label clone source %s: %w", name, err)
		}
		return false, nil
	case in.GetAction() == verdictv1.GenerateAction_GENERATE_ACTION_DELETE:
		err := rc.Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("delete %s %s: %w", u.GetKind(), name, err)
		}
		return false, nil
	}
	// Fields the API server owns are not part of an apply configuration.
	for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "managedFields", "generation", "selfLink"} {
		unstructured.RemoveNestedField(obj, "metadata", f)
	}
	delete(obj, "status")
	if _, err := rc.Apply(ctx, name, u, metav1.ApplyOptions{FieldManager: g.fieldManager, Force: true}); err != nil {
		return false, fmt.Errorf("apply %s %s/%s: %w", u.GetKind(), u.GetNamespace(), name, err)
	}
	g.log.Info("generated", "kind", u.GetKind(), "namespace", u.GetNamespace(), "name", name, "policy", in.GetPolicy(), "rule", in.GetRule())
	return true, nil
}

// ApplyTargets applies the target patches of resp, the answer to a
// mutateExisting replay of trigger for policies: each JSON Patch on its
// target (a JSON Patch, as Kyverno's background controller patches
// targets), then records on trigger the policies whose targets were all
// patched. It returns the number of targets patched.
func (g *Generator) ApplyTargets(ctx context.Context, trigger *Resource, policies []*PolicyRef, resp *verdictv1.EvaluateResponse) (int, error) {
	failed := map[string]bool{}
	kinds := policyKinds(resp)
	var errs []error
	for _, r := range resp.GetResults() {
		if r.GetType() == verdictv1.RuleType_RULE_TYPE_MUTATION && r.GetResult() == verdictv1.Result_RESULT_ERROR {
			key := policyKey(r.GetPolicyNamespace(), r.GetPolicy())
			failed[key] = true
			errs = append(errs, fmt.Errorf("policy %s rule %s: %s", key, r.GetRule(), r.GetMessage()))
			// Kyverno's words; the target is not known, so the event is
			// about the trigger.
			g.fail(true, kinds, r.GetPolicyNamespace(), r.GetPolicy(), r.GetRule(), nil, trigger,
				fmt.Errorf("failed to mutate existing resource, rule %s, response error: %s", r.GetRule(), r.GetMessage()))
		}
	}
	n := 0
	for _, tp := range resp.GetTargetPatches() {
		key := policyKey(tp.GetPolicyNamespace(), tp.GetPolicy())
		if err := g.patchTarget(ctx, tp); err != nil {
			failed[key] = true
			errs = append(errs, fmt.Errorf("policy %s rule %s: %w", key, tp.GetRule(), err))
			var target map[string]any
			_ = json.Unmarshal(tp.GetTarget(), &target) // a target that does not decode: the trigger
			var obj *unstructured.Unstructured
			if target != nil {
				obj = &unstructured.Unstructured{Object: target}
			}
			g.fail(true, kinds, tp.GetPolicyNamespace(), tp.GetPolicy(), tp.GetRule(), obj, trigger, err)
			continue
		}
		n++
	}
	versions := map[string]string{}
	for _, v := range resp.GetPolicies() {
		versions[policyKey(v.GetNamespace(), v.GetName())] = v.GetContentHash()
	}
	record := map[string]any{}
	for _, p := range policies {
		if failed[p.Key()] {
			continue
		}
		hash := versions[p.Key()]
		if hash == "" {
			hash = p.Hash
		}
		record[Mutated.recordKey(p)] = hash
	}
	if len(record) > 0 {
		if err := g.record(ctx, trigger, record); err != nil {
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}

// patchTarget applies one target's JSON Patch.
func (g *Generator) patchTarget(ctx context.Context, tp *verdictv1.TargetPatch) error {
	var target map[string]any
	if err := json.Unmarshal(tp.GetTarget(), &target); err != nil {
		return fmt.Errorf("target: %w", err)
	}
	u := &unstructured.Unstructured{Object: target}
	rc, err := g.resourceClient(u.GetAPIVersion(), u.GetKind(), u.GetNamespace())
	if err != nil {
		return err
	}
	if len(tp.GetJsonPatch()) == 0 || string(tp.GetJsonPatch()) == "[]" {
		return nil
	}
	if _, err := rc.Patch(ctx, u.GetName(), types.JSONPatchType, tp.GetJsonPatch(), metav1.PatchOptions{FieldManager: g.fieldManager}); err != nil {
		return fmt.Errorf("patch %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	g.log.Info("mutated existing", "kind", u.GetKind(), "namespace", u.GetNamespace(), "name", u.GetName(), "policy", tp.GetPolicy(), "rule", tp.GetRule())
	return nil
}

// record annotates trigger with the applied policy versions (a merge
// patch: other annotations stay as they are).
func (g *Generator) record(ctx context.Context, trigger *Resource, annotations map[string]any) error {
	rc, err := g.resourceClient(trigger.APIVersion, trigger.Kind, trigger.Namespace)
	if err != nil {
		return err
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return err
	}
	if _, err := rc.Patch(ctx, trigger.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: g.fieldManager}); err != nil {
		return fmt.Errorf("record on %s: %w", trigger.Ref(), err)
	}
	return nil
}
