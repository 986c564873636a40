package kyvernotest

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/verdict-policy/verdict/engine/autogen"
	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/match"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/internal/policyreport"
)

// ApplyOptions configure Apply.
type ApplyOptions struct {
	// PolicyPaths are policy files or folders (folders are read
	// recursively). The path "-" is Stdin, as in kyverno apply; Stdin is
	// for the policies or for the resources, not both.
	PolicyPaths []string
	// ResourcePaths are resource files or folders (the YAML files of a
	// folder, not recursively). The path "-" is Stdin, as in kyverno
	// apply; it is read once, so it may be named only once.
	ResourcePaths []string
	// ResourceSource, when set, gives the resources instead of
	// ResourcePaths (kyverno apply --cluster): it calls fn with each
	// resource of the kinds the policies match, and stops at fn's error.
	ResourceSource func(ctx context.Context, kinds []match.Kind, fn func(obj map[string]any) error) error
	// Stdin is read for the resource path "-". Default: none (then "-"
	// is an error).
	Stdin io.Reader
	// ValuesFile is a cli.kyverno.io Values file. Optional.
	ValuesFile string
	// Set are k=v variables (Kyverno's --set); they win over the values
	// file's global and resource values.
	Set []string
	// UserInfoFile is a cli.kyverno.io UserInfo file. Optional.
	UserInfoFile string
	// TargetPaths are files or folders of the existing resources mutate
	// rules with targets patch (Kyverno's --target-resource). Optional.
	TargetPaths []string
	// ExceptionPaths are PolicyException files (kyverno.io and
	// policies.kyverno.io); ParamPaths are files of params resources for
	// validate.cel rules. Optional.
	ExceptionPaths, ParamPaths []string
	// ContextFile is a cli.kyverno.io Context file: the resources and
	// image data the CEL libraries of ValidatingPolicies read (Kyverno's
	// --context-file). Optional.
	ContextFile string
	// ExceptionsWithinResources takes the PolicyExceptions from the
	// documents of ResourcePaths instead of ExceptionPaths (kyverno apply
	// --exceptions-within-resources); the exceptions are evaluated as
	// resources too, as in Kyverno. ExceptionsWithinPolicies adds those of
	// the documents of PolicyPaths (--exceptions-within-policies).
	ExceptionsWithinResources, ExceptionsWithinPolicies bool
	// RegistryAccess is kyverno apply --registry: Kyverno's CLI then
	// loads the imageRegistry context entries from the registries, which
	// Verdict's does not do: policies with such an entry are an error
	// (ErrRegistryEntries), the others are evaluated as without it.
	RegistryAccess bool
	// JSONPaths are JSON payload files (kyverno apply --json): each holds
	// one JSON (or YAML) object, evaluated, instead of ResourcePaths, by
	// the ValidatingPolicies of evaluation mode JSON only, and named
	// "JSON payload" in the output. Optional.
	JSONPaths []string
	// CRDPaths are CustomResourceDefinition files or folders (kyverno
	// apply --crd-paths): the types of the custom resources the
	// ApplyConfigurations of MutatingPolicies merge with (crdSchemasOf).
	CRDPaths []string
	// AuditWarn counts failures of Audit rules as warnings.
	AuditWarn bool
	// Parallelism is the number of resources evaluated at once (verdict
	// apply --parallel); the outputs are the same for any value. 1
	// evaluates each resource before it reads the next, on the caller's
	// goroutine. Default (0): GOMAXPROCS.
	Parallelism int
	// Now is the clock of time functions and report timestamps. Default:
	// time.Now.
	Now func() time.Time
	// ImageVerifier checks images for verifyImages rules. Default: none.
	ImageVerifier eval.ImageVerifier
	// MaxDocumentBytes limits one YAML document of a policy or resource
	// file (and a values, user info or exceptions file, read whole): a
	// larger one is an error naming the file and the document's line.
	// Default kyverno.DefaultMaxDocumentBytes (32 MiB).
	MaxDocumentBytes int
	// Warnings receives a line per folder entry skipped because it is not
	// a regular file (a named pipe, a device, a socket). Default: none.
	Warnings io.Writer

	// open opens resource and policy files (fileOptions.open): a test
	// seam.
	open func(path string) (io.ReadCloser, error)
}

// ApplyResponse is the results of one policy on one resource.
type ApplyResponse struct {
	Resource *Resource
	Policy   *Policy
	Results  []eval.RuleResult
}

