package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/internal/wildcard"
	"github.com/verdict-policy/verdict/engine/jmespath"
	"github.com/verdict-policy/verdict/engine/kyverno"
)

// The variables a rule may read, as Kyverno's policy validation
// (pkg/validation/policy, allowedVariables and the three below it, v1.19)
// allows them: a variable matches one of these (anywhere in its text), or
// one of the patterns of the rule's context entries. The regular
// expressions and the message are Kyverno's, character for character.
var (
	allowedVariables                   = regexp.MustCompile(`request|serviceAccountName|serviceAccountNamespace|element|elementIndex|@|images|image|([a-z_0-9]+\()[^{}]`)
	allowedVariablesBackground         = regexp.MustCompile(`request\.|element|elementIndex|@|images|images\.|image\.|([a-z_0-9]+\()[^{}]`)
	allowedVariablesInTarget           = regexp.MustCompile(`request\.|serviceAccountName|serviceAccountNamespace|element|elementIndex|@|images|images\.|image\.|target\.|([a-z_0-9]+\()[^{}]`)
	allowedVariablesBackgroundInTarget = regexp.MustCompile(`request\.|element|elementIndex|@|images|images\.|image\.|target\.|([a-z_0-9]+\()[^{}]`)
)

func allowedVariablesFor(background, target bool) *regexp.Regexp {
	switch {
	case target && background:
		return allowedVariablesBackgroundInTarget
	case target:
		return allowedVariablesInTarget
	case background:
		return allowedVariablesBackground
	}
	return allowedVariables
}

// variableScope is what Kyverno's mock context allows: a regular
// expression and wildcard patterns of the context entries.
type variableScope struct {
	re       *regexp.Regexp
	patterns []string
}

func (s *variableScope) addEntries(entries []kyverno.ContextEntry) {
	for _, e := range entries {
		if e.APICall != nil || e.GlobalReference != nil || e.ImageRegistry != nil || e.Variable != nil {
			s.patterns = append(s.patterns, e.Name+"*")
		}
		if e.ConfigMap != nil {
			s.patterns = append(s.patterns, e.Name+".data", e.Name+".metadata", e.Name+".data.*", e.Name+".metadata.*")
		}
	}
}

// allows is Kyverno's MockContext.Query for a variable that parses.
func (s *variableScope) allows(variable string) bool {
	v := strings.ReplaceAll(variable, `"`, "")
	if s.re.MatchString(v) {
		return true
	}
	for _, p := range s.patterns {
		if wildcard.Match(p, v) {
			return true
		}
	}
	return false
}

func (s *variableScope) message(variable string) string {
	return fmt.Sprintf("variable %s must match regex \"%s\" or patterns %v", strings.ReplaceAll(variable, `"`, ""), s.re.String(), s.patterns)
}

// invalidVariables is Kyverno's allowed-variables check of a rule
// (hasInvalidVariables): every {{ }} variable of the rule must be allowed
// by the rule's scope. It reports the first variable that is not, with
// Kyverno's message and the path of its field. Match and exclude blocks
// (which may hold no variable at all, match.CompileRule) and the
// conditions of verifyImages attestations (dynamic) are not read; a
// variable that does not parse is reported by the template compilation.
func (c *compiler) invalidVariables(p *Policy, raw *kyverno.Rule, path string) {
	b, err := json.Marshal(raw)
	if err != nil || !bytes.Contains(b, []byte("{{")) {
		return
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return
	}
	delete(doc, "match")
	delete(doc, "exclude")
	if vis, ok := doc["verifyImages"].([]any); ok {
		for _, vi := range vis {
			m, _ := vi.(map[string]any)
			atts, _ := m["attestations"].([]any)
			for _, a := range atts {
				if am, ok := a.(map[string]any); ok {
					delete(am, "conditions")
				}
			}
		}
	}
	hasTargets := raw.Mutate != nil && len(raw.Mutate.Targets) > 0
	if hasTargets {
		// Each target's resource fields are checked first with the rule's
		// context and preconditions, without target variables.
		for i, t := range raw.Mutate.Targets {
			s := &variableScope{re: allowedVariablesFor(p.Background, false)}
			s.addEntries(raw.Context)
			targetDoc := map[string]any{}
			if v, ok := doc["context"]; ok {
				targetDoc["context"] = v
			}
			if v, ok := doc["preconditions"]; ok {
				targetDoc["preconditions"] = v
			}
			spec := kyverno.TargetResource{APIVersion: t.APIVersion, Kind: t.Kind, Namespace: t.Namespace, Name: t.Name, UID: t.UID, Selector: t.Selector}
			if tb, err := json.Marshal(spec); err == nil {
				var tm any
				if json.Unmarshal(tb, &tm) == nil {
					targetDoc["mutate"] = map[string]any{"targets": map[string]any{fmt.Sprint(i): tm}}
				}
			}
			if fpath, v := firstInvalidVariable(targetDoc, "", s); fpath != "" {
				fpath = strings.Replace(fpath, ".mutate.targets."+fmt.Sprint(i), fmt.Sprintf(".mutate.targets[%d]", i), 1)
				c.errorf(engine.CodeInvalidVariable, path+fpath, "policy contains invalid variables: invalid variables defined at mutate.targets[%d]: %s", i, s.message(v))
				return
			}
		}
	}
	s := &variableScope{re: allowedVariablesFor(p.Background, hasTargets)}
	s.addEntries(raw.Context)
	for _, vi := range raw.VerifyImages {
		atts, _ := vi["attestations"].([]any)
		for _, a := range atts {
			if am, ok := a.(map[string]any); ok {
				if name, ok := am["name"].(string); ok {
					s.patterns = append(s.patterns, name+"*")
				}
			}
		}
	}
	if raw.Validate != nil {
		for _, fe := range raw.Validate.Foreach {
			s.addEntries(fe.Context)
		}
	}
	if raw.Mutate != nil {
		for _, fe := range raw.Mutate.Foreach {
			s.addEntries(fe.Context)
		}
		for _, t := range raw.Mutate.Targets {
			s.addEntries(t.Context)
		}
	}
	if raw.Generate != nil {
		for _, fe := range raw.Generate.Foreach {
			s.addEntries(fe.Context)
		}
	}
	if fpath, v := firstInvalidVariable(doc, "", s); fpath != "" {
		c.errorf(engine.CodeInvalidVariable, path+fpath, "policy contains invalid variables: variable substitution failed for rule %s: %s", raw.Name, s.message(v))
	}
}

// firstInvalidVariable walks v (keys in sorted order) and returns the path
// and text of the first variable s does not allow.
func firstInvalidVariable(v any, path string, s *variableScope) (string, string) {
	return firstInStrings(v, path, false, func(t string, _ bool) string {
		if !strings.Contains(t, "{{") {
			return ""
		}
		for _, m := range variableRegexp.FindAllStringSubmatch(t, -1) {
			name := variableName(m)
			if name == "" || name == "@" || jmespath.CheckSyntax(name) != nil {
				continue
			}
			if !s.allows(name) {
				return name
			}
		}
		return ""
	})
}
