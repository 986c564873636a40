package jmespath

import (
	"strings"

	gojmespath "github.com/kyverno/go-jmespath"
)

// argType is a set of JMESPath value types, written String|Number for a
// union. The bit order is also the order in which the types are listed in
// signatures and type errors.
type argType uint16

const (
	tString argType = 1 << iota
	tNumber
	tBool
	tObject
	tArray
	tArrayString
	tArrayNumber
	tExpref
	tAny
)

// jpNames are the go-jmespath names of the types, in bit order. "bool" is
// Kyverno's name for the boolean return type (go-jmespath has none).
var jpNames = [...]gojmespath.JpType{
	gojmespath.JpString,
	gojmespath.JpNumber,
	"bool",
	gojmespath.JpObject,
	gojmespath.JpArray,
	gojmespath.JpArrayString,
	gojmespath.JpArrayNumber,
	gojmespath.JpExpref,
	gojmespath.JpAny,
}

// jpTypes lists the types of t in bit order.
func (t argType) jpTypes() []gojmespath.JpType {
	var out []gojmespath.JpType
	for i, name := range jpNames {
		if t&(1<<i) != 0 {
			out = append(out, name)
		}
	}
	return out
}

func (t argType) String() string {
	names := t.jpTypes()
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = string(n)
	}
	return strings.Join(parts, "|")
}

// function is one row of the function table. Impl is nil for the JMESPath
// built-ins, which go-jmespath provides itself; the row exists so that Parse
// can check calls to them.
type function struct {
	Name string
	Args []argType
	// Variadic: the last argument may repeat (at least one is required).
	Variadic bool
	Returns  argType
	Impl     func(e *env, args []any) (any, error)
	Note     string
}

func (f function) builtin() bool { return f.Impl == nil }

// signature renders f like Kyverno's `kyverno jp function` does:
// "name(string, string|number) bool".
func (f function) signature() string {
	var b strings.Builder
	b.WriteString(f.Name)
	b.WriteByte('(')
	for i, a := range f.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.String())
	}
	if f.Variadic {
		b.WriteString(", ...")
	}
	b.WriteString(") ")
	b.WriteString(f.Returns.String())
	return b.String()
}

