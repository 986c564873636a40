// Package layout lists the JSON fields of struct types with
// encoding/json's rules, for jsonconv's reflection converter and for the
// generator of its typed converters (one copy of the rules for both).
package layout
