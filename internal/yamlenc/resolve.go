package yamlenc

import (
	"strconv"
	"strings"
	"time"
)

// isInteger reports whether s, in base (0: by its prefix), is an int64
// or a uint64, as yaml.v3's resolve reads integers.
func isInteger(s string, base int) bool {
	if _, err := strconv.ParseInt(s, base, 64); err == nil {
		return true
	}
	_, err := strconv.ParseUint(s, base, 64)
	return err == nil
}

// plainIsString reports whether s, written plain, reads back as a string:
// yaml.v3's resolve("", s) == "!!str", with the same steps (its table of
// first characters, its map of names, timestamps, integers in every base
// it reads, YAML-style floats).
func plainIsString(s string) bool {
	if s == "" {
		return false // null
	}
	var hint byte
	switch c := s[0]; {
	case c == '+' || c == '-':
		hint = 'S'
	case c >= '0' && c <= '9':
		hint = 'D'
	case strings.IndexByte("yYnNtTfFoO~", c) >= 0:
		hint = 'M'
	case c == '.':
		hint = '.'
	default:
		return true
	}
	switch s {
	case "true", "True", "TRUE", "false", "False", "FALSE", "~", "null", "Null", "NULL",
		".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return false
	}
	switch hint {
	case 'M':
		return true
	case '.':
		_, err := strconv.ParseFloat(s, 64)
		return err != nil
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(numberBytes, s[i]) < 0 {
			return true // "100m", "64Mi": no number or timestamp has this byte
		}
	}
	if IsTimestamp(s) {
		return false
	}
	plain := strings.ReplaceAll(s, "_", "")
	if isInteger(plain, 0) {
		return false
	}
	if isYAMLStyleFloat(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return false
		}
	}
	for _, p := range [...]struct {
		prefix string
		base   int
	}{{"0b", 2}, {"0o", 8}} {
		switch {
		case strings.HasPrefix(plain, p.prefix):
			if isInteger(plain[2:], p.base) {
				return false
			}
		case strings.HasPrefix(plain, "-"+p.prefix):
			if _, err := strconv.ParseInt("-"+plain[3:], p.base, 64); err == nil {
				return false
			}
		}
	}
	return true
}

// numberBytes holds every byte that the integers, floats and timestamps
// below can hold (a superset): a string with another byte is a string,
// without the parse attempts (whose errors allocate).
const numberBytes = "0123456789abcdefABCDEFxXoObB+-._:tTzZ "

// timestampFormats are yaml.v3's allowedTimestampFormats.
var timestampFormats = [...]string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

// IsTimestamp reports whether s reads back as a timestamp: go-yaml's
// parseTimestamp succeeding, the same in v2 and v3 (so that a writer of
// either's output quotes such a string).
func IsTimestamp(s string) bool {
	i := 0
	for ; i < len(s); i++ {
		if c := s[i]; c < '0' || c > '9' {
			break
		}
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	for _, format := range timestampFormats {
		if _, err := time.Parse(format, s); err == nil {
			return true
		}
	}
	return false
}

func digitsAt(s string, i int) int {
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return j
}

// isYAMLStyleFloat matches yaml.v3's yamlStyleFloat,
// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$.
func isYAMLStyleFloat(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	if i < len(s) && s[i] == '.' {
		j := digitsAt(s, i+1)
		if j == i+1 {
			return false
		}
		i = j
	} else {
		j := digitsAt(s, i)
		if j == i {
			return false
		}
		i = j
		if i < len(s) && s[i] == '.' {
			i = digitsAt(s, i+1)
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		j := digitsAt(s, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

// isBase60Float is yaml.v3's isBase60Float: s matches
// ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$.
func isBase60Float(s string) bool {
	if s == "" {
		return false
	}
	if c := s[0]; !(c == '+' || c == '-' || c >= '0' && c <= '9') || strings.IndexByte(s, ':') < 0 {
		return false
	}
	i := 0
	if s[i] == '-' || s[i] == '+' {
		i++
	}
	if i >= len(s) || s[i] < '0' || s[i] > '9' {
		return false
	}
	for i++; i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '_'); i++ {
	}
	groups := 0
	for i < len(s) && s[i] == ':' {
		i++
		// [0-5]?[0-9]: one or two digits, the first of two at most 5.
		switch {
		case i+1 < len(s) && s[i] >= '0' && s[i] <= '5' && s[i+1] >= '0' && s[i+1] <= '9':
			i += 2
		case i < len(s) && s[i] >= '0' && s[i] <= '9':
			i++
		default:
			return false
		}
		groups++
	}
	if groups == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '_'); i++ {
		}
	}
	return i == len(s)
}

// isOldBool is yaml.v3's isOldBool: YAML 1.1 booleans, quoted on the
// way out.
func isOldBool(s string) bool {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON",
		"n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return true
	}
	return false
}
