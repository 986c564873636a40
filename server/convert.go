package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.yaml.in/yaml/v3"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/variables"
	"github.com/verdict-policy/verdict/engine/vpol"
	"github.com/verdict-policy/verdict/internal/jsonvalue"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

var operations = map[verdictv1.Operation]string{
	verdictv1.Operation_OPERATION_UNSPECIFIED: "CREATE",
	verdictv1.Operation_OPERATION_CREATE:      "CREATE",
	verdictv1.Operation_OPERATION_UPDATE:      "UPDATE",
	verdictv1.Operation_OPERATION_DELETE:      "DELETE",
	verdictv1.Operation_OPERATION_CONNECT:     "CONNECT",
}

// requestFromProto decodes the JSON payloads of req into an engine request.
// A payload that is not valid JSON is a *verdictv1.ValidationError naming
// the field.
func requestFromProto(req *verdictv1.EvaluateRequest) (*eval.Request, error) {
	out := &eval.Request{
		Operation:       operations[req.GetOperation()],
		Namespace:       req.GetNamespace(),
		NamespaceLabels: req.GetNamespaceLabels(),
		Subresource:     req.GetSubresource(),
		DryRun:          req.GetDryRun(),
		// generateExisting replay of an existing trigger (the scanner).
		GenerateExisting: req.GetGenerateExisting(),
		MutateExisting:   req.GetMutateExisting(),
	}
	if req.GetMode() == verdictv1.Mode_MODE_BACKGROUND {
		out.Mode = eval.Background
	}
	var err error
	if out.Object, err = decodeObject("object", req.GetObject()); err != nil {
		return nil, err
	}
	if out.OldObject, err = decodeObject("old_object", req.GetOldObject()); err != nil {
		return nil, err
	}
	if k := req.GetKind(); k != nil {
		out.Group, out.Version, out.Kind = k.GetGroup(), k.GetVersion(), k.GetKind()
	}
	if r := req.GetResource(); r != nil {
		out.ResourceGroup, out.ResourceVersion, out.Resource = r.GetGroup(), r.GetVersion(), r.GetResource()
	}
	if u := req.GetUserInfo(); u != nil {
		out.UserInfo = eval.UserInfo{Username: u.GetUsername(), UID: u.GetUid(), Groups: u.GetGroups()}
		if len(u.GetExtra()) > 0 {
			out.UserInfo.Extra = make(map[string][]string, len(u.GetExtra()))
			for k, v := range u.GetExtra() {
				out.UserInfo.Extra[k] = v.GetValues()
			}
		}
		out.Roles, out.ClusterRoles = u.GetRoles(), u.GetClusterRoles()
	}
	if vars := req.GetVariables(); len(vars) > 0 {
		out.Variables = make(map[string]any, len(vars))
		for k, raw := range vars {
			if _, err := variables.SplitName(k); err != nil {
				return nil, fieldError(fmt.Sprintf("variables[%q]", k), "not a dotted variable name: %v", err)
			}
			v, err := jsonvalue.Decode(raw)
			if err != nil {
				return nil, fieldError(fmt.Sprintf("variables[%q]", k), "not JSON: %v", err)
			}
			out.Variables[k] = v
		}
	}
	return out, nil
}

// decodeObject decodes a JSON object; numbers become float64, as the
// engine reads them from YAML. b is a field of a decoded request, which
// owns its bytes (protobuf-go copies them out of gRPC's buffer) and never
// changes them: the object's strings share them.
func decodeObject(field string, b []byte) (map[string]any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	m, err := jsonvalue.DecodeObjectShared(b)
	if err != nil {
		return nil, fieldError(field, "not a JSON object: %v", err)
	}
	return m, nil
}

