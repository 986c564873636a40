package kyvernotest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/internal/yamlenc"
)

// PolicyOutput is what one policy's mutate and generate rules produced for
// one resource in Apply.
type PolicyOutput struct {
	Resource *Resource
	Policy   *Policy
	// Mutates is true when the policy has mutate rules; Patched is then
	// the resource after them (and the policies before).
	Mutates bool
	Patched map[string]any
	// Generated are the resources the policy's generate rules would create
	// or update, with their labels. For a policy with generateExisting
	// they are what it would create for the resource as an existing
	// trigger, labelled kyverno.io/background-gen-rule.
	Generated []eval.Generated
	// Targets are the targets its mutate existing rules patched.
	Targets []map[string]any
}

// applyResource evaluates every policy on a resource and returns the
// responses and the outputs of Apply.
func (s *suiteRun) applyResource(ctx context.Context, r *Resource) ([]ApplyResponse, []PolicyOutput) {
	var evals []*eval.Response
	var out []ApplyResponse
	compiled := s.compiled
	if r.Payload {
		compiled = jsonModePolicies(compiled) // applyextras.go
	}
	if !s.vars.hasPolicyValues() {
		er := s.engine.Evaluate(ctx, compiled, s.request(r, "", ""))
		evals = append(evals, er)
		out = s.split(r, er.Results)
	} else {
		cur := r.Object
		for _, p := range s.policies {
			if r.Payload && len(jsonModePolicies([]*policy.Policy{p.Compiled})) == 0 {
				continue
			}
			er := s.engine.Evaluate(ctx, []*policy.Policy{p.Compiled}, chainObject(s.request(r, p.Name, ""), cur))
			evals = append(evals, er)
			if er.Patched != nil {
				cur = er.Patched
			}
			if len(er.Results) > 0 {
				out = append(out, ApplyResponse{Resource: r, Policy: p, Results: er.Results})
			}
		}
	}
	s.replayExisting(ctx, r, evals)
	var outputs []PolicyOutput
	for _, p := range s.policies {
		if p.Compiled == nil {
			continue
		}
		po := PolicyOutput{Resource: r, Policy: p, Mutates: hasRule(p.Compiled, policy.Mutate)}
		if p.Compiled.Mutating != nil || p.Compiled.MutatingAdmission != nil {
			// Kyverno's CLI prints the resource for a MutatingPolicy or
			// MutatingAdmissionPolicy that returned a response.
			po.Mutates = p.responds || slices.ContainsFunc(out, func(a ApplyResponse) bool { return a.Policy == p })
		}
		o := outputsOf(p, r, evals)
		po.Patched = o.patched
		for _, er := range evals {
			for _, g := range er.Generated {
				if g.Policy == p.Name && g.PolicyNamespace == p.Compiled.Namespace() && !g.Source && g.Action != eval.GenerateDelete {
					po.Generated = append(po.Generated, g)
				}
			}
		}
		for _, ts := range o.targets {
			po.Targets = append(po.Targets, ts...)
		}
		if po.Mutates || len(po.Generated) > 0 {
			outputs = append(outputs, po)
		}
	}
	return out, outputs
}

func hasRule(p *policy.Policy, t policy.RuleType) bool {
	for _, r := range p.Rules {
		if r.Type == t {
			return true
		}
	}
	return false
}

// replayExisting answers, for the policies with generateExisting, what they
// would generate for the resource as an existing trigger (the engine's
// Request.GenerateExisting): those intents, labelled
// kyverno.io/background-gen-rule, replace the ones of the admission run.
func (s *suiteRun) replayExisting(ctx context.Context, r *Resource, evals []*eval.Response) {
	existing := map[[3]string]bool{}
	var pols []*policy.Policy
	for _, p := range s.compiled {
		found := false
		for _, rule := range p.Rules {
			if rule.Generate != nil && rule.Generate.Existing {
				existing[[3]string{p.Namespace(), p.Name(), rule.Name}] = true
				found = true
			}
		}
		if found {
			pols = append(pols, p)
		}
	}
	if len(pols) == 0 || len(evals) == 0 {
		return
	}
	req := s.request(r, "", "")
	req.GenerateExisting = true
	replay := s.engine.Evaluate(ctx, pols, req)
	for _, er := range evals {
		kept := er.Generated[:0:0]
		for _, g := range er.Generated {
			if !existing[[3]string{g.PolicyNamespace, g.Policy, g.Rule}] {
				kept = append(kept, g)
			}
		}
		er.Generated = kept
	}
	evals[0].Generated = append(evals[0].Generated, replay.Generated...)
}

// WriteMutated writes the mutated and generated resources of an Apply as
// kyverno apply prints them: for each resource and each policy with mutate
// rules, "policy <p> applied to <namespace>/<Kind>/<name>:", the resource
// as YAML, its patched targets, then "Mutation has been applied
// successfully."; for each generated resource, the same block ending with
// "Generation completed successfully.".
func WriteMutated(w io.Writer, r *ApplyResult) error {
	bw := &errWriter{w: w}
	writeMutatedOutputs(bw, r.Outputs, false)
	return bw.err
}

// appendAppliedBlock appends the head of one kyverno apply block: the
// "policy <p> applied to <path>:" line (unless bare), then obj as YAML and
// a document separator.
func appendAppliedBlock(b []byte, policy, path string, obj map[string]any, bare bool) []byte {
	if !bare {
		b = append(b, "\npolicy "...)
		b = append(b, policy...)
		b = append(b, " applied to "...)
		b = append(b, path...)
		b = append(b, ':')
	}
	b = append(b, '\n')
	b = appendYAML(b, obj)
	return append(b, "\n---\n"...)
}

