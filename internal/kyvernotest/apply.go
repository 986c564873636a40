package kyvernotest

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/verdict-policy/verdict/engine/eval"
)

// ApplyOptions configure Apply.
type ApplyOptions struct {
	// PolicyPaths are policy files or folders (folders are read
	// recursively).
	PolicyPaths []string
	// ResourcePaths are resource files or folders (the YAML files of a
	// folder, not recursively).
	ResourcePaths []string
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
	// AuditWarn counts failures of Audit rules as warnings.
	AuditWarn bool
	// Parallelism is the number of resources evaluated at once. Default:
	// GOMAXPROCS.
	Parallelism int
	// Now is the clock of time functions and report timestamps. Default:
	// time.Now.
	Now func() time.Time
	// ImageVerifier checks images for verifyImages rules. Default: none.
	ImageVerifier eval.ImageVerifier
}

// ApplyResponse is the results of one policy on one resource.
type ApplyResponse struct {
	Resource *Resource
	Policy   *Policy
	Results  []eval.RuleResult
}

// Counts are the totals kyverno apply prints.
type Counts struct {
	Pass, Fail, Warn, Error, Skip int
}

// Skipped is a policy Apply did not evaluate, with the reason.
type Skipped struct {
	Name   string
	Reason string
}

// ApplyResult is the outcome of Apply.
type ApplyResult struct {
	// RuleCount is the number of rules, autogen rules included.
	RuleCount int
	Resources []*Resource
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
	// AuditWarn is the option Apply ran with.
	AuditWarn bool
	now       time.Time
}

// Apply evaluates policies on resources, as kyverno apply does.
func Apply(ctx context.Context, opts ApplyOptions) (*ApplyResult, error) {
	l := newLoader()
	var spec *ValuesSpec
	if opts.ValuesFile != "" {
		v, err := l.values(opts.ValuesFile)
		if err != nil {
			return nil, err
		}
		spec = v
	}
	vars := newVariables(spec, ParseSet(opts.Set))
	var user *UserInfo
	if opts.UserInfoFile != "" {
		u, err := l.userInfo(opts.UserInfoFile)
		if err != nil {
			return nil, err
		}
		user = u
	}
	pols, err := l.policies(opts.PolicyPaths)
	if err != nil {
		return nil, err
	}
	resources, err := l.resources(opts.ResourcePaths)
	if err != nil {
		return nil, err
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	res := &ApplyResult{Resources: resources, AuditWarn: opts.AuditWarn, now: now()}
	s := &suiteRun{vars: vars, user: user, entries: map[string]string{}, byName: map[string]*Policy{}}
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
		default:
			res.Skipped = append(res.Skipped, Skipped{Name: p.Name, Reason: p.Unsupported})
			res.Counts.Error++
		}
	}
	lk := newLookup(nil, nil)
	if lk.objects, err = l.resources(opts.TargetPaths); err != nil {
		return nil, err
	}
	lk.objects = append(lk.objects, resources...)
	if lk.params, err = l.resources(opts.ParamPaths); err != nil {
		return nil, err
	}
	if s.exceptions, err = l.exceptions(opts.ExceptionPaths); err != nil {
		return nil, err
	}
	cel, err := applyCEL(l, s, opts, spec) // vpolicies.go
	if err != nil {
		return nil, err
	}
	s.engine = eval.New(eval.Options{Lookup: lk, Now: opts.Now, ImageVerifier: opts.ImageVerifier, CELData: cel.sources()})

	per := make([][]ApplyResponse, len(resources))
	outs := make([][]PolicyOutput, len(resources))
	workers := opts.Parallelism
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers && w < len(resources); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				per[i], outs[i] = s.applyResource(ctx, resources[i])
			}
		}()
	}
	for i := range resources {
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
	n := 0
	for _, rs := range per {
		n += len(rs)
	}
	res.Responses = make([]ApplyResponse, 0, n)
	for _, o := range outs {
		res.Outputs = append(res.Outputs, o...)
	}
	for _, rs := range per {
		for _, r := range rs {
			res.Responses = append(res.Responses, r)
			// Kyverno's CLI counts the failures of ValidatingPolicies as
			// failures, --audit-warn or not.
			auditWarn := opts.AuditWarn && (r.Policy == nil || !r.Policy.ruleless)
			for _, rr := range r.Results {
				res.Counts.add(rr, auditWarn)
			}
		}
	}
	return res, nil
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

// add counts one rule result as Kyverno's CLI does: a failure of an Audit
// rule is a warning with auditWarn; mutate results are never warnings.
func (c *Counts) add(rr eval.RuleResult, auditWarn bool) {
	switch rr.Status {
	case eval.StatusPass:
		c.Pass++
	case eval.StatusFail:
		if auditWarn && !rr.Enforce && rr.Type != eval.RuleMutation && rr.Type != eval.RuleGeneration {
			c.Warn++
		} else {
			c.Fail++
		}
	case eval.StatusWarn:
		if rr.Type != eval.RuleMutation {
			c.Warn++
		}
	case eval.StatusError:
		c.Error++
	case eval.StatusSkip:
		c.Skip++
	}
}

// auditWarning reports whether a failure is shown as an audit warning.
func (r *ApplyResult) auditWarning(rr eval.RuleResult) bool {
	return r.AuditWarn && !rr.Enforce
}
