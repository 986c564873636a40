package reportwriter

// Limits of the model's string table.
const (
	// maxInterned bounds the strings the model's table holds; when it is
	// full, the table starts over (the strings already shared stay
	// shared, new ones are shared from then on).
	maxInterned = 1 << 16
	// maxInternedLen is the longest string the table holds; a longer one
	// is kept as it is.
	maxInternedLen = 1 << 10
)

// interner shares the strings that repeat across thousands of entries
// (policy names and hashes, rules, messages, categories, severities,
// kinds, namespaces): each decoded batch has its own copies of them, and
// the model keeps every entry of every resource, so one copy each instead
// of one per entry is most of an entry's memory. It is owned by the
// model's goroutine.
type interner struct {
	m map[string]string
}

// of returns the table's copy of s, adding s when it has none.
func (t *interner) of(s string) string {
	if s == "" || len(s) > maxInternedLen {
		return s
	}
	if v, ok := t.m[s]; ok {
		return v
	}
	if t.m == nil || len(t.m) >= maxInterned {
		t.m = make(map[string]string, min(maxInterned, 1024))
	}
	t.m[s] = s
	return s
}

// entry shares the strings of e.
func (t *interner) entry(e Entry) Entry {
	e.Policy, e.Rule, e.Message = t.of(e.Policy), t.of(e.Rule), t.of(e.Message)
	e.Category, e.Severity = t.of(e.Category), t.of(e.Severity)
	return e
}

// policy shares the strings of p.
func (t *interner) policy(p PolicyVersion) PolicyVersion {
	p.Kind, p.Namespace, p.Name, p.Hash = t.of(p.Kind), t.of(p.Namespace), t.of(p.Name), t.of(p.Hash)
	return p
}

// resource shares the strings of r that repeat (its name and UID do not).
func (t *interner) resource(r Resource) Resource {
	r.APIVersion, r.Kind, r.Namespace = t.of(r.APIVersion), t.of(r.Kind), t.of(r.Namespace)
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
