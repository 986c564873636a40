package kyvernotest

import (
	"context"
	"io"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vap"
	enginevars "github.com/verdict-policy/verdict/engine/variables"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// DefaultFileName is the test file name kyverno test looks for.
const DefaultFileName = "kyverno-test.yaml"

// Options configure Run. The zero value runs every test found.
type Options struct {
	// FileName is the name of the test files to discover. Default:
	// kyverno-test.yaml.
	FileName string
	// RegistryAccess is kyverno test --registry: Kyverno's CLI then loads
	// the imageRegistry context entries from the registries, which
	// Verdict's does not do: the results of a test whose policies have
	// such an entry fail with ErrRegistryEntries (registryEntries).
	RegistryAccess bool
	// Selector filters expected results as Kyverno's --test-case-selector
	// does: "policy=<wildcard>,rule=<wildcard>,resource=<wildcard>".
	// Default: every result.
	Selector string
	// Parallelism is the number of test files run at once. Default:
	// GOMAXPROCS.
	Parallelism int
	// StrictPolicies fails the expected results of a policy that does not
	// compile. Default false: like kyverno test, such results are reported
	// as skipped ("Invalid Policy") and count as passed.
	StrictPolicies bool
	// Progress, when set, is called after each test file with the number of
	// files done and the total.
	Progress func(done, total int)
	// Now is the clock of the time functions. Default: time.Now.
	Now func() time.Time
	// ImageVerifier checks images for verifyImages rules. Default: none
	// (those rules report an error).
	ImageVerifier eval.ImageVerifier
	// MaxDocumentBytes limits one YAML document of a policy or resource
	// file, and a test, values, user info or exceptions file. Default
	// kyverno.DefaultMaxDocumentBytes (32 MiB).
	MaxDocumentBytes int
	// Warnings receives a line per file skipped because it is not a
	// regular file (a named pipe, a device, a socket in a folder of
	// policies, resources or tests). Default: none.
	Warnings io.Writer
	// KeepPolicies keeps each suite's policies, as loaded and compiled,
	// in SuiteResult.Policies. Default false: a run holds the policies of
	// the suites in progress only, and the report their results.
	KeepPolicies bool
}

// Result is the check of one expected result on one resource.
type Result struct {
	// Test is the path of the test file.
	Test string `json:"test"`
	// Policy and Rule are the expected result's policy and rule, as written
	// in the test.
	Policy string `json:"policy"`
	Rule   string `json:"rule"`
	// Resource is the resource checked (apiVersion/Kind/namespace/name), or
	// the test's resource names when the test could not run.
	Resource string `json:"resource"`
	// Expected is the expected result; Actual is the engine's ("" when it
	// produced none).
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
	OK       bool   `json:"ok"`
	// Reason says why: "Ok", "Want pass, got fail", "Excluded", "Not found",
	// an unsupported feature, or the error that stopped the test.
	Reason string `json:"reason"`
	// Message is the engine's message for the result.
	Message string `json:"message,omitempty"`
	// ActualRule is the rule that produced the result (for example the
	// autogen rule of a Deployment), when there is one.
	ActualRule string `json:"-"`
}

// SuiteResult is the outcome of one Test document.
type SuiteResult struct {
	// Path is the test file; Name is the test's metadata.name.
	Path string
	Name string
	// Err is set when the test could not run (bad file, missing policy).
	// Its expected results are then failed results carrying the error.
	Err     error
	Results []Result
	// Policies are the test's policies, as loaded, when
	// Options.KeepPolicies is set.
	Policies []*Policy
}

// Report is the outcome of a run.
type Report struct {
	Suites []SuiteResult
	// Passed and Failed count Results.
	Passed, Failed int
}

// Results returns every result of the run, in order.
func (r *Report) Results() []Result {
	var out []Result
	for _, s := range r.Suites {
		out = append(out, s.Results...)
	}
	return out
}

// Run discovers the test files under paths and runs them.
func Run(ctx context.Context, paths []string, opts Options) (*Report, error) {
	files, err := Discover(paths, opts.FileName, opts.Warnings)
	if err != nil {
		return nil, err
	}
	return RunFiles(ctx, files, opts)
}

// RunFiles runs the given test files.
func RunFiles(ctx context.Context, files []string, opts Options) (*Report, error) {
	sel, err := parseSelector(opts.Selector)
	if err != nil {
		return nil, err
	}
	workers := opts.Parallelism
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	r := &runner{opts: opts, sel: sel, load: newLoader(fileOptions{maxDocument: opts.MaxDocumentBytes, warnings: opts.Warnings})}
	// Every test file is parsed first, so that the loader knows which
	// files the tests still to run will load (testFile.pin).
	tfs := make([]*testFile, len(files))
	for i, f := range files {
		tfs[i] = r.parse(f)
		tfs[i].pin(r.load)
	}
	out := make([][]SuiteResult, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for w := 0; w < workers && w < len(files); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = r.file(ctx, tfs[i])
				tfs[i] = nil
				if opts.Progress != nil {
					mu.Lock()
					done++
					opts.Progress(done, len(files))
					mu.Unlock()
				}
			}
		}()
	}
	for i := range files {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep := &Report{}
	for _, suites := range out {
		for _, s := range suites {
			for _, res := range s.Results {
				if res.OK {
					rep.Passed++
				} else {
					rep.Failed++
				}
			}
			rep.Suites = append(rep.Suites, s)
		}
	}
	return rep, nil
}

