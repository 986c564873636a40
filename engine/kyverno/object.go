package kyverno

// StringMap returns the string values of v when v is a JSON object
// (labels, annotations): nil when v is not an object or is empty. Values
// that are not strings are left out, as Kubernetes would refuse them.
func StringMap(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// MetadataStrings is StringMap of metadata.<field> of obj
// ("labels", "annotations").
func MetadataStrings(obj map[string]any, field string) map[string]string {
	md, _ := obj["metadata"].(map[string]any)
	return StringMap(md[field])
}
