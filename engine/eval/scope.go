package eval

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/jmespath"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/variables"
)

// ErrUndefined is wrapped by Lookup errors for data the host does not
// provide at all (the CLI has no cluster): the context entry stays
// undefined, as if it were not declared, instead of failing the rule.
var ErrUndefined = errors.New("not provided")

// scope is the variable environment of one rule evaluation: the JMESPath
// root document (request, serviceAccountName, images, element, context
// entries...) plus context entries that load on first use, as Kyverno's
// deferred loading does.
//
// A scope belongs to one goroutine. Nested scopes (a foreach element) are
// children: they copy the top-level map of their parent, so a child never
// changes its parent.
type scope struct {
	ev *evaluation
	// data is the JMESPath root. It may be shared with the evaluation's
	// base document until the scope first binds a name (owned).
	data    map[string]any
	owned   bool
	pending []*deferred
	// element is the current foreach element when it is a map and the
	// foreach is element-scoped: patterns validate it instead of the
	// resource.
	element map[string]any
	nesting int
	// bounded and bound limit the entries a query may load while an
	// entry loads (see loadMatching): only those before pending[bound].
	bounded bool
	bound   int
	// ruleVars are the request's RuleVariables of the rule.
	ruleVars map[string]any
	// buf backs pending for the first entries (the images variable of
	// every root scope, a context entry or two), and images is the
	// deferred of the images variable: a root scope allocates nothing
	// else.
	buf    [3]*deferred
	images deferred
	// copies holds the first deferred entries a child copies from its
	// parent, so that a foreach element's scope allocates none.
	copies [2]deferred
	// envv is env's value, built once: its method values allocate.
	envv *variables.Env
	// memo is the last query answered while a conditions block is
	// evaluated (memoOn), for the next condition that renders the same
	// expression: see conditions.
	memoOn  bool
	memoSet bool
	memoSrc string
	memoVal any
}

// deferred is a value that loads on the first query that names it.
type deferred struct {
	name    string
	matcher *regexp.Regexp
	load    func(s *scope) (any, error)
	done    bool
}

func (s *scope) child() *scope {
	c := &scope{ev: s.ev, data: s.data, element: s.element, nesting: s.nesting, ruleVars: s.ruleVars}
	c.pending = s.copyPending(c, c.buf[:0])
	return c
}

// copyPending appends to pending a copy of each of s's entries that has
// not loaded, for the child c: the first ones in c's own array.
func (s *scope) copyPending(c *scope, pending []*deferred) []*deferred {
	n := 0
	for _, d := range s.pending {
		if d.done {
			continue
		}
		var cp *deferred
		if n < len(c.copies) {
			cp = &c.copies[n]
			n++
		} else {
			cp = new(deferred)
		}
		*cp = *d
		pending = append(pending, cp)
	}
	return pending
}

// reset makes c a fresh child of s again, reusing c's map and pending
// list: a loop over foreach elements evaluates each element in the same
// child scope, reset in between, instead of a new one per element. c must
// be a child of s that no one else holds.
func (s *scope) reset(c *scope) {
	pending, data, owned, envv := c.pending[:0], c.data, c.owned, c.envv
	// envv resolves through c itself: it stays valid.
	*c = scope{ev: s.ev, data: s.data, element: s.element, nesting: s.nesting, ruleVars: s.ruleVars, envv: envv}
	c.pending = s.copyPending(c, pending)
	if owned {
		// The child's own map, emptied and filled with the parent's
		// names: what an element bound is gone.
		clear(data)
		for k, v := range s.data {
			data[k] = v
		}
		c.data, c.owned = data, true
	}
}

// missing reports whether q is a simple path with a key missing in the
// scope's data: a query that fails with go-jmespath's Unknown key error.
func (s *scope) missing(q *jmespath.Query) bool {
	if err := s.loadMatching(q.String()); err != nil {
		return false
	}
	return q.Missing(s.data)
}

// imagesMatcher is the reference test of the images variable.
var imagesMatcher = policy.NameMatcher("images")

func (s *scope) defer_(name string, matcher *regexp.Regexp, load func(s *scope) (any, error)) {
	s.pending = append(s.pending, &deferred{name: name, matcher: matcher, load: load})
}

// own makes data private to the scope before a change.
func (s *scope) own() {
	if s.owned {
		return
	}
	m := make(map[string]any, len(s.data)+4)
	for k, v := range s.data {
		m[k] = v
	}
	s.data, s.owned = m, true
}