type runner struct {
	opts Options
	sel  selector
	load *loader
}

// testFile is a test file, parsed.
type testFile struct {
	path  string
	tests []*Test
	err   error
}

func (r *runner) parse(path string) *testFile {
	tf := &testFile{path: path}
	data, err := r.load.readFile(path)
	if err == nil {
		tf.tests, err = ParseTests(path, data)
	}
	tf.err = err
	return tf
}

// pin pins the files of the file's tests in l: each test releases its
// own when it is done (runner.test).
func (tf *testFile) pin(l *loader) {
	for _, t := range tf.tests {
		l.pin(t.files(filepath.Dir(tf.path)))
	}
}

// file runs the Test documents of one file.
func (r *runner) file(ctx context.Context, tf *testFile) []SuiteResult {
	if tf.err != nil {
		return []SuiteResult{{
			Path:    tf.path,
			Err:     tf.err,
			Results: []Result{{Test: tf.path, OK: false, Reason: tf.err.Error()}},
		}}
	}
	out := make([]SuiteResult, 0, len(tf.tests))
	for _, t := range tf.tests {
		s, ok := r.test(ctx, tf.path, t)
		r.load.release(t.files(filepath.Dir(tf.path)))
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// test runs one Test. It reports false when the selector leaves no
// expected result to check.
func (r *runner) test(ctx context.Context, path string, t *Test) (SuiteResult, bool) {
	s := SuiteResult{Path: path, Name: t.DisplayName()}
	var expected []ExpectedResult
	for _, e := range t.Results {
		if e2, ok := r.sel.apply(e); ok {
			expected = append(expected, e2)
		}
	}
	if len(expected) == 0 {
		return s, false
	}
	run, err := r.prepare(path, t)
	if err == nil {
		err = run.evaluate(ctx, t)
	}
	if run != nil && r.opts.KeepPolicies {
		s.Policies = run.policies
	}
	if err != nil {
		s.Err = err
		for _, e := range expected {
			s.Results = append(s.Results, Result{
				Test: path, Policy: e.Policy, Rule: e.Rule, Resource: strings.Join(e.Resources, ","),
				Expected: e.Result, OK: false, Reason: err.Error(),
			})
		}
		return s, true
	}
	for _, e := range expected {
		s.Results = append(s.Results, run.check(path, e)...)
	}
	return s, true
}

// suiteRun is one Test, loaded and evaluated.
type suiteRun struct {
	r        *runner
	dir      string
	vars     *variables
	user     *UserInfo
	policies []*Policy
	compiled []*policy.Policy
	// entries maps context entry names to their source (see
	// contextEntries); apiMocks and globalMocks say whether the test mocks
	// apiCall and globalReference entries.
	entries     map[string]string
	apiMocks    bool
	globalMocks bool
	// byName finds a compiled policy by "namespace/name".
	byName    map[string]*Policy
	resources []*resourceRun
	engine    *eval.Engine
	// exceptions are the test's PolicyExceptions.
	exceptions []*policy.Exception
	// celExceptions are its policies.kyverno.io PolicyExceptions, and
	// namespaces the Namespace objects of its values, by name
	// (vpolicies.go).
	celExceptions []*vpol.Exception
	namespaces    map[string]map[string]any
	// targets are the test's targetResources (mutations.go).
	targets []*Resource
	// vapBindings are the ValidatingAdmissionPolicyBindings of its
	// policy files (vaps.go).
	vapBindings []*vap.Binding
}

// resourceRun is a resource with the responses of its evaluations, per
// operation ("" is the default run).
type resourceRun struct {
	res       *Resource
	responses map[string][]response
}

// response is what one policy returned for one resource, like Kyverno's
// EngineResponse.
type response struct {
	pol     *Policy
	results []eval.RuleResult
	// out is what the policy's mutate and generate rules produced
	// (mutations.go).
	out *outputs
}

func (r *runner) prepare(path string, t *Test) (*suiteRun, error) {
	dir := filepath.Dir(path)
	full := func(p string) string { return testPath(dir, p) }
	fulls := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = full(p)
		}
		return out
	}
	s := &suiteRun{r: r, dir: dir}
	docs, err := r.load.policies(fulls(t.Policies))
	if err != nil {
		return s, err
	}
	pols, bindings, err := splitBindings(docs) // vaps.go
	if err != nil {
		return s, err
	}
	s.vapBindings = bindings
	pols = admissionPolicies(pols) // vpolicies.go
	s.entries = map[string]string{}
	s.byName = map[string]*Policy{}
	s.apiMocks = len(t.APICallResponses) > 0
	s.globalMocks = len(t.GlobalContextEntries) > 0
	for _, p := range pols {
		if p.Compiled == nil {
			s.policies = append(s.policies, p)
			continue
		}
		s.addPolicy(p)
	}
	spec := t.Values
	if spec == nil && t.Variables != "" {
		v, err := r.load.values(full(t.Variables))
		if err != nil {
			return s, err
		}
		spec = v
	}
	s.vars = newVariables(spec, nil)
	if t.UserInfo != "" {
		u, err := r.load.userInfo(full(t.UserInfo))
		if err != nil {
			return s, err
		}
		s.user = u
	}
	res, err := r.load.resources(fulls(t.Resources))
	if err != nil {
		return s, err
	}
	for _, rs := range uniqueResources(res) {
		s.resources = append(s.resources, &resourceRun{res: rs, responses: map[string][]response{}})
	}
	globals, err := r.globalMocks(dir, t.GlobalContextEntries)
	if err != nil {
		return s, err
	}
	lk := newLookup(t.APICallResponses, globals)
	if lk.params, err = r.load.resources(fulls(t.ParamResources)); err != nil {
		return s, err
	}
	if lk.objects, s.targets, err = r.clusterObjects(t, res, full); err != nil {
		return s, err
	}
	if s.exceptions, err = r.load.exceptions(fulls(t.Exceptions)); err != nil {
		return s, err
	}
	if len(s.exceptions) > 0 && hasVAP(pols) {
		return s, errVAPExceptions
	}
	if r.opts.RegistryAccess {
		if err := registryEntries(pols); err != nil { // applyextras.go
			return s, err
		}
	}
	cel, err := r.celPrepare(s, t, spec, globals, full) // vpolicies.go
	if err != nil {
		return s, err
	}
	cel.addTargets(s.targets)
	opts := eval.Options{Lookup: lk, Now: r.opts.Now, ImageVerifier: r.opts.ImageVerifier, CELData: cel.sources(), KyvernoCLI: true}
	schemas, err := r.crdSchemas(t, full) // crds.go
	if err != nil {
		return s, err
	}
	if schemas != nil {
		opts.ApplyTypes = schemas
	}
	s.engine = eval.New(opts)
	return s, nil
}

