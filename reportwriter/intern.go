package reportwriter

import "github.com/verdict-policy/verdict/internal/strtable"

// interner shares the strings that repeat across thousands of entries
// (policy names and hashes, rules, messages, categories, severities,
// kinds, namespaces): each decoded batch has its own copies of them, and
// the model keeps every entry of every resource, so one copy each instead
// of one per entry is most of an entry's memory. It is owned by the
// model's goroutine.
type interner struct {
	strtable.Table
}

// entry shares the strings of e.
func (t *interner) entry(e Entry) Entry {
	e.Policy, e.Rule, e.Message = t.Of(e.Policy), t.Of(e.Rule), t.Of(e.Message)
	e.Category, e.Severity = t.Of(e.Category), t.Of(e.Severity)
	return e
}

// policy shares the strings of p.
func (t *interner) policy(p PolicyVersion) PolicyVersion {
	p.Kind, p.Namespace, p.Name, p.Hash = t.Of(p.Kind), t.Of(p.Namespace), t.Of(p.Name), t.Of(p.Hash)
	return p
}

// resource shares the strings of r that repeat (its name and UID do not).
func (t *interner) resource(r Resource) Resource {
	r.APIVersion, r.Kind, r.Namespace = t.Of(r.APIVersion), t.Of(r.Kind), t.Of(r.Namespace)
	return r
}

// intermediary shares the strings of in, in place (one just decoded from
// the store, that nothing else holds yet).
func (t *interner) intermediary(in *Intermediary) {
	in.Owner = t.resource(in.Owner)
	for i := range in.Policies {
		in.Policies[i] = t.policy(in.Policies[i])
	}
	for i := range in.Results {
		in.Results[i] = t.entry(in.Results[i])
	}
}