// set binds a top-level name, or a dotted path under it, split as
// Kyverno's context.AddVariable splits it (variables.SplitName: a key in
// double quotes may hold dots). A name that does not split (a stray
// quote), which the hosts refuse before they evaluate, is bound as one
// top-level key.
func (s *scope) set(name string, value any) {
	s.forget()
	s.own()
	if !strings.Contains(name, ".") {
		s.data[name] = value
		return
	}
	parts, err := variables.SplitName(name)
	if err != nil {
		parts = []string{name}
	}
	s.data[parts[0]] = variables.SetPath(s.data[parts[0]], parts[1:], value)
}

// loadMatching loads the pending entries a query refers to, in order, as
// Kyverno's deferredLoaders.LoadMatching does: a query made while an entry
// loads (its jmesPath, value, urlPath...) loads only entries declared
// before that one, so that an entry can use the earlier ones but never
// itself or a later one. As in Kyverno, the bound holds for the rest of
// the query that loads the entry, and is lifted once that entry (or any
// entry it loads) has loaded: a later query of the same entry may load
// any entry not loaded yet.
func (s *scope) loadMatching(src string) error {
	n := len(s.pending)
	if s.bounded {
		n = min(n, s.bound)
	}
	for i := 0; i < n; i++ {
		d := s.pending[i]
		if d.done || !strings.Contains(src, d.name) || !d.matcher.MatchString(src) {
			continue
		}
		if err := s.loadAt(i); err != nil {
			return err
		}
	}
	return nil
}

// loadAll loads every pending entry, in order: each one, as in
// loadMatching, can load only the entries before it.
func (s *scope) loadAll() error {
	for i, d := range s.pending {
		if d.done {
			continue
		}
		if err := s.loadAt(i); err != nil {
			return err
		}
	}
	return nil
}

// loadAt loads the pending entry i; what it queries can load only the
// entries before it.
func (s *scope) loadAt(i int) error {
	s.bounded, s.bound = true, i
	err := s.load(s.pending[i])
	s.bounded = false
	return err
}

// load loads the pending entry d and sets its value; an entry the host
// does not provide (ErrUndefined) stays undefined.
func (s *scope) load(d *deferred) error {
	d.done = true
	v, err := d.load(s)
	if errors.Is(err, ErrUndefined) {
		return nil
	}
	if err != nil {
		return err
	}
	s.set(d.name, v)
	return nil
}

// forget drops the memo: the scope's data changes.
func (s *scope) forget() {
	s.memoSet, s.memoSrc, s.memoVal = false, "", nil
}

// query evaluates q against the scope.
func (s *scope) query(q *jmespath.Query) (any, error) {
	if err := s.ev.budget.Poll(); err != nil {
		return nil, err
	}
	src := q.String()
	if err := s.loadMatching(src); err != nil {
		return nil, err
	}
	if s.memoOn && s.memoSet && s.memoSrc == src {
		return s.memoVal, nil
	}
	v, err := s.ev.e.interp.Search(q, s.data)
	if err == nil && s.memoOn && q.Pure() {
		s.memoSet, s.memoSrc, s.memoVal = true, src, v
	}
	if err != nil {
		code := engine.CodeEvaluation
		if jmespath.IsNotFound(err) {
			code = engine.CodeVariableNotResolved
		}
		return nil, &engine.Error{Code: code, Message: "JMESPath query failed: " + err.Error(), Err: err}
	}
	return v, nil
}

// env is the variables.Env of the scope.
func (s *scope) env() variables.Env {
	if s.envv == nil {
		s.envv = &variables.Env{Resolve: s.query, Delete: s.ev.deleteRequest}
	}
	return *s.envv
}

// loadContext adds the compiled context entries to the scope, deferred.
// Entries that the request's Variables already provide are not loaded.
func (s *scope) loadContext(entries []*policy.ContextEntry) {
	for _, ce := range entries {
		if _, ok := s.ev.req.Variables[ce.Name]; ok {
			continue
		}
		if _, ok := s.ruleVars[ce.Name]; ok {
			continue
		}
		ce := ce
		s.defer_(ce.Name, ce.Matcher, func(s *scope) (any, error) { return s.ev.loadEntry(s, ce) })
	}
}

