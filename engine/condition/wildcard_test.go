package condition

import (
	"strings"
	"testing"
)

func TestWildcardMatch(t *testing.T) {
	tests := []struct {
		name        string
		givePattern string
		giveName    string
		want        bool
	}{
		{name: "star matches anything", givePattern: "*", giveName: "s3:GetObject", want: true},
		{name: "star matches empty", givePattern: "*", giveName: "", want: true},
		{name: "empty pattern matches only empty", givePattern: "", giveName: "a", want: false},
		{name: "empty matches empty", givePattern: "", giveName: "", want: true},
		{name: "suffix star", givePattern: "s3:*", giveName: "s3:ListMultipartUploadParts", want: true},
		{name: "exact", givePattern: "s3:ListBucket", giveName: "s3:ListBucket", want: true},
		{name: "pattern longer than name", givePattern: "s3:ListBucketMultipartUploads", giveName: "s3:ListBucket", want: false},
		{name: "star matches nothing", givePattern: "my-bucket/oo*", giveName: "my-bucket/oo", want: true},
		{name: "star crosses slashes", givePattern: "my-bucket/In*", giveName: "my-bucket/India/Karnataka/", want: true},
		{name: "prefix mismatch", givePattern: "my-bucket/In*", giveName: "my-bucket/Karnataka/India/", want: false},
		{name: "several stars", givePattern: "my-bucket/In*/Ka*/Ban", giveName: "my-bucket/India/State1/Karnataka/Area1/Ban", want: true},
		{name: "several stars, repeated tail", givePattern: "my-bucket/In*/Ka*/Ban", giveName: "my-bucket/India/Karnataka/Ban/Ban/Ban", want: true},
		{name: "several stars, wrong tail", givePattern: "my-bucket/In*/Ka*/Ban", giveName: "my-bucket/India/Karnataka/Bangalore", want: false},
		{name: "question mark needs a character", givePattern: "my-bucket?/abc*", giveName: "mybucket/abc", want: false},
		{name: "question mark matches one", givePattern: "my-bucket?/abc*", giveName: "my-bucket1/abc", want: true},
		{name: "question mark matches slash", givePattern: "my-bucket?abc*", giveName: "my-bucket/abc", want: true},
		{name: "question marks count", givePattern: "my-bucket/abc????", giveName: "my-bucket/abcde", want: false},
		{name: "question marks exact count", givePattern: "my-bucket/abc????", giveName: "my-bucket/abcdefg", want: true},
		{name: "trailing question mark too long", givePattern: "my-bucket/abc?", giveName: "my-bucket/abcde", want: false},
		{name: "star then question mark needs one", givePattern: "my-bucket/mnop*?", giveName: "my-bucket/mnop", want: false},
		{name: "star then question mark", givePattern: "my-bucket/mnop*?and", giveName: "my-bucket/mnopqand", want: true},
		{name: "star then question mark, missing", givePattern: "my-bucket/mnop*?and", giveName: "my-bucket/mnopand", want: false},
		{name: "trailing characters", givePattern: "my-bucket/mnop*?and", giveName: "my-bucket/mnopqanda", want: false},
		{name: "double star", givePattern: "a**b", giveName: "axxb", want: true},
		{name: "trailing stars after full match", givePattern: "ab**", giveName: "ab", want: true},
		{name: "trailing question mark after full match", givePattern: "ab*?", giveName: "ab", want: false},
		{name: "question mark is one rune, not one byte", givePattern: "caf?", giveName: "café", want: true},
		{name: "multi-byte literal", givePattern: "é*", giveName: "été", want: true},
		{name: "invalid UTF-8 bytes all read as U+FFFD", givePattern: "\xfe", giveName: "\xff", want: true},
		{name: "invalid byte vs replacement character", givePattern: "\uFFFD", giveName: "\xff", want: true},
		{name: "no character classes", givePattern: "[ab]", giveName: "a", want: false},
		{name: "backslash is literal", givePattern: `a\*`, giveName: `a\bc`, want: true},
		{name: "many stars stay fast", givePattern: strings.Repeat("*a", 30) + "b", giveName: strings.Repeat("a", 200), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wildcardMatch(tt.givePattern, tt.giveName); got != tt.want {
				t.Errorf("wildcardMatch(%q, %q) = %v, want %v", tt.givePattern, tt.giveName, got, tt.want)
			}
		})
	}
}

// referenceMatch is the backtracking algorithm of
// github.com/IGLOU-EU/go-wildcard v1.0.3, which Kyverno uses; FuzzWildcard
// checks wildcardMatch against it.
func referenceMatch(pattern, name string) bool {
	if pattern == "" {
		return name == ""
	}
	if pattern == "*" {
		return true
	}
	return referenceRunes([]rune(name), []rune(pattern))
}

func referenceRunes(str, pattern []rune) bool {
	for len(pattern) > 0 {
		switch pattern[0] {
		default:
			if len(str) == 0 || str[0] != pattern[0] {
				return false
			}
		case '?':
			if len(str) == 0 {
				return false
			}
		case '*':
			return referenceRunes(str, pattern[1:]) || (len(str) > 0 && referenceRunes(str[1:], pattern))
		}
		str = str[1:]
		pattern = pattern[1:]
	}
	return len(str) == 0 && len(pattern) == 0
}