var (
	results = map[eval.Status]verdictv1.Result{
		eval.StatusPass:  verdictv1.Result_RESULT_PASS,
		eval.StatusFail:  verdictv1.Result_RESULT_FAIL,
		eval.StatusWarn:  verdictv1.Result_RESULT_WARN,
		eval.StatusError: verdictv1.Result_RESULT_ERROR,
		eval.StatusSkip:  verdictv1.Result_RESULT_SKIP,
	}
	ruleTypes = map[eval.RuleType]verdictv1.RuleType{
		eval.RuleValidation:  verdictv1.RuleType_RULE_TYPE_VALIDATION,
		eval.RuleMutation:    verdictv1.RuleType_RULE_TYPE_MUTATION,
		eval.RuleGeneration:  verdictv1.RuleType_RULE_TYPE_GENERATION,
		eval.RuleImageVerify: verdictv1.RuleType_RULE_TYPE_IMAGE_VERIFY,
	}
)

// policyResults are the results of one policy, in evaluation order.
type policyResults struct {
	policy  *policy.Policy
	results []*eval.RuleResult
}

// groupResults splits results by policy, in the order policies first
// appear in results. The engine returns the results of the mutate rules of
// every policy, then of the validate rules, then of the generate rules, so
// the results of one policy are not always adjacent. The groups point into
// results and share one backing array.
func groupResults(policies []*policy.Policy, results []eval.RuleResult) []policyResults {
	if len(results) == 0 {
		return nil
	}
	n := min(len(policies), len(results))
	out := make([]policyResults, 0, n)
	group := make([]int, len(results))
	counts := make([]int, 0, n)
	// groupOf[i] is 1 + the group of policies[i] (0: none yet). Results
	// come in the order of policies, phase after phase: the search for a
	// result's policy starts where the previous one was found.
	groupOf := make([]int, len(policies))
	last, cursor := -1, 0
	for j := range results {
		r := &results[j]
		if last < 0 || !samePolicy(out[last].policy, r) {
			last = -1
			for k := range policies {
				i := (cursor + k) % len(policies)
				if !samePolicy(policies[i], r) {
					continue
				}
				cursor = i
				if groupOf[i] == 0 {
					out = append(out, policyResults{policy: policies[i]})
					counts = append(counts, 0)
					groupOf[i] = len(out)
				}
				last = groupOf[i] - 1
				break
			}
		}
		// A result of a policy that was not evaluated cannot happen; it
		// is dropped (-1) rather than misattributed.
		group[j] = last
		if last >= 0 {
			counts[last]++
		}
	}
	backing := make([]*eval.RuleResult, 0, len(results))
	for i, n := range counts {
		out[i].results = backing[len(backing) : len(backing) : len(backing)+n]
		backing = backing[:len(backing)+n]
	}
	for j := range results {
		if g := group[j]; g >= 0 {
			out[g].results = append(out[g].results, &results[j])
		}
	}
	return out
}

func samePolicy(p *policy.Policy, r *eval.RuleResult) bool {
	return p.Name() == r.Policy && p.Namespace() == r.PolicyNamespace
}

// responseToProto builds the response: the decision, Kyverno's message and
// warnings, the results and the versions of the policies that gave them,
// the patch and what generate and mutate-existing rules ask the caller to
// write.
func responseToProto(req *eval.Request, groups []policyResults, res *eval.Response) (*verdictv1.EvaluateResponse, error) {
	resp := &verdictv1.EvaluateResponse{Allowed: true, JsonPatch: res.Patch}
	if err := intentsToProto(res, resp); err != nil {
		return nil, err
	}
	resp.Policies = make([]*verdictv1.PolicyVersion, len(groups))
	for i, g := range groups {
		resp.Policies[i] = versionOf(g.policy)
	}
	// The results of a response are allocated together and filled in
	// place.
	rules := make([]verdictv1.RuleResult, len(res.Results))
	resp.Results = make([]*verdictv1.RuleResult, len(res.Results))
	for i := range res.Results {
		r, out := &res.Results[i], &rules[i]
		resp.Results[i] = out
		fillRuleResult(out, r)
	}
	if req.Mode == eval.Background {
		return resp, nil
	}
	denials, vpWarnings := validatingDecision(groups)
	if msg := mutatingDecision(req, groups); msg != "" {
		denials = append(denials, msg)
		resp.JsonPatch = nil
	}
	if blocked(groups) {
		resp.Allowed = false
		resp.Message = blockedMessage(req, groups)
	}
	if len(denials) > 0 {
		resp.Allowed = false
		if resp.Message != "" {
			denials = append([]string{resp.Message}, denials...)
		}
		resp.Message = strings.Join(denials, "; ")
	}
	if resp.Allowed {
		resp.Warnings = warnings(groups)
	}
	resp.Warnings = append(resp.Warnings, vpWarnings...)
	return resp, nil
}