func (ev *evaluation) loadEntry(s *scope, ce *policy.ContextEntry) (any, error) {
	if err := ev.budget.Poll(); err != nil {
		return nil, err
	}
	switch {
	case ce.Variable != nil:
		return ev.loadVariable(s, ce)
	case ce.ConfigMap != nil:
		name, err := renderString(s, ce.ConfigMap.Name)
		if err != nil {
			return nil, fmt.Errorf("failed to substitute variables in context %s configMap.name: %w", ce.Name, err)
		}
		ns, err := renderString(s, ce.ConfigMap.Namespace)
		if err != nil {
			return nil, fmt.Errorf("failed to substitute variables in context %s configMap.namespace: %w", ce.Name, err)
		}
		if ns == "" {
			// A namespaced Policy's own namespace, else "default".
			ns = ce.PolicyNamespace
			if ns == "" {
				ns = "default"
			}
		}
		if ce.PolicyNamespace != "" && ns != ce.PolicyNamespace {
			return nil, fmt.Errorf("context entry %s: configMap namespace %q is different from policy namespace %q", ce.Name, ns, ce.PolicyNamespace)
		}
		cm, err := ev.e.lookup.ConfigMap(ev.ctx, ns, name)
		if err != nil {
			return nil, fmt.Errorf("failed to retrieve config map for context entry %s: %w", ce.Name, err)
		}
		return cm, nil
	case ce.APICall != nil:
		return ev.loadAPICall(s, ce)
	case ce.GlobalReference != nil:
		return ev.loadNamed(s, ce.GlobalReference.Name, ce.GlobalReference.JMESPath, ev.e.lookup.GlobalContext, "failed to load global context entry %s: %w")
	case ce.ImageRegistry != nil:
		return ev.loadNamed(s, ce.ImageRegistry.Reference, ce.ImageRegistry.JMESPath, ev.e.lookup.ImageData, "failed to fetch image data for %s: %w")
	}
	return nil, fmt.Errorf("context entry %s has no source", ce.Name)
}

func (ev *evaluation) loadVariable(s *scope, ce *policy.ContextEntry) (any, error) {
	v := ce.Variable
	path := ""
	if v.JMESPath != nil {
		p, err := renderString(s, v.JMESPath)
		if err != nil {
			return nil, fmt.Errorf("failed to substitute variables in context entry %s: %w", ce.Name, err)
		}
		path = p
	}
	var def any
	if v.Default != nil {
		d, err := v.Default.Render(s.env())
		if err != nil {
			return nil, fmt.Errorf("failed to substitute variables in context entry %s default: %w", ce.Name, err)
		}
		def = d
	}
	output := def
	if v.Value != nil {
		val, err := v.Value.Render(s.env())
		if err != nil {
			return nil, fmt.Errorf("failed to substitute variables in context entry %s: %w", ce.Name, err)
		}
		if path != "" {
			res, err := ev.searchString(path, val)
			if err == nil {
				output = res
			} else if def == nil {
				return nil, fmt.Errorf("failed to apply jmespath %s to variable %v: %w", path, val, err)
			}
		} else {
			output = val
		}
	} else if path != "" {
		q, err := ev.e.parsed.get(path, jmespath.Parse)
		if err != nil {
			return nil, fmt.Errorf("failed to parse jmespath %s of context entry %s: %w", path, ce.Name, err)
		}
		res, err := s.query(q)
		if err == nil {
			if res != nil {
				output = res
			}
		} else if def == nil {
			return nil, fmt.Errorf("failed to apply jmespath %s to variable <nil>: %w", path, err)
		}
	}
	if output == nil {
		return nil, fmt.Errorf("failed to add context entry for variable %s since it evaluated to nil", ce.Name)
	}
	return output, nil
}

// namespacePath finds the namespace segment of an API path, as Kyverno's
// apiCall does.
var namespacePath = regexp.MustCompile(`^/api(s)?/.*?/namespaces/([^/]+)/?.*$`)

// checkPolicyNamespacePath is Kyverno's rule for the apiCalls of a
// namespaced Policy: the (cleaned) urlPath must name the policy's
// namespace; a service call, whose urlPath is empty, is refused too.
func checkPolicyNamespacePath(urlPath, policyNamespace string) error {
	clean := path.Clean(urlPath)
	m := namespacePath.FindStringSubmatch(clean)
	if len(m) <= 2 {
		return fmt.Errorf("path %s does not contain a namespace segment, which is required for namespaced policies", clean)
	}
	if m[2] != policyNamespace {
		return fmt.Errorf("path %s refers to namespace %s, which is different from the policy namespace %s", clean, m[2], policyNamespace)
	}
	return nil
}

