package eval

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/celrule"
	"github.com/verdict-policy/verdict/engine/internal/jsonconv"
	"github.com/verdict-policy/verdict/engine/ivpol"
	"github.com/verdict-policy/verdict/engine/jmespath"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/match"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vap"
	"github.com/verdict-policy/verdict/engine/variables"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// Engine evaluates compiled policies. It is safe for concurrent use; create
// one per process and share it.
type Engine struct {
	interp *jmespath.Interpreter
	lookup Lookup
	images ImageVerifier
	// maxSteps is Options.MaxSteps with its default (<= 0: no limit).
	maxSteps int64
	// parsed caches JMESPath expressions that only exist at evaluation
	// (jmesPath fields rendered from variables): their text can come from
	// request data.
	parsed parseCache[*jmespath.Query]
	// templates caches texts with variables built at evaluation (deny
	// messages joined from condition messages): policies come and go in a
	// long-lived engine.
	templates parseCache[*variables.Template]
	// celData and clock serve the policies.kyverno.io kinds (vpol.go, mpol.go).
	celData    kyvernocel.Sources
	applyTypes vpol.ApplyTypes
	clock      func() time.Time
	// kyvernoCLI is Options.KyvernoCLI (vap.go).
	kyvernoCLI bool
}

// maxParsed bounds each cache of what is parsed at evaluation
// (expressions, templates).
const maxParsed = 4096

// parseCache caches what is parsed at evaluation, by text. It stops
// growing at maxParsed entries; past them, get parses every new text
// again.
type parseCache[T any] struct {
	m sync.Map // string -> T
	n atomic.Int64
}

// get returns parse(text), from the cache when it holds it.
func (c *parseCache[T]) get(text string, parse func(string) (T, error)) (T, error) {
	if v, ok := c.m.Load(text); ok {
		return v.(T), nil
	}
	v, err := parse(text)
	if err != nil {
		return v, err
	}
	if c.n.Add(1) <= maxParsed {
		c.m.Store(text, v)
	}
	return v, nil
}

// New returns an Engine.
func New(opts Options) *Engine {
	e := &Engine{interp: jmespath.New(jmespath.Options{Now: opts.Now}), lookup: opts.Lookup}
	if e.lookup == nil {
		e.lookup = noLookup{}
	}
	e.images = opts.ImageVerifier
	if e.images == nil {
		e.images = noImageVerifier{}
	}
	e.celData, e.clock, e.applyTypes = opts.CELData, opts.Now, opts.ApplyTypes
	e.kyvernoCLI = opts.KyvernoCLI
	e.maxSteps = opts.MaxSteps
	if e.maxSteps == 0 {
		e.maxSteps = DefaultMaxSteps
	}
	return e
}

// now reads the engine's clock.
func (e *Engine) now() time.Time {
	if e.clock != nil {
		return e.clock()
	}
	return time.Now()
}

// evaluation is the state of one Evaluate call.
type evaluation struct {
	e   *Engine
	ctx context.Context
	// budget is the evaluation's step budget and deadline (budgetBuf,
	// or the budget of the evaluation this one is part of).
	budget        *engine.Budget
	budgetBuf     engine.Budget
	req           *Request
	base          map[string]any // the JMESPath root shared by all rules
	res           match.Resource
	oldRes        *match.Resource // set when the object is absent (DELETE)
	deleteRequest bool
	operation     string
	// cel is the CEL view of the request (celInput), built on first use.
	cel       *celrule.Input
	celErr    error
	celObject map[string]any
	// pod is the pod of podSecurity rules (podOf), built on first use.
	pod *podCache
	// vpIn is the request as ValidatingPolicies and MutatingPolicies see
	// it (vpolInput), for the object vpObject.
	vpIn *vpol.Input
	// ivVerifs are the images the ImageValidatingPolicies of the request
	// verified (ivpol.go), made on first use.
	ivVerifs *ivpol.Verifications
	// ivPending are the passing ImageValidatingPolicies whose
	// required check waits for the others (enforceRequired).
	ivPending []ivPending
	vpObject  map[string]any
	// vapIn is the resource as ValidatingAdmissionPolicies see it
	// (vapInput), for the object vapObject.
	vapIn     *vap.Input
	vapObject map[string]any
	// free holds the root scopes of finished rules for the next ones
	// (release): rules run one after another, so one or two are enough.
	free []*scope
	// freeChildren holds the child scopes of finished foreach loops of
	// validate rules, with their own maps (releaseChild).
	freeChildren []*scope
}

