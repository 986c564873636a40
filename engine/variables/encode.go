package variables

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/verdict-policy/verdict/engine/internal/jsonquote"
)

// appendJSON encodes v as Kyverno does when it embeds a value in a string
// (json-iterator's ConfigCompatibleWithStandardLibrary): map keys sorted,
// <, > and & escaped, floats in the shortest form without a trailing ".0" and
// with an unpadded exponent only below 1e-6 or from 1e21 on ("1e-07").
func appendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		return jsonquote.Append(b, x, jsonquote.Iterator), nil
	case float64:
		return appendFloat(b, x, 64)
	case float32:
		return appendFloat(b, float64(x), 32)
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int8:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case uint:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case json.Number:
		if x == "" {
			return append(b, '0'), nil
		}
		return append(b, x...), nil
	case map[string]any:
		b, err := jsonquote.AppendObject(b, x, jsonquote.Iterator, appendJSON)
		if err != nil {
			return nil, err
		}
		return b, nil
	case []any:
		b, err := jsonquote.AppendArray(b, x, appendJSON)
		if err != nil {
			return nil, err
		}
		return b, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, raw...), nil
}

func appendFloat(b []byte, f float64, bits int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("unsupported value: %f", f)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) ||
			bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	return strconv.AppendFloat(b, f, format, -1, bits), nil
}
