package kyvernotest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWildcard(t *testing.T) {
	tests := []struct {
		name        string
		givePattern string
		giveS       string
		want        bool
	}{
		{name: "star matches all", givePattern: "*", giveS: "anything", want: true},
		{name: "literal", givePattern: "abc", giveS: "abc", want: true},
		{name: "literal mismatch", givePattern: "abc", giveS: "abd", want: false},
		{name: "prefix", givePattern: "require-*", giveS: "require-labels", want: true},
		{name: "infix", givePattern: "a*c*e", giveS: "abcde", want: true},
		{name: "question mark", givePattern: "p?d", giveS: "pod", want: true},
		{name: "question mark needs a character", givePattern: "pod?", giveS: "pod", want: false},
		{name: "star matches empty", givePattern: "pod*", giveS: "pod", want: true},
		{name: "suffix mismatch", givePattern: "*-a", giveS: "x-b", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wildcard(tt.givePattern, tt.giveS); got != tt.want {
				t.Errorf("wildcard(%q, %q) = %v, want %v", tt.givePattern, tt.giveS, got, tt.want)
			}
		})
	}
}

func TestSelectorApply(t *testing.T) {
	give := ExpectedResult{Policy: "require-labels", Rule: "check", Resources: []string{"pod-a", "pod-b"}, Result: "pass"}
	tests := []struct {
		name         string
		giveSelector string
		giveResult   ExpectedResult
		wantOK       bool
		wantRes      []string
	}{
		{name: "default selector keeps everything", giveSelector: "policy=*,rule=*,resource=*", giveResult: give, wantOK: true, wantRes: []string{"pod-a", "pod-b"}},
		{name: "empty selector keeps everything", giveSelector: "", giveResult: give, wantOK: true, wantRes: []string{"pod-a", "pod-b"}},
		{name: "policy wildcard", giveSelector: "policy=require-*", giveResult: give, wantOK: true, wantRes: []string{"pod-a", "pod-b"}},
		{name: "policy mismatch", giveSelector: "policy=other", giveResult: give, wantOK: false, wantRes: []string{"pod-a", "pod-b"}},
		{name: "rule mismatch", giveSelector: "rule=x*", giveResult: give, wantOK: false, wantRes: []string{"pod-a", "pod-b"}},
		{name: "a resource filter replaces the resources", giveSelector: "resource=pod-b", giveResult: give, wantOK: true, wantRes: []string{"pod-b"}},
		{name: "a result without rule passes the rule filter", giveSelector: "rule=x", giveResult: ExpectedResult{Policy: "p"}, wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := parseSelector(tt.giveSelector)
			if err != nil {
				t.Fatalf("parseSelector(%q) error = %v", tt.giveSelector, err)
			}
			got, ok := sel.apply(tt.giveResult)
			if ok != tt.wantOK {
				t.Errorf("apply(%q) = %v, want %v", tt.giveSelector, ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.wantRes, got.Resources); diff != "" {
				t.Errorf("apply(%q) resources mismatch (-want +got):\n%s", tt.giveSelector, diff)
			}
		})
	}
}

func TestParseSelectorErrors(t *testing.T) {
	for _, give := range []string{"policy", "kind=Pod", "policy=a=b"} {
		if _, err := parseSelector(give); err == nil {
			t.Errorf("parseSelector(%q) error = nil, want an error", give)
		}
	}
}