// validatingDecision is Kyverno's admission decision for the
// ValidatingPolicies and ImageValidatingPolicies of groups
// (webhooks/resource/vpol, webhooks/resource/ivpol): a policy whose
// validationActions hold Deny denies the request with "Policy NAME
// failed: MESSAGE" for each fail, and "Policy NAME error: MESSAGE" for
// each error (Kyverno joins them with "; "); one whose actions hold Warn
// adds the same texts as warnings; Audit only reports.
func validatingDecision(groups []policyResults) (denials, warnings []string) {
	for _, g := range groups {
		var actions []string
		switch {
		case g.policy.Validating != nil:
			actions = g.policy.Validating.Actions
		case g.policy.ImageValidating != nil:
			// Kyverno's ivpol webhook decides the same way
			// (webhooks/resource/ivpol).
			actions = g.policy.ImageValidating.Actions
		default:
			continue
		}
		deny, warn := slices.Contains(actions, vpol.ActionDeny), slices.Contains(actions, vpol.ActionWarn)
		if !deny && !warn {
			continue
		}
		for _, r := range g.results {
			var text string
			switch {
			// A fail of a policy annotated policies.kyverno.io/scored:
			// "false" is a warn in results and reports only: Kyverno's
			// webhook decides on the fail.
			case r.Status == eval.StatusFail, r.Status == eval.StatusWarn && !r.Scored:
				text = fmt.Sprintf("Policy %s failed: %s", g.policy.Name(), r.Message)
			case r.Status == eval.StatusError:
				text = fmt.Sprintf("Policy %s error: %s", g.policy.Name(), r.Message)
			default:
				continue
			}
			if deny {
				denials = append(denials, text)
			}
			if warn {
				warnings = append(warnings, text)
			}
		}
	}
	return denials, warnings
}

// mutatingDecision is Kyverno's admission decision for the
// MutatingPolicies of groups (webhooks/resource/mpol): an error result of
// a policy whose failurePolicy is Fail (the default) denies the request
// with "Resource: NAMESPACE/NAME, Kind: KIND, Errors: [Policy NAME:
// MESSAGE ...]"; one whose failurePolicy is Ignore lets it in. It returns
// "" when nothing denies. The request then gets no patch, as in Kyverno.
func mutatingDecision(req *eval.Request, groups []policyResults) string {
	var errs []string
	for _, g := range groups {
		mp := g.policy.Mutating
		if mp == nil || mp.FailurePolicyIgnore {
			continue
		}
		for _, r := range g.results {
			if r.Status == eval.StatusError {
				errs = append(errs, fmt.Sprintf("Policy %s: %s", g.policy.Name(), r.Message))
			}
		}
	}
	if len(errs) == 0 {
		return ""
	}
	obj := req.Object
	if len(obj) == 0 {
		obj = req.OldObject
	}
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	ns, kind := req.Namespace, req.Kind
	if ns == "" {
		ns, _ = meta["namespace"].(string)
	}
	if kind == "" {
		kind, _ = obj["kind"].(string)
	}
	return fmt.Sprintf("Resource: %s/%s, Kind: %s, Errors: %v", ns, name, kind, errs)
}

// versions holds the PolicyVersion message of each policy version the
// server answered with, by content hash (which covers the policy's
// identity and spec): responses share them, as read-only messages, instead
// of each building its own. It is emptied when it reaches maxVersions
// entries (policies change rarely; inline policies are bounded by the
// compile cache).
var (
	versions   sync.Map // content hash -> *verdictv1.PolicyVersion
	versionsN  atomic.Int64
	versionsMu sync.Mutex
)