// evaluate runs the policies on every resource: once as the values file
// says, and once more per operation that expected results name.
func (s *suiteRun) evaluate(ctx context.Context, t *Test) error {
	ops := map[string]bool{}
	for _, e := range t.Results {
		if e.Operation != "" {
			ops[e.Operation] = true
		}
	}
	runs := []string{""}
	for op := range ops {
		runs = append(runs, op)
	}
	sort.Strings(runs[1:])
	for _, rr := range s.resources {
		for _, op := range runs {
			if err := ctx.Err(); err != nil {
				return err
			}
			rr.responses[op] = s.responsesFor(ctx, rr.res, op)
		}
	}
	return nil
}

// responsesFor evaluates every compiled policy on a resource and returns
// Kyverno's responses: one per policy that has mutate, validate or
// verifyImages rules, and one per other policy that returned results.
func (s *suiteRun) responsesFor(ctx context.Context, res *Resource, op string) []response {
	var results []eval.RuleResult
	var evals []*eval.Response
	if !s.vars.hasPolicyValues() {
		req := s.request(res, "", op)
		er := s.engine.Evaluate(ctx, s.compiled, req)
		results, evals = er.Results, append(evals, er)
	} else {
		cur := res.Object
		for _, p := range s.compiled {
			req := chainObject(s.request(res, p.Name(), op), cur)
			er := s.engine.Evaluate(ctx, []*policy.Policy{p}, req)
			results, evals = append(results, er.Results...), append(evals, er)
			if er.Patched != nil {
				cur = er.Patched
			}
		}
	}
	var out []response
	for _, p := range s.policies {
		if p.Compiled == nil {
			continue
		}
		resp := response{pol: p, out: outputsOf(p, res, evals)}
		for _, rr := range results {
			if rr.Policy == p.Name && rr.PolicyNamespace == p.Compiled.Namespace() {
				resp.results = append(resp.results, rr)
			}
		}
		if p.responds || len(resp.results) > 0 {
			out = append(out, resp)
		}
	}
	return out
}

