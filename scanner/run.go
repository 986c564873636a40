package scanner

import (
	"context"
	"sort"
	"time"
)

// DefaultPolicyPoll is how often Run reads the server's policy versions
// between full scans.
const DefaultPolicyPoll = 30 * time.Second

// RunOptions configure Run.
type RunOptions struct {
	// Interval is the time between the starts of two full scans. Zero:
	// scan once and return.
	Interval time.Duration
	// PolicyPoll is how often the policy versions are read between full
	// scans; a policy that is new or whose content hash changed is
	// rescanned alone at once (ScanOptions.Policies). Default 30s.
	PolicyPoll time.Duration
	// Scanned, when set, is called after every scan with its summary and
	// error, and the policies of a policy rescan.
	Scanned func(sum Summary, rescanned []string, err error)
}

// Run scans src once, or, with an Interval, until ctx ends: a full scan
// every Interval and a rescan of the policies that changed in between. In
// periodic mode a failed scan is reported to Scanned and tried again at
// the next tick; Run returns when ctx ends. source builds the Source of a
// scan from the policies it covers (a cluster lists the kinds they match;
// files ignore them).
func (s *Scanner) Run(ctx context.Context, source func(*PolicySet) Source, opts RunOptions) error {
	if opts.PolicyPoll <= 0 {
		opts.PolicyPoll = DefaultPolicyPoll
	}
	report := func(sum Summary, rescanned []string, err error) {
		if opts.Scanned != nil {
			opts.Scanned(sum, rescanned, err)
		}
	}
	var current *PolicySet
	full := func() error {
		set, err := LoadPolicies(ctx, s.c)
		if err != nil {
			return err
		}
		current = set
		sum, err := s.Scan(ctx, source(set), set, ScanOptions{})
		report(sum, nil, err)
		return err
	}
	if err := full(); err != nil {
		if opts.Interval <= 0 {
			return err
		}
		s.opts.Logger.Warn("scan failed", "error", err)
	}
	if opts.Interval <= 0 {
		return nil
	}
	fullT := time.NewTicker(opts.Interval)
	defer fullT.Stop()
	pollT := time.NewTicker(opts.PolicyPoll)
	defer pollT.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-fullT.C:
			if err := full(); err != nil && ctx.Err() == nil {
				s.opts.Logger.Warn("scan failed", "error", err)
			}
		case <-pollT.C:
			set, ok := s.pollPolicies(ctx)
			if !ok {
				continue
			}
			changed := Changed(current, set)
			current = set
			if len(changed) == 0 {
				continue
			}
			sub := set.Only(changed)
			sum, err := s.Scan(ctx, source(sub), sub, ScanOptions{Policies: changed, mode: modePolicy})
			report(sum, changed, err)
			if err != nil && ctx.Err() == nil {
				s.opts.Logger.Warn("policy rescan failed", "policies", changed, "error", err)
			}
		}
	}
}

// Changed lists the keys of the policies of next that are new or whose
// version changed since prev, sorted.
func Changed(prev, next *PolicySet) []string {
	var out []string
	for key, hash := range next.Versions {
		if prev == nil || prev.Versions[key] != hash {
			out = append(out, key)
		}
	}
	sort.Strings(out)
	return out
}

// Only is the part of s about the policies keys.
func (s *PolicySet) Only(keys []string) *PolicySet {
	in := map[string]bool{}
	for _, k := range keys {
		in[k] = true
	}
	out := &PolicySet{Versions: map[string]string{}}
	for k, v := range s.Versions {
		if in[k] {
			out.Versions[k] = v
		}
	}
	for _, p := range s.Background {
		if in[p.Key()] {
			out.Background = append(out.Background, p)
		}
	}
	for _, p := range s.GenerateExisting {
		if in[p.Key()] {
			out.GenerateExisting = append(out.GenerateExisting, p)
		}
	}
	for _, p := range s.MutateExisting {
		if in[p.Key()] {
			out.MutateExisting = append(out.MutateExisting, p)
		}
	}
	for _, k := range s.Wildcard {
		if in[k] {
			out.Wildcard = append(out.Wildcard, k)
		}
	}
	return out
}

// pollPolicies reads the server's policies for a poll; a failure is
// logged (unless ctx ended) and the poll skipped.
func (s *Scanner) pollPolicies(ctx context.Context) (*PolicySet, bool) {
	set, err := LoadPolicies(ctx, s.c)
	if err != nil {
		if ctx.Err() == nil {
			s.opts.Logger.Warn("read policies", "error", err)
		}
		return nil, false
	}
	return set, true
}