const maxVersions = 4096

// versionOf returns the shared PolicyVersion message of p.
func versionOf(p *policy.Policy) *verdictv1.PolicyVersion {
	if v, ok := versions.Load(p.Hash()); ok {
		return v.(*verdictv1.PolicyVersion)
	}
	v := &verdictv1.PolicyVersion{Kind: p.Kind(), Namespace: p.Namespace(), Name: p.Name(), ContentHash: p.Hash(), Background: p.Background}
	if versionsN.Add(1) > maxVersions {
		versionsMu.Lock()
		if versionsN.Load() > maxVersions {
			versions.Clear()
			versionsN.Store(1)
		}
		versionsMu.Unlock()
	}
	actual, _ := versions.LoadOrStore(p.Hash(), v)
	return actual.(*verdictv1.PolicyVersion)
}

// fillRuleResult sets the fields of out, a zero message, from r.
func fillRuleResult(out *verdictv1.RuleResult, r *eval.RuleResult) {
	out.Policy, out.PolicyNamespace, out.Rule = r.Policy, r.PolicyNamespace, r.Rule
	out.Type, out.Result = ruleTypes[r.Type], results[r.Status]
	out.Message, out.Category, out.Severity = r.Message, r.Category, r.Severity
	out.Scored, out.Properties, out.Enforce = r.Scored, r.Properties, r.Enforce
}

var generateActions = map[eval.GenerateAction]verdictv1.GenerateAction{
	eval.GenerateCreate: verdictv1.GenerateAction_GENERATE_ACTION_CREATE,
	eval.GenerateUpdate: verdictv1.GenerateAction_GENERATE_ACTION_UPDATE,
	eval.GenerateDelete: verdictv1.GenerateAction_GENERATE_ACTION_DELETE,
}

// intentsToProto adds the generate intents, generate failures and target
// patches of res to resp.
func intentsToProto(res *eval.Response, resp *verdictv1.EvaluateResponse) error {
	for _, g := range res.Generated {
		obj, err := json.Marshal(g.Object)
		if err != nil {
			return fmt.Errorf("generated resource of %s/%s: %w", g.Policy, g.Rule, err)
		}
		resp.Generates = append(resp.Generates, &verdictv1.GenerateIntent{
			Policy:          g.Policy,
			PolicyNamespace: g.PolicyNamespace,
			Rule:            g.Rule,
			Action:          generateActions[g.Action],
			Resource:        obj,
			Synchronize:     g.Synchronize,
			CloneSource:     g.Source,
		})
	}
	for _, g := range res.GenerateErrors {
		resp.GenerateFailures = append(resp.GenerateFailures, &verdictv1.GenerateFailure{
			Policy:          g.Policy,
			PolicyNamespace: g.PolicyNamespace,
			Rule:            g.Rule,
			Message:         g.Message,
		})
	}
	for _, tp := range res.Targets {
		target, err := json.Marshal(tp.Target)
		if err != nil {
			return fmt.Errorf("mutate target of %s/%s: %w", tp.Policy, tp.Rule, err)
		}
		resp.TargetPatches = append(resp.TargetPatches, &verdictv1.TargetPatch{
			Policy:          tp.Policy,
			PolicyNamespace: tp.PolicyNamespace,
			Rule:            tp.Rule,
			Target:          target,
			JsonPatch:       tp.Patch,
		})
	}
	return nil
}

// enforcing reports whether Kyverno treats p as an Enforce policy: its
// action, a rule's action, or one of their overrides is Enforce.
func enforcing(p *policy.Policy) bool {
	if p.Action == policy.Enforce || anyEnforce(p.Overrides) {
		return true
	}
	for _, r := range p.Rules {
		if r.Type == policy.Validate && (r.Action == policy.Enforce || anyEnforce(r.Overrides)) {
			return true
		}
	}
	return false
}

func anyEnforce(os []policy.ActionOverride) bool {
	for _, o := range os {
		if o.Action == policy.Enforce {
			return true
		}
	}
	return false
}