// Counts are the totals kyverno apply prints.
type Counts = policyreport.Summary

// Skipped is a policy Apply did not evaluate, with the reason.
type Skipped struct {
	Name   string
	Reason string
}

// ApplyResult is the outcome of Apply.
type ApplyResult struct {
	// RuleCount is the number of rules, autogen rules included, of the
	// policies that compiled and, as Kyverno counts them, of the
	// ClusterPolicies and Policies that decoded but do not compile.
	RuleCount int
	// ExceptionCount is the number of PolicyExceptions loaded (kyverno.io
	// and policies.kyverno.io), which "Applying N policy rule(s) to N
	// resource(s) with N exception(s)..." names when there are any.
	ExceptionCount int
	Resources      []*Resource
	// Responses are in resource order, then policy order. Policies that
	// returned no result for a resource have no response.
	Responses []ApplyResponse
	// Outputs are the mutated and generated resources, per resource and
	// policy with mutate or generate rules (applyresources.go);
	// PrintMutated makes WriteApplyText print them, as kyverno apply does
	// without --output.
	Outputs      []PolicyOutput
	PrintMutated bool
	// Skipped are the policies that did not compile or are of a kind the
	// engine does not evaluate; each counts as one error, as in Kyverno.
	Skipped []Skipped
	Counts  Counts
	// ResourceCount is the number of resources evaluated.
	ResourceCount int
	// AuditWarn is the option Apply ran with.
	AuditWarn bool
	now       time.Time
}

// Apply evaluates policies on resources, as kyverno apply does, and keeps
// every resource, response and output in the result. ApplyWrite writes
// the same outputs without keeping them.
func Apply(ctx context.Context, opts ApplyOptions) (*ApplyResult, error) {
	return apply(ctx, opts, &collector{})
}

// applyEmitter receives the outcome of an Apply: start once the policies
// are loaded (RuleCount, Skipped and the skipped policies' errors are
// set), resource for each resource in order, and finish with the number
// of resources once all are done (Counts is then complete).
type applyEmitter interface {
	start(r *ApplyResult) error
	resource(res *Resource, resps []ApplyResponse, outs []PolicyOutput) error
	finish(r *ApplyResult, resources int) error
}

// collector keeps everything in the ApplyResult (Apply).
type collector struct{ r *ApplyResult }

func (c *collector) start(r *ApplyResult) error { c.r = r; return nil }

func (c *collector) resource(res *Resource, resps []ApplyResponse, outs []PolicyOutput) error {
	c.r.Resources = append(c.r.Resources, res)
	c.r.Responses = append(c.r.Responses, resps...)
	c.r.Outputs = append(c.r.Outputs, outs...)
	return nil
}

func (c *collector) finish(*ApplyResult, int) error { return nil }