// functions is the complete function table: Kyverno's custom functions (in
// Kyverno's order, with Kyverno's argument types and notes), then the
// JMESPath built-ins that Kyverno does not override. It is never modified.
var functions = []function{
	// Strings.
	{Name: "compare", Args: []argType{tString, tString}, Returns: tNumber, Impl: jpCompare,
		Note: "compares two strings lexicographically"},
	{Name: "equal_fold", Args: []argType{tString, tString}, Returns: tBool, Impl: jpEqualFold,
		Note: "allows comparing two strings for equivalency where the only differences are letter cases"},
	{Name: "replace", Args: []argType{tString, tString, tString, tNumber}, Returns: tString, Impl: jpReplace,
		Note: "replaces a specified number of instances of the source string with the replacement string in a parent "},
	{Name: "replace_all", Args: []argType{tString, tString, tString}, Returns: tString, Impl: jpReplaceAll,
		Note: "replace all instances of one string with another in an overall parent string"},
	{Name: "to_upper", Args: []argType{tString}, Returns: tString, Impl: jpToUpper,
		Note: "takes in a string and outputs the same string with all upper-case letters"},
	{Name: "to_lower", Args: []argType{tString}, Returns: tString, Impl: jpToLower,
		Note: "takes in a string and outputs the same string with all lower-case letters"},
	{Name: "trim", Args: []argType{tString, tString}, Returns: tString, Impl: jpTrim,
		Note: "trims both ends of the source string by characters appearing in the second string"},
	{Name: "trim_prefix", Args: []argType{tString, tString}, Returns: tString, Impl: jpTrimPrefix,
		Note: "trims the second string prefix from the first string if the first string starts with the prefix"},
	{Name: "split", Args: []argType{tString, tString}, Returns: tArrayString, Impl: jpSplit,
		Note: "splits the first string when the second string is found and converts it into an array "},
	{Name: "regex_replace_all", Args: []argType{tString, tString | tNumber, tString | tNumber}, Returns: tString, Impl: jpRegexReplaceAll,
		Note: "converts all parameters to string"},
	{Name: "regex_replace_all_literal", Args: []argType{tString, tString | tNumber, tString | tNumber}, Returns: tString, Impl: jpRegexReplaceAllLiteral,
		Note: "converts all parameters to string"},
	{Name: "regex_match", Args: []argType{tString, tString | tNumber}, Returns: tBool, Impl: jpRegexMatch,
		Note: "first string is the regular exression which is compared with second input which can be a number or string"},
	{Name: "pattern_match", Args: []argType{tString, tString | tNumber}, Returns: tBool, Impl: jpPatternMatch,
		Note: "'*' matches zero or more alphanumeric characters, '?' matches a single alphanumeric character"},
	{Name: "label_match", Args: []argType{tObject, tObject}, Returns: tBool, Impl: jpLabelMatch,
		Note: "object arguments must be enclosed in backticks; ex. `{{request.object.spec.template.metadata.labels}}`"},
	{Name: "to_boolean", Args: []argType{tString}, Returns: tBool, Impl: jpToBoolean,
		Note: "It returns true or false for any string, such as 'True', 'TruE', 'False', 'FAlse', 'faLSE', etc."},

	// Arithmetic.
	{Name: "add", Args: []argType{tAny, tAny}, Returns: tAny, Impl: jpAdd,
		Note: "does arithmetic addition of two specified values of numbers, quantities, and durations"},
	{Name: "sum", Args: []argType{tArray}, Returns: tAny, Impl: jpSum,
		Note: "does arithmetic addition of specified array of values of numbers, quantities, and durations"},
	{Name: "subtract", Args: []argType{tAny, tAny}, Returns: tAny, Impl: jpSubtract,
		Note: "does arithmetic subtraction of two specified values of numbers, quantities, and durations"},
	{Name: "multiply", Args: []argType{tAny, tAny}, Returns: tAny, Impl: jpMultiply,
		Note: "does arithmetic multiplication of two specified values of numbers, quantities, and durations"},
	{Name: "divide", Args: []argType{tAny, tAny}, Returns: tAny, Impl: jpDivide,
		Note: "divisor must be non zero"},
	{Name: "modulo", Args: []argType{tAny, tAny}, Returns: tAny, Impl: jpModulo,
		Note: "divisor must be non-zero, arguments must be integers"},
	{Name: "round", Args: []argType{tNumber, tNumber}, Returns: tNumber, Impl: jpRound,
		Note: "does roundoff to upto the given decimal places"},

	// Encoding, current time, paths, versions, JSON and YAML.
	{Name: "base64_decode", Args: []argType{tString}, Returns: tString, Impl: jpBase64Decode,
		Note: "decodes a base 64 string"},
	{Name: "base64_encode", Args: []argType{tString}, Returns: tString, Impl: jpBase64Encode,
		Note: "encodes a regular, plaintext and unencoded string to base64"},
	{Name: "time_since", Args: []argType{tString, tString, tString}, Returns: tString, Impl: jpTimeSince,
		Note: "calculate the difference between a start and end period of time where the end may either be a static definition or the then-current time"},
	{Name: "time_now", Returns: tString, Impl: jpTimeNow,
		Note: "returns current time in RFC 3339 format"},
	{Name: "time_now_utc", Returns: tString, Impl: jpTimeNowUTC,
		Note: "returns current UTC time in RFC 3339 format"},
	{Name: "path_canonicalize", Args: []argType{tString}, Returns: tString, Impl: jpPathCanonicalize,
		Note: "normalizes or canonicalizes a given path by removing excess slashes"},
	{Name: "truncate", Args: []argType{tString, tNumber}, Returns: tString, Impl: jpTruncate,
		Note: "length argument must be enclosed in backticks; ex. \"{{request.object.metadata.name | truncate(@, `9`)}}\""},
	{Name: "semver_compare", Args: []argType{tString, tString}, Returns: tBool, Impl: jpSemverCompare,
		Note: "compares two strings which comply with the semantic versioning schema and outputs a boolean response as to the position of the second relative to the first"},
	{Name: "parse_json", Args: []argType{tString}, Returns: tAny, Impl: jpParseJSON,
		Note: "decodes a valid JSON encoded string to the appropriate type. Opposite of `to_string` function"},
	{Name: "parse_yaml", Args: []argType{tString}, Returns: tAny, Impl: jpParseYAML,
		Note: "decodes a valid YAML encoded string to the appropriate type provided it can be represented as JSON"},

	// Objects and arrays.
	{Name: "lookup", Args: []argType{tObject | tArray, tString | tNumber}, Returns: tAny, Impl: jpLookup,
		Note: "returns the value corresponding to the given key/index in the given object/array"},
	{Name: "items", Args: []argType{tObject | tArray, tString, tString}, Returns: tArray, Impl: jpItems,
		Note: "converts a map or array to an array of objects where each key:value is an item in the array"},
	{Name: "object_from_lists", Args: []argType{tArray, tArray}, Returns: tObject, Impl: jpObjectFromLists,
		Note: "converts a pair of lists containing keys and values to an object"},
	{Name: "random", Args: []argType{tString}, Returns: tString, Impl: jpRandom,
		Note: "Generates a random sequence of characters"},
	{Name: "x509_decode", Args: []argType{tString}, Returns: tObject, Impl: jpX509Decode,
		Note: "decodes an x.509 certificate to an object. you may also use this in conjunction with `base64_decode` jmespath function to decode a base64-encoded certificate"},

	// Time.
	{Name: "time_to_cron", Args: []argType{tString}, Returns: tString, Impl: jpTimeToCron,
		Note: "converts a time (RFC 3339) to a cron expression (string)."},
	{Name: "time_add", Args: []argType{tString, tString}, Returns: tString, Impl: jpTimeAdd,
		Note: "adds duration (second string) to a time value (first string)"},
	{Name: "time_parse", Args: []argType{tString, tString}, Returns: tString, Impl: jpTimeParse,
		Note: "changes a time value of a given layout to RFC 3339"},
	{Name: "time_utc", Args: []argType{tString}, Returns: tString, Impl: jpTimeUTC,
		Note: "calcutes time in UTC from a given time in RFC 3339 format"},
	{Name: "time_diff", Args: []argType{tString, tString}, Returns: tString, Impl: jpTimeDiff,
		Note: "calculate the difference between a start and end date in RFC3339 format"},
	{Name: "time_before", Args: []argType{tString, tString}, Returns: tBool, Impl: jpTimeBefore,
		Note: "checks if a time is before another time, both in RFC3339 format"},
	{Name: "time_after", Args: []argType{tString, tString}, Returns: tBool, Impl: jpTimeAfter,
		Note: "checks if a time is after another time, both in RFC3339 format"},
	{Name: "time_between", Args: []argType{tString, tString, tString}, Returns: tBool, Impl: jpTimeBetween,
		Note: "checks if a time is between a start and end time, all in RFC3339 format"},
	{Name: "time_truncate", Args: []argType{tString, tString}, Returns: tString, Impl: jpTimeTruncate,
		Note: "returns the result of rounding time down to a multiple of duration"},

	// Images, URLs, hashes.
	{Name: "image_normalize", Args: []argType{tString}, Returns: tString, Impl: jpImageNormalize,
		Note: "normalizes an image reference"},
	{Name: "is_external_url", Args: []argType{tString}, Returns: tBool, Impl: jpIsExternalURL,
		Note: "determine if a URL points to an external network address"},
	{Name: "sha256", Args: []argType{tString}, Returns: tString, Impl: jpSHA256,
		Note: "generate unique resources name if length exceeds the limit"},
	{Name: "sha1", Args: []argType{tString}, Returns: tString, Impl: jpSHA1,
		Note: "generate a SHA-1 hash"},
	{Name: "md5", Args: []argType{tString}, Returns: tString, Impl: jpMD5,
		Note: "generates an MD5 hash"},

	// JMESPath built-ins (provided by go-jmespath; listed for Parse).
	{Name: "abs", Args: []argType{tNumber}, Returns: tNumber, Note: "absolute value"},
	{Name: "avg", Args: []argType{tArrayNumber}, Returns: tNumber, Note: "average of an array of numbers"},
	{Name: "ceil", Args: []argType{tNumber}, Returns: tNumber, Note: "smallest integer not less than the number"},
	{Name: "contains", Args: []argType{tArray | tString, tAny}, Returns: tBool, Note: "whether the array holds the value, or the string the substring"},
	{Name: "ends_with", Args: []argType{tString, tString}, Returns: tBool, Note: "whether the first string ends with the second"},
	{Name: "floor", Args: []argType{tNumber}, Returns: tNumber, Note: "largest integer not greater than the number"},
	{Name: "join", Args: []argType{tString, tArrayString}, Returns: tString, Note: "joins the strings with the separator"},
	{Name: "keys", Args: []argType{tObject}, Returns: tArray, Note: "keys of an object"},
	{Name: "length", Args: []argType{tString | tArray | tObject}, Returns: tNumber, Note: "length of a string, array or object"},
	{Name: "map", Args: []argType{tExpref, tArray}, Returns: tArray, Note: "applies the expression to every element"},
	{Name: "max", Args: []argType{tArrayNumber | tArrayString}, Returns: tNumber | tString, Note: "largest element"},
	{Name: "max_by", Args: []argType{tArray, tExpref}, Returns: tAny, Note: "element with the largest expression value"},
	{Name: "merge", Args: []argType{tObject}, Variadic: true, Returns: tObject, Note: "merges objects; later keys win"},
	{Name: "min", Args: []argType{tArrayNumber | tArrayString}, Returns: tNumber | tString, Note: "smallest element"},
	{Name: "min_by", Args: []argType{tArray, tExpref}, Returns: tAny, Note: "element with the smallest expression value"},
	{Name: "not_null", Args: []argType{tAny}, Variadic: true, Returns: tAny, Note: "first argument that is not null"},
	{Name: "reverse", Args: []argType{tArray | tString}, Returns: tArray | tString, Note: "reverses an array or string"},
	{Name: "sort", Args: []argType{tArrayString | tArrayNumber}, Returns: tArray, Note: "sorts strings or numbers"},
	{Name: "sort_by", Args: []argType{tArray, tExpref}, Returns: tArray, Note: "sorts by the expression value"},
	{Name: "starts_with", Args: []argType{tString, tString}, Returns: tBool, Note: "whether the first string starts with the second"},
	{Name: "to_array", Args: []argType{tAny}, Returns: tArray, Note: "wraps a non-array in an array"},
	{Name: "to_number", Args: []argType{tAny}, Returns: tNumber, Note: "converts a string or number to a number, else null"},
	{Name: "to_string", Args: []argType{tAny}, Returns: tString, Note: "JSON-encodes a non-string"},
	{Name: "type", Args: []argType{tAny}, Returns: tString, Note: "JMESPath type name of the value"},
	{Name: "values", Args: []argType{tObject}, Returns: tArray, Note: "values of an object"},
}

// lookupFunction returns the table row for name.
func lookupFunction(name string) (function, bool) {
	for _, f := range functions {
		if f.Name == name {
			return f, true
		}
	}
	return function{}, false
}

// FunctionInfo describes one function that expressions may call.
type FunctionInfo struct {
	Name string
	// Signature is "name(arg types) return type", for example
	// "regex_match(string, string|number) bool".
	Signature string
	Note      string
	// Builtin is true for the standard JMESPath functions and false for
	// Kyverno's custom functions.
	Builtin bool
}

// Functions lists every function expressions may call: Kyverno's custom
// functions first, then the JMESPath built-ins.
func Functions() []FunctionInfo {
	out := make([]FunctionInfo, len(functions))
	for i, f := range functions {
		out[i] = FunctionInfo{Name: f.Name, Signature: f.signature(), Note: f.Note, Builtin: f.builtin()}
	}
	return out
}