func (ev *evaluation) loadAPICall(s *scope, ce *policy.ContextEntry) (any, error) {
	a := ce.APICall
	call := APICall{Method: a.Method, CABundle: a.CABundle}
	var err error
	if a.URLPath != nil {
		if call.URLPath, err = renderString(s, a.URLPath); err != nil {
			return nil, fmt.Errorf("failed to substitute variables in context entry %s urlPath: %w", ce.Name, err)
		}
	}
	if a.ServiceURL != nil {
		if call.ServiceURL, err = renderString(s, a.ServiceURL); err != nil {
			return nil, fmt.Errorf("failed to substitute variables in context entry %s service.url: %w", ce.Name, err)
		}
	}
	if len(a.Headers) > 0 {
		call.Headers = map[string]string{}
		for _, h := range a.Headers {
			v, err := renderString(s, h.Value)
			if err != nil {
				return nil, fmt.Errorf("failed to substitute variables in context entry %s header %s: %w", ce.Name, h.Key, err)
			}
			call.Headers[h.Key] = v
		}
	}
	if ce.PolicyNamespace != "" {
		if err := checkPolicyNamespacePath(call.URLPath, ce.PolicyNamespace); err != nil {
			return nil, err
		}
	}
	if len(a.Data) > 0 {
		call.Data = map[string]any{}
		for _, d := range a.Data {
			v, err := d.Value.Render(s.env())
			if err != nil {
				return nil, fmt.Errorf("failed to substitute variables in context entry %s data %s: %w", ce.Name, d.Key, err)
			}
			call.Data[d.Key] = v
		}
	}
	data, callErr := ev.e.lookup.APICall(ev.ctx, call)
	if callErr == nil {
		data, callErr = ev.applyJMESPath(s, a.JMESPath, data)
	}
	if callErr != nil {
		if a.Default != nil {
			return a.Default.Render(s.env())
		}
		return nil, fmt.Errorf("failed to load context entry %s: %w", ce.Name, callErr)
	}
	return data, nil
}

// loadNamed loads the data of a globalReference or imageRegistry entry:
// the name rendered, the data fetched (an error worded by format, with
// the name), the entry's jmesPath applied.
func (ev *evaluation) loadNamed(s *scope, name, jmesPath *variables.Template, fetch func(context.Context, string) (any, error), format string) (any, error) {
	n, err := renderString(s, name)
	if err != nil {
		return nil, err
	}
	data, err := fetch(ev.ctx, n)
	if err != nil {
		return nil, fmt.Errorf(format, n, err)
	}
	return ev.applyJMESPath(s, jmesPath, data)
}

func (ev *evaluation) applyJMESPath(s *scope, t *variables.Template, data any) (any, error) {
	if t == nil {
		return data, nil
	}
	path, err := renderString(s, t)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return data, nil
	}
	return ev.searchString(path, data)
}

// renderString renders a template that must produce a string (names,
// paths, expressions).
func renderString(s *scope, t *variables.Template) (string, error) {
	v, err := t.Render(s.env())
	if err != nil {
		return "", err
	}
	switch v := v.(type) {
	case string:
		return v, nil
	case nil:
		return "", nil
	default:
		return fmt.Sprint(v), nil
	}
}

func (ev *evaluation) searchString(expr string, data any) (any, error) {
	q, err := ev.e.parsed.get(expr, jmespath.Parse)
	if err != nil {
		return nil, err
	}
	return ev.e.interp.Search(q, data)
}

// noLookup is the Lookup of an Engine without one.
type noLookup struct{}

func (noLookup) ConfigMap(context.Context, string, string) (map[string]any, error) {
	return nil, fmt.Errorf("configMap lookups: %w", engine.ErrNotFound)
}
func (noLookup) APICall(context.Context, APICall) (any, error) {
	return nil, fmt.Errorf("apiCall lookups: %w", engine.ErrNotFound)
}
func (noLookup) GlobalContext(context.Context, string) (any, error) {
	return nil, fmt.Errorf("global context lookups: %w", engine.ErrNotFound)
}
func (noLookup) ImageData(context.Context, string) (any, error) {
	return nil, fmt.Errorf("image registry lookups: %w", engine.ErrNotFound)
}
