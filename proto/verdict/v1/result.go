package verdictv1

// Name is the result as reports and Kyverno name it: "pass", "fail",
// "warn", "error" or "skip"; "" for RESULT_UNSPECIFIED or an unknown
// value.
func (r Result) Name() string {
	switch r {
	case Result_RESULT_PASS:
		return "pass"
	case Result_RESULT_FAIL:
		return "fail"
	case Result_RESULT_WARN:
		return "warn"
	case Result_RESULT_ERROR:
		return "error"
	case Result_RESULT_SKIP:
		return "skip"
	}
	return ""
}