// writeMutatedOutputs writes outs as WriteMutated does; bare drops the
// "policy <p> applied to <resource>:" lines, as kyverno apply -i does.
func writeMutatedOutputs(bw *errWriter, outs []PolicyOutput, bare bool) {
	for _, o := range outs {
		path := o.Resource.Namespace + "/" + o.Resource.Kind + "/" + o.Resource.Name
		b := bw.scratch[:0]
		if o.Mutates {
			b = appendAppliedBlock(b, o.Policy.Name, path, o.Patched, bare)
			if len(o.Targets) > 0 {
				b = append(b, "patched targets: \n"...)
				for _, t := range o.Targets {
					b = append(b, '\n')
					b = appendYAML(b, t)
					b = append(b, "\n---\n\n"...)
				}
			}
			b = append(b, "\n\nMutation:\nMutation has been applied successfully."...)
		}
		for _, g := range o.Generated {
			b = appendAppliedBlock(b, o.Policy.Name, path, g.Object, bare)
			b = append(b, "\n\nGenerate:\nGeneration completed successfully."...)
		}
		if len(b) > 0 {
			bw.write(b)
		}
		bw.scratch = b
	}
}

// WriteMutatedTo writes the mutated and generated resources of an Apply
// under path, as kyverno apply --output does: a path ending in .yaml or
// .yml is one file; any other path is a folder (created if needed) with
// <resource>-mutated.yaml and <policy>-generated.yaml files. Each resource
// is a YAML document. Files are rewritten, not appended to.
func WriteMutatedTo(path string, r *ApplyResult) error {
	return replay(r, &mutatedFiles{path: path})
}

// maxOpenOutputs is how many files of a folder of mutated resources stay
// open between writes.
const maxOpenOutputs = 16

// mutatedFiles writes the mutated and generated resources to files as
// they come (WriteMutatedTo): a file is created (emptied) the first time
// it is written in a run, and appended to after.
type mutatedFiles struct {
	path    string
	single  bool
	created map[string]bool
	open    map[string]*os.File
	order   []string // of open, oldest first
}

func (m *mutatedFiles) start(*ApplyResult) error {
	ext := strings.ToLower(filepath.Ext(m.path))
	m.single = ext == ".yaml" || ext == ".yml"
	m.created, m.open = map[string]bool{}, map[string]*os.File{}
	dir := m.path
	if m.single {
		dir = filepath.Dir(m.path)
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("write mutated resources: %w", err)
		}
	}
	return nil
}

func (m *mutatedFiles) resource(_ *Resource, _ []ApplyResponse, outs []PolicyOutput) error {
	for _, o := range outs {
		if o.Mutates {
			if err := m.add(o.Resource.Name+"-mutated.yaml", o.Patched); err != nil {
				return err
			}
			for _, t := range o.Targets {
				if err := m.add(o.Resource.Name+"-mutated.yaml", t); err != nil {
					return err
				}
			}
		}
		for _, g := range o.Generated {
			if err := m.add(o.Policy.Name+"-generated.yaml", g.Object); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *mutatedFiles) add(name string, obj map[string]any) error {
	file := m.path
	if !m.single {
		file = filepath.Join(m.path, name)
	}
	f, err := m.file(file)
	if err == nil {
		_, err = f.Write(append(appendYAML(nil, obj), "\n---\n\n"...))
	}
	if err != nil {
		return fmt.Errorf("write mutated resources: %w", err)
	}
	return nil
}

// file returns the open file of a path, opening it (emptied the first
// time) and closing the oldest open one past maxOpenOutputs.
func (m *mutatedFiles) file(path string) (*os.File, error) {
	if f, ok := m.open[path]; ok {
		return f, nil
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if !m.created[path] {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return nil, err
	}
	m.created[path] = true
	if len(m.order) >= maxOpenOutputs {
		oldest := m.order[0]
		m.order = m.order[1:]
		err := m.open[oldest].Close()
		delete(m.open, oldest)
		if err != nil {
			f.Close()
			return nil, err
		}
	}
	m.open[path] = f
	m.order = append(m.order, path)
	return f, nil
}

func (m *mutatedFiles) finish(*ApplyResult, int) error {
	var errs []error
	if m.single && !m.created[m.path] {
		if _, err := m.file(m.path); err != nil {
			errs = append(errs, err)
		}
	}
	for _, p := range m.order {
		errs = append(errs, m.open[p].Close())
	}
	m.open, m.order = nil, nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("write mutated resources: %w", err)
	}
	return nil
}

// appendYAML appends an object as Kyverno's CLI writes it (go-yaml v3,
// four spaces): yamlenc's copy of that output, or yaml.v3 itself for what
// yamlenc leaves to it.
func appendYAML(dst []byte, obj map[string]any) []byte {
	if out, ok := yamlenc.Append(dst, obj); ok {
		return out
	}
	data, err := yaml.Marshal(obj)
	if err != nil {
		return fmt.Appendf(dst, "# %v\n", err)
	}
	return append(dst, data...)
}

// Close closes the files left open when a run stopped before finish.
func (m *mutatedFiles) Close() error {
	var errs []error
	for _, p := range m.order {
		errs = append(errs, m.open[p].Close())
	}
	m.open, m.order = nil, nil
	return errors.Join(errs...)
}