// Evaluate runs policies against one request, in order, and returns one
// result per rule that applied. It never fails: problems become error
// results of the rules they concern.
func (e *Engine) Evaluate(ctx context.Context, policies []*policy.Policy, req *Request) *Response {
	ev := e.newEvaluation(ctx, req)
	resp := &Response{}
	// Kyverno's order: the mutate rules of every policy, then validation
	// (of the mutated object), then generation (mutate.go, generate.go).
	ev.mutatePhase(policies, resp)
	ev.verifyImagesPhase(policies, resp) // verifyimages.go
	// About one result per policy: one allocation for most requests.
	resp.Results = slices.Grow(resp.Results, len(policies))
	for _, p := range policies {
		if ctx.Err() != nil || req.GenerateExisting || req.MutateExisting {
			break
		}
		resp.Results = ev.policy(p, resp.Results)
	}
	ev.enforceRequired(resp) // ivpol.go
	ev.generatePhase(policies, resp)
	ev.generatingPolicies(policies, resp) // gpol.go
	resp.Steps = ev.budget.Used()
	return resp
}

func (e *Engine) newEvaluation(ctx context.Context, req *Request) *evaluation {
	op := strings.ToUpper(req.Operation)
	if op == "" {
		op = "CREATE"
	}
	ev := &evaluation{e: e, ctx: ctx, req: req, operation: op, deleteRequest: op == "DELETE"}
	ev.budgetBuf.Reset(ctx, e.maxSteps)
	ev.budget = &ev.budgetBuf
	obj := req.Object
	if len(obj) == 0 {
		obj = nil
	}
	ev.res = resourceOf(req, obj)
	if obj == nil && len(req.OldObject) > 0 {
		old := resourceOf(req, req.OldObject)
		ev.oldRes = &old
	}
	ev.base = ev.baseDocument(obj)
	return ev
}

// resourceOf describes obj (or the request) for matching.
func resourceOf(req *Request, obj map[string]any) match.Resource {
	r := match.Resource{
		Subresource:     req.Subresource,
		NamespaceLabels: req.NamespaceLabels,
		Operation:       strings.ToUpper(req.Operation),
		Username:        req.UserInfo.Username,
		Groups:          req.UserInfo.Groups,
		Roles:           req.Roles,
		ClusterRoles:    req.ClusterRoles,
		Background:      req.Mode == Background,
	}
	if r.Operation == "" {
		r.Operation = "CREATE"
	}
	r.Group, r.Version, r.Kind = kyverno.ObjectGVK(obj)
	if req.Kind != "" {
		r.Group, r.Version, r.Kind = req.Group, req.Version, req.Kind
	}
	meta, _ := obj["metadata"].(map[string]any)
	r.Name, _ = meta["name"].(string)
	r.GenerateName, _ = meta["generateName"].(string)
	r.Namespace, _ = meta["namespace"].(string)
	if req.Namespace != "" {
		r.Namespace = req.Namespace
	}
	r.Labels = kyverno.StringMap(meta["labels"])
	r.Annotations = kyverno.StringMap(meta["annotations"])
	return r
}

