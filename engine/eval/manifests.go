package eval

import (
	"errors"
	"fmt"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/manifests"
	"github.com/verdict-policy/verdict/engine/policy"
)

// manifestsRule evaluates a validate.manifests rule as Kyverno's
// validateManifestHandler does: each attestor set must verify the
// request's object (its signed manifest and signatures, engine/manifests);
// the first set that does not fails the rule, an error of an entry is an
// error result when the set's count is not met, and a dry-run request
// passes. DELETE requests give no result.
func (ev *evaluation) manifestsRule(r *policy.Rule) *outcome {
	if ev.deleteRequest {
		return nil
	}
	if ev.req.DryRun {
		return pass("allowed because of DryRun request")
	}
	obj := ev.req.Object
	if req, ok := ev.base["request"].(map[string]any); ok {
		if o, ok := req["object"].(map[string]any); ok {
			obj = o
		}
	}
	v := &manifestVerifier{m: r.Manifests, obj: obj, budget: ev.budget}
	var msgs []string
	for i, set := range r.Manifests.Attestors {
		ok, reason, err := v.set(set, fmt.Sprintf(".attestors[%d]", i))
		if berr := ev.budget.Err(); berr != nil {
			return stopped(berr)
		}
		if err != nil {
			var u *manifests.UnsupportedError
			if errors.As(err, &u) {
				return errorf("%s", u.Error())
			}
			return ruleError("error occurred during manifest verification", err)
		}
		if !ok {
			return fail(reason)
		}
		msgs = append(msgs, reason)
	}
	return pass("verified manifest signatures; " + strings.Join(msgs, ","))
}

// manifestVerifier verifies one object against the attestors of a rule;
// the manifest lookup and comparison is done once.
type manifestVerifier struct {
	m       *policy.Manifests
	obj     map[string]any
	budget  *engine.Budget
	checked *manifests.Checked
}

// set is Kyverno's verifyManifestAttestorSet.
func (v *manifestVerifier) set(set policy.ManifestAttestorSet, path string) (bool, string, error) {
	required := set.Required()
	verified := 0
	var errs []string
	var unsupported error
	var passed, failed []string
	for i, a := range set.Entries {
		apath := fmt.Sprintf("%s.entries[%d]", path, i)
		var ok bool
		var reason string
		var err error
		if a.Nested != nil {
			apath += ".attestor"
			ok, reason, err = v.set(*a.Nested, apath)
			if err != nil {
				err = fmt.Errorf("failed to verify signature; %s: %w", apath, err)
			}
		} else {
			ok, reason, err = v.entry(a, apath)
		}
		switch {
		case err != nil:
			var u *manifests.UnsupportedError
			if unsupported == nil && errors.As(err, &u) {
				unsupported = err
			}
			errs = append(errs, err.Error())
		case ok:
			verified++
			passed = append(passed, reason)
		default:
			failed = append(failed, reason)
		}
		if verified >= required {
			return true, fmt.Sprintf("manifest verification succeeded; verifiedCount %d; requiredCount %d; message %s",
				verified, required, strings.Join(passed, ",")), nil
		}
	}
	if unsupported != nil {
		return false, "", unsupported
	}
	if len(errs) > 0 {
		// multierr.Combine's message.
		return false, "", errors.New(strings.Join(errs, "; "))
	}
	return false, fmt.Sprintf("manifest verification failed; verifiedCount %d; requiredCount %d; message %s",
		verified, required, strings.Join(failed, ",")), nil
}

// entry is Kyverno's k8sVerifyResource for a key attestor.
func (v *manifestVerifier) entry(a policy.ManifestAttestor, path string) (bool, string, error) {
	if len(a.Annotations) > 0 {
		have := kyverno.MetadataStrings(v.obj, "annotations")
		for key, want := range a.Annotations {
			if have[key] != want {
				return false, "", fmt.Errorf("annotations mismatch: %s does not match expected value %s for key %s", have[key], want, key)
			}
		}
	}
	path += ".keys"
	if v.checked == nil {
		v.checked = v.m.Verifier.Check(v.obj, v.budget)
	}
	res, err := v.checked.Verify(a.Key)
	if err != nil {
		var nf *manifests.NotFoundError
		if errors.As(err, &nf) {
			return false, fmt.Sprintf("%s: %s", path, err), nil
		}
		return false, "", fmt.Errorf("%s: %w", path, err)
	}
	if res.Verified {
		// Kyverno's spelling; key-based signatures have no signer name.
		return true, "singed by a valid signer: ", nil
	}
	if d := res.Diff.String(); d != "" {
		return false, fmt.Sprintf("%s: failed to verify signature. diff found; %s", path, d), nil
	}
	return false, fmt.Sprintf("%s: failed to verify signature.", path), nil
}