// failurePolicyFail reports whether p's spec.failurePolicy is Fail (the
// default).
func failurePolicyFail(p *policy.Policy) bool {
	fp := p.Document().Spec.FailurePolicy
	return fp == "" || strings.EqualFold(fp, "Fail")
}

// blocked decides as Kyverno's webhook does (webhooks/utils.BlockRequest
// over the responses of Enforce policies): a failed rule whose action is
// Enforce blocks; an error result blocks when one of the Enforce policies
// has failurePolicy Fail. ValidatingPolicies decide in
// validatingDecision.
func blocked(groups []policyResults) bool {
	failClosed, hasError := false, false
	for _, g := range groups {
		if g.policy.Validating != nil || g.policy.ImageValidating != nil || !enforcing(g.policy) {
			continue
		}
		if failurePolicyFail(g.policy) {
			failClosed = true
		}
		for _, r := range g.results {
			if r.Status == eval.StatusFail && r.Enforce {
				return true
			}
			if r.Status == eval.StatusError {
				hasError = true
			}
		}
	}
	return hasError && failClosed
}

// blockedMessage is Kyverno's GetBlockedMessages: the resource, then a YAML
// map of policy name to rule name to message, over the rules of Enforce
// policies that neither passed nor were skipped.
func blockedMessage(req *eval.Request, groups []policyResults) string {
	failures := map[string]map[string]string{}
	for _, g := range groups {
		if g.policy.Validating != nil || g.policy.ImageValidating != nil || !enforcing(g.policy) {
			continue
		}
		rules := map[string]string{}
		for _, r := range g.results {
			if r.Status != eval.StatusPass && r.Status != eval.StatusSkip {
				rules[r.Rule] = r.Message
			}
		}
		if len(rules) > 0 {
			failures[g.policy.Name()] = rules
		}
	}
	if len(failures) == 0 {
		return ""
	}
	body, ok := encodeFailures(failures)
	if !ok {
		body = yamlFailures(failures)
	}
	return fmt.Sprintf("\n\nresource %s was blocked due to the following policies \n\n%s", resourceName(req), body)
}

// yamlFailures is Kyverno's encoding of the failures with yaml.v3.
func yamlFailures(failures map[string]map[string]string) []byte {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	err := enc.Encode(failures)
	if cerr := enc.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return []byte(fmt.Sprintf("failed to encode failures: %v\n", err))
	}
	return bytes.TrimPrefix(buf.Bytes(), []byte("---\n"))
}

// resourceName is Kind/namespace/name of the request's resource.
func resourceName(req *eval.Request) string {
	obj := req.Object
	if len(obj) == 0 {
		obj = req.OldObject
	}
	kind, _ := obj["kind"].(string)
	meta, _ := obj["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	name, _ := meta["name"].(string)
	return kind + "/" + ns + "/" + name
}

// warnings are Kyverno's admission warnings (webhooks/utils.GetWarningMessages):
// "policy NAME.RULE: MESSAGE" for every result that is not a skip, of the
// policies with spec.emitWarning: true.
func warnings(groups []policyResults) []string {
	var out []string
	for _, g := range groups {
		ew := g.policy.Document().Spec.EmitWarning
		if ew == nil || !*ew {
			continue
		}
		for _, r := range g.results {
			if r.Status != eval.StatusSkip {
				out = append(out, fmt.Sprintf("policy %s.%s: %s", g.policy.Name(), r.Rule, r.Message))
			}
		}
	}
	return out
}

// scanScope is the API form of a policy's scope of background work (nil
// when it selects nothing).
func scanScope(s policy.Scope) *verdictv1.ScanScope {
	if len(s.Rules) == 0 && len(s.Kinds) == 0 {
		return nil
	}
	out := &verdictv1.ScanScope{Rules: s.Rules}
	for _, k := range s.Kinds {
		out.Resources = append(out.Resources, &verdictv1.ResourceSelector{Group: k.Group, Version: k.Version, Kind: k.Kind, Resource: k.Resource})
	}
	return out
}