// apply loads the policies and the files beside them, then reads the
// resources one document at a time, evaluates them in parallel and hands
// each one's responses and outputs to out, in order, before it reads far
// ahead: at most a window of resources is held at once. Policies whose
// rules look other resources up (generate rules, mutate rules with
// targets) see every resource of the kinds they can look up (as the
// targets of mutate rules do in Kyverno's CLI): a first pass over the
// files keeps those (lookupResources).
func apply(ctx context.Context, opts ApplyOptions, out applyEmitter) (*ApplyResult, error) {
	if slices.Contains(opts.PolicyPaths, StdinPath) && slices.Contains(opts.ResourcePaths, StdinPath) {
		return nil, ErrStdinBoth
	}
	l := newLoader(fileOptions{maxDocument: opts.MaxDocumentBytes, warnings: opts.Warnings, open: opts.open, stdin: opts.Stdin})
	spec, err := loadNamed(opts.ValuesFile, l.values)
	if err != nil {
		return nil, err
	}
	vars := newVariables(spec, ParseSet(opts.Set))
	user, err := loadNamed(opts.UserInfoFile, l.userInfo)
	if err != nil {
		return nil, err
	}
	docs, err := l.policies(opts.PolicyPaths)
	if err != nil {
		return nil, err
	}
	pols, bindings, err := splitBindings(docs) // vaps.go
	if err != nil {
		return nil, err
	}
	pols = admissionPolicies(pols) // vpolicies.go
	if opts.RegistryAccess {
		if err := registryEntries(pols); err != nil { // applyextras.go
			return nil, err
		}
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	res := &ApplyResult{AuditWarn: opts.AuditWarn, now: now()}
	s := &suiteRun{vars: vars, user: user, entries: map[string]string{}, byName: map[string]*Policy{}, vapBindings: bindings}
	for _, p := range pols {
		switch {
		case p.Compiled != nil:
			s.addPolicy(p)
			res.RuleCount += len(p.Compiled.Rules)
			if p.ruleless {
				res.RuleCount++ // Kyverno counts a ValidatingPolicy as one rule
			}
		case p.Err != nil:
			res.Skipped = append(res.Skipped, Skipped{Name: p.Name, Reason: p.Err.Error()})
			res.Counts.Error++
			res.RuleCount += skippedRules(p)
		default:
			res.Skipped = append(res.Skipped, Skipped{Name: p.Name, Reason: p.Unsupported})
			res.Counts.Error++
		}
	}
	each := func(fn func(*Resource) error) error { return l.eachResource(ctx, opts.ResourcePaths, fn) }
	if len(opts.JSONPaths) > 0 {
		each = func(fn func(*Resource) error) error { return l.eachPayload(opts.JSONPaths, fn) } // applyextras.go
	}
	if opts.ResourceSource != nil {
		kinds := policyKinds(pols)
		each = func(fn func(*Resource) error) error {
			return opts.ResourceSource(ctx, kinds, func(obj map[string]any) error { return fn(newResource(clusterPath, 0, obj)) })
		}
	}
	var seen []*Resource // the resources the rules can look up
	if kinds, all, looks := lookupKinds(s.compiled); looks {
		if seen, each, err = lookupResources(ctx, l, opts, each, kinds, all, !writesEarly(out)); err != nil {
			return nil, err
		}
	}
	lk := newLookup(nil, nil)
	targets, err := l.resources(opts.TargetPaths)
	if err != nil {
		return nil, err
	}
	lk.objects = append(targets, seen...)
	if lk.params, err = l.resources(opts.ParamPaths); err != nil {
		return nil, err
	}
	exceptionPaths := opts.ExceptionPaths
	if opts.ExceptionsWithinResources {
		exceptionPaths = nil // as Kyverno: the resources' exceptions instead
	}
	if s.exceptions, err = l.exceptions(exceptionPaths); err != nil {
		return nil, err
	}
	cel, err := applyCEL(l, s, exceptionPaths, opts, spec) // vpolicies.go
	if err != nil {
		return nil, err
	}
	if err := applyExceptionDocs(ctx, l, s, opts, &each); err != nil { // applyextras.go
		return nil, err
	}
	cel.addTargets(targets)
	res.ExceptionCount = len(s.exceptions) + len(s.celExceptions)
	eo := eval.Options{Lookup: lk, Now: opts.Now, ImageVerifier: opts.ImageVerifier, CELData: cel.sources(), KyvernoCLI: true}
	if err := checkCRDFiles(opts.CRDPaths); err != nil { // applyextras.go
		return nil, err
	}
	schemas, err := l.crdSchemasOf(opts.CRDPaths)
	if err != nil {
		return nil, err
	}
	if schemas != nil {
		eo.ApplyTypes = schemas
	}
	s.engine = eval.New(eo)

	if err := out.start(res); err != nil {
		return nil, err
	}
	workers := opts.Parallelism
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	n := 0
	err = s.applyEach(ctx, workers, each, func(r *Resource, resps []ApplyResponse, outs []PolicyOutput) error {
		n++
		for _, resp := range resps {
			// Kyverno's CLI counts the failures of ValidatingPolicies as
			// failures, --audit-warn or not.
			auditWarn := opts.AuditWarn && (resp.Policy == nil || !resp.Policy.ruleless)
			for _, rr := range resp.Results {
				if rr.Target {
					continue // Kyverno's CLI does not count the targets of a MutatingPolicy
				}
				if resp.Policy != nil && resp.Policy.Compiled != nil && resp.Policy.Compiled.VAP != nil {
					countVAP(&res.Counts, rr)
					continue
				}
				countResult(&res.Counts, rr, auditWarn)
				if resp.Policy != nil && resp.Policy.Compiled != nil && resp.Policy.Compiled.Mutating != nil {
					// Kyverno's CLI counts the results of MutatingPolicies
					// twice (as it processes, then prints, their
					// responses).
					countResult(&res.Counts, rr, auditWarn)
				}
			}
		}
		return out.resource(r, resps, outs)
	})
	if err != nil {
		return nil, err
	}
	res.ResourceCount = n
	if err := out.finish(res, n); err != nil {
		return nil, err
	}
	return res, nil
}

// lookupKinds returns the kinds of the resources the policies' rules can
// look up (policy.Policy.LookupKinds): all when one is given by a
// variable, and looks when there is one. The GeneratingPolicies read none
// in the CLI: the engine does not synchronize them there
// (eval.Options.KyvernoCLI).
func lookupKinds(pols []*policy.Policy) (kinds []string, all, looks bool) {
	for _, p := range pols {
		if p.Generating != nil {
			continue
		}
		ks, a := p.LookupKinds()
		if a {
			return nil, true, true
		}
		for _, k := range ks {
			if !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	return kinds, false, len(kinds) > 0
}

// writesEarly reports whether an emitter writes before finish: the files
// of ApplyOutput.MutatedPath are written as the resources come.
func writesEarly(e applyEmitter) bool {
	switch e := e.(type) {
	case *mutatedFiles:
		return true
	case multiEmitter:
		return slices.ContainsFunc(e, writesEarly)
	}
	return false
}

// kindFilter returns the kyverno.Decoder.Skip of the first pass of
// lookupResources: it skips, undecoded, the YAML documents whose text
// does not hold one of the kinds, which therefore cannot be of these kinds
// (a kind's name is in the text unless it is written with an escape, a
// backslash, or in a !!binary scalar: those documents are decoded). The
// documents it skips are decoded, and their errors reported, by the
// second pass. With a kind that is not only letters and digits (the
// empty kind of a document without one, a kind YAML could write
// otherwise), it is nil: every document is decoded.
func kindFilter(kinds []string) func(doc string) bool {
	for _, k := range kinds {
		if k == "" || strings.IndexFunc(k, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}) >= 0 {
			return nil
		}
	}
	return func(doc string) bool {
		if strings.Contains(doc, `\`) || strings.Contains(doc, "binary") {
			return false
		}
		for _, k := range kinds {
			if strings.Contains(doc, k) {
				return false
			}
		}
		return true
	}
}

// lookupResources returns the resources of the given kinds (every one with
// all), which generate rules and mutate rules with targets see as existing
// resources (as mutate targets do in Kyverno's CLI), and the function that
// yields every resource to evaluate. The resource files are read twice: first to keep
// only the resources of those kinds, then one document at a time to
// evaluate them, so that memory does not grow with the resources of other
// kinds. Standard input, read once, and the resources of a ResourceSource
// (each) are loaded whole instead, as are the files when all is set.
//
// With filter, the first pass does not decode the documents that cannot
// be of those kinds (kindFilter): a document that does not decode is then
// reported by the second pass, after the output started, so filter must
// be false when an emitter writes before the end (writesEarly).
func lookupResources(ctx context.Context, l *loader, opts ApplyOptions, each func(func(*Resource) error) error, kinds []string, all, filter bool) ([]*Resource, func(func(*Resource) error) error, error) {
	var whole []*Resource
	var err error
	switch {
	case opts.ResourceSource != nil:
		err = each(func(r *Resource) error { whole = append(whole, r); return nil })
	case all || slices.Contains(opts.ResourcePaths, StdinPath):
		whole, err = l.resources(opts.ResourcePaths)
	default:
		files, err := l.resourceFiles(opts.ResourcePaths)
		if err != nil {
			return nil, nil, fmt.Errorf("load resources: %w", err)
		}
		var skip func(string) bool
		if filter {
			skip = kindFilter(kinds)
		}
		var seen []*Resource
		err = l.eachResourceOf(ctx, files, skip, func(r *Resource) error {
			if slices.Contains(kinds, r.Kind) {
				seen = append(seen, r)
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		return seen, func(fn func(*Resource) error) error { return l.eachResourceOf(ctx, files, nil, fn) }, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return whole, func(fn func(*Resource) error) error {
		for _, r := range whole {
			if err := fn(r); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// applied is what applyResource returned for one resource.
type applied struct {
	r     *Resource
	resps []ApplyResponse
	outs  []PolicyOutput
}

// ApplyWindow is how many resources per worker apply holds read and not
// yet written (ApplyOptions.Parallelism): 2. The reader stops while the
// writer waits for the oldest one, so memory does not grow with the
// resource files.
const ApplyWindow = 2

// applyEach evaluates the resources each yields on workers goroutines and
// calls emit with each one's outcome in the order each yielded them. At
// most ApplyWindow×workers resources are read and not emitted yet, so
// that memory does not depend on the number of resources. Everything that
// carries from one resource to the next (the counts, the spools, the
// files of --output) is in emit, on one goroutine; the evaluation of a
// resource reads only what apply loaded before the first one (the
// policies, the lookup, the values). With one worker each resource is
// evaluated and emitted before the next is read, on the caller's
// goroutine.
func (s *suiteRun) applyEach(ctx context.Context, workers int, each func(func(*Resource) error) error, emit func(*Resource, []ApplyResponse, []PolicyOutput) error) error {
	if workers <= 1 {
		return each(func(r *Resource) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			resps, outs := s.applyResource(ctx, r)
			return emit(r, resps, outs)
		})
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type job struct {
		r   *Resource
		out chan applied
	}
	jobs := make(chan job)
	order := make(chan chan applied, ApplyWindow*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				resps, outs := s.applyResource(ctx, j.r)
				j.out <- applied{j.r, resps, outs}
			}
		}()
	}
	var readErr error
	go func() {
		defer close(order)
		defer close(jobs)
		readErr = each(func(r *Resource) error {
			out := make(chan applied, 1)
			select {
			case order <- out:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case jobs <- job{r, out}:
			case <-ctx.Done():
				return ctx.Err()
			}
			return nil
		})
	}()
	var emitErr error
	for out := range order {
		if emitErr != nil {
			continue // drain: the reader stops at ctx
		}
		select {
		case a := <-out:
			if err := emit(a.r, a.resps, a.outs); err != nil {
				emitErr = err
				cancel()
			}
		case <-ctx.Done():
			emitErr = ctx.Err()
		}
	}
	wg.Wait()
	switch {
	case parent.Err() != nil:
		return parent.Err()
	case emitErr != nil:
		return emitErr
	}
	return readErr
}

// split cuts the results of one evaluation, which come policy by policy,
// into one response per policy.
func (s *suiteRun) split(r *Resource, results []eval.RuleResult) []ApplyResponse {
	var out []ApplyResponse
	for i := 0; i < len(results); {
		j := i + 1
		for j < len(results) && results[j].Policy == results[i].Policy && results[j].PolicyNamespace == results[i].PolicyNamespace {
			j++
		}
		out = append(out, ApplyResponse{Resource: r, Policy: s.byName[results[i].PolicyNamespace+"/"+results[i].Policy], Results: results[i:j:j]})
		i = j
	}
	return out
}

// countResult counts one rule result as Kyverno's CLI does: a failure of
// an Audit rule is a warning with auditWarn; mutate results are never
// warnings.
func countResult(c *Counts, rr eval.RuleResult, auditWarn bool) {
	result := string(rr.Status)
	switch {
	case rr.Status == eval.StatusFail && auditWarn && !rr.Enforce && rr.Type != eval.RuleMutation && rr.Type != eval.RuleGeneration:
		result = "warn"
	case rr.Status == eval.StatusWarn && rr.Type == eval.RuleMutation:
		return
	}
	c.Add(result)
}

// countVAP counts a result of a ValidatingAdmissionPolicy as Kyverno's CLI
// does (addValidatingAdmissionResponse): pass, fail (an unscored one too)
// and error; a skip is not counted.
func countVAP(c *Counts, rr eval.RuleResult) {
	switch rr.Status {
	case eval.StatusPass:
		c.Pass++
	case eval.StatusFail, eval.StatusWarn:
		c.Fail++
	case eval.StatusError:
		c.Error++
	}
}

// auditWarning reports whether a failure is shown as an audit warning.
func auditWarning(auditWarn bool, rr eval.RuleResult) bool {
	return auditWarn && !rr.Enforce
}

// clusterPath is the path of the resources of ApplyOptions.ResourceSource.
const clusterPath = "cluster"

// policyKinds are the kinds the compiled policies match, without
// duplicates.
func policyKinds(pols []*Policy) []match.Kind {
	var out []match.Kind
	for _, p := range pols {
		if p.Compiled == nil {
			continue
		}
		for _, k := range p.Compiled.Kinds() {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// skippedRules is the number of rules Kyverno's CLI counts in "Applying N
// policy rule(s)" for a ClusterPolicy or Policy that decoded but does not
// compile: it counts the rules of every policy it loaded, autogen rules
// included (autogen.Default.ComputeRules), before it skips the invalid
// ones.
func skippedRules(p *Policy) int {
	if p.Doc == nil {
		return 0
	}
	rules, err := autogen.Rules(p.Doc)
	if err != nil {
		return len(p.Doc.Spec.Rules)
	}
	return len(rules)
}