// baseDocument builds the JMESPath root that every rule starts from: the
// admission request, the service account of the requester, and the
// request's Variables.
func (ev *evaluation) baseDocument(obj map[string]any) map[string]any {
	req := ev.req
	ns := ev.res.Namespace
	if ns == "" && ev.oldRes != nil {
		ns = ev.oldRes.Namespace
	}
	request := map[string]any{
		"operation": ev.operation,
		"namespace": ns,
		"userInfo":  userInfoDoc(req.UserInfo),
		"dryRun":    req.DryRun,
	}
	if obj != nil {
		request["object"] = obj
	} else {
		request["object"] = nil
	}
	if req.OldObject != nil {
		request["oldObject"] = req.OldObject
	} else {
		request["oldObject"] = nil
	}
	if req.Roles != nil {
		request["roles"] = jsonconv.Strings(req.Roles)
	}
	if req.ClusterRoles != nil {
		request["clusterRoles"] = jsonconv.Strings(req.ClusterRoles)
	}
	if ev.res.Kind != "" {
		request["kind"] = map[string]any{"group": ev.res.Group, "version": ev.res.Version, "kind": ev.res.Kind}
	}
	if req.Subresource != "" {
		request["subResource"] = req.Subresource
	}
	if ev.res.Name != "" {
		request["name"] = ev.res.Name
	}
	doc := map[string]any{"request": request}
	// Kyverno binds the service account only for a request with a user, so
	// without one (a background scan, the CLI without user info) the
	// variables are undefined.
	if req.UserInfo.Username != "" {
		doc["serviceAccountName"], doc["serviceAccountNamespace"] = serviceAccount(req.UserInfo.Username)
	}
	s := &scope{ev: ev, data: doc, owned: true}
	for k, v := range req.Variables {
		s.set(k, v)
	}
	return s.data
}

func userInfoDoc(u UserInfo) map[string]any {
	m := map[string]any{"username": u.Username}
	if u.UID != "" {
		m["uid"] = u.UID
	}
	if len(u.Groups) > 0 {
		m["groups"] = jsonconv.Strings(u.Groups)
	}
	if len(u.Extra) > 0 {
		extra := make(map[string]any, len(u.Extra))
		for k, v := range u.Extra {
			extra[k] = jsonconv.Strings(v)
		}
		m["extra"] = extra
	}
	return m
}

// serviceAccount splits system:serviceaccount:<ns>:<name> as Kyverno does.
func serviceAccount(username string) (name, namespace string) {
	const prefix = "system:serviceaccount:"
	if len(username) <= len(prefix) {
		return "", ""
	}
	parts := strings.Split(username[len(prefix):], ":")
	if len(parts) >= 2 {
		return parts[1], parts[0]
	}
	return "", ""
}

// newScope returns the root scope of rule r.
func (ev *evaluation) newScope(p *policy.Policy, r *policy.Rule) *scope {
	var s *scope
	if n := len(ev.free); n > 0 {
		s = ev.free[n-1]
		ev.free = ev.free[:n-1]
		// envv resolves through s itself and has the evaluation's
		// Delete: it stays valid.
		*s = scope{ev: ev, data: ev.base, envv: s.envv}
	} else {
		s = &scope{ev: ev, data: ev.base}
	}
	if vars := ev.req.RuleVariables[RuleKey{Policy: p.Name(), Rule: r.Name}]; len(vars) > 0 {
		s.ruleVars = vars
		for k, v := range vars {
			s.set(k, v)
		}
	}
	s.pending = s.buf[:0]
	if _, ok := ev.req.Variables["images"]; !ok {
		s.images = deferred{name: "images", matcher: imagesMatcher, load: loadImages}
		s.pending = append(s.pending, &s.images)
	}
	return s
}

// release hands back a root scope that no one holds any more, for a later
// newScope. Only the scope itself is reused, never its data.
func (ev *evaluation) release(s *scope) {
	ev.free = append(ev.free, s)
}

// childScope returns a child of s: a scope of a finished foreach loop,
// reset to be s's child (its map, when it has one, is reused), or a new
// one.
func (ev *evaluation) childScope(s *scope) *scope {
	n := len(ev.freeChildren)
	if n == 0 {
		return s.child()
	}
	c := ev.freeChildren[n-1]
	ev.freeChildren = ev.freeChildren[:n-1]
	s.reset(c)
	return c
}

// releaseChild hands back a child scope that no one holds any more, with
// its map: what a loop bound in it (elements, context entries) is only
// read by the rule that ran the loop, which has its result by then.
func (ev *evaluation) releaseChild(c *scope) {
	ev.freeChildren = append(ev.freeChildren, c)
}

// loadImages is the value of the images variable: the images of the
// request's object.
func loadImages(s *scope) (any, error) {
	obj, _ := s.ev.base["request"].(map[string]any)["object"].(map[string]any)
	return imagesOf(obj), nil
}