// request builds the admission request Kyverno's CLI simulates for a
// resource: the operation comes from the request.operation value (or the
// expected result's operation), UPDATE has the resource as object and old
// object, DELETE as old object only.
func (s *suiteRun) request(res *Resource, policyName, op string) *eval.Request {
	vars := s.vars.compute(policyName, res.Name)
	operation := "CREATE"
	switch vars["request.operation"] {
	case "UPDATE":
		operation = "UPDATE"
	case "DELETE":
		operation = "DELETE"
	}
	if op != "" {
		operation = op
		vars["request.operation"] = op
	}
	s.cliContext(vars)
	req := &eval.Request{
		Operation:       operation,
		NamespaceLabels: s.vars.nsLabels[res.Namespace],
		Variables:       vars,
		Mode:            eval.Admission,
		Exceptions:      s.exceptions,
		CELExceptions:   s.celExceptions,
		NamespaceObject: s.namespaces[res.Namespace],
		VAPBindings:     s.vapBindings,
	}
	for rule, vals := range s.vars.ruleValues(policyName) {
		s.cliContext(vals)
		if req.RuleVariables == nil {
			req.RuleVariables = map[eval.RuleKey]map[string]any{}
		}
		// Kyverno's CLI store answers for a rule and its autogen rules.
		for _, name := range []string{rule, "autogen-" + rule, "autogen-cronjob-" + rule} {
			req.RuleVariables[eval.RuleKey{Policy: policyName, Rule: name}] = vals
		}
	}
	switch operation {
	case "DELETE":
		req.OldObject = res.Object
	case "UPDATE":
		req.Object = res.Object
		req.OldObject = res.Object
	default:
		req.Object = res.Object
	}
	if g, v, k, sub, ok := s.vars.subresource(res.Group, res.Version, res.Kind); ok {
		req.Group, req.Version, req.Kind, req.Subresource = g, v, k, sub
	}
	if s.user != nil {
		req.UserInfo = s.user.UserInfo
		req.Roles = s.user.Roles
		req.ClusterRoles = s.user.ClusterRoles
		req.DryRun = s.user.DryRun
	}
	return req
}

// addPolicy adds a compiled policy to the run.
func (s *suiteRun) addPolicy(p *Policy) {
	s.policies = append(s.policies, p)
	s.compiled = append(s.compiled, p.Compiled)
	s.byName[p.Compiled.Namespace()+"/"+p.Name] = p
	for name, src := range p.entries {
		if s.entries[name] != srcVariable {
			s.entries[name] = src
		}
	}
}

// unloaded reports whether Kyverno's CLI leaves a context entry of this
// source undefined: it has no cluster and no registry access, so it loads
// configMap and imageRegistry entries never, and apiCall and
// globalReference entries only from the test's mocks.
func (s *suiteRun) unloaded(src string) bool {
	switch src {
	case srcConfigMap, srcImageRegistry:
		return true
	case srcAPICall:
		return !s.apiMocks
	case srcGlobalReference:
		return !s.globalMocks
	}
	return false
}

// cliContext folds values named under a context entry that Kyverno's CLI
// does not load, such as "cm.data.key", into one value for the entry, so
// that the engine takes the entry from the values instead of loading it.
//
// An unloaded entry that the values do not give is left to the engine,
// whose lookup fails (the rule errors). In Kyverno it stays undefined,
// which differs only for expressions with a default (`{{ cm.data.key ||
// 'x' }}` gives 'x' there, an error here); binding it to null instead
// would turn Kyverno's errors for plain references into silent passes.
func (s *suiteRun) cliContext(vars map[string]any) {
	for k, v := range vars {
		keys, err := enginevars.SplitName(k)
		if err != nil || len(keys) < 2 || !s.unloaded(s.entries[keys[0]]) {
			continue
		}
		vars[keys[0]] = enginevars.SetPath(vars[keys[0]], keys[1:], v)
		delete(vars, k)
	}
}
