// Package hostile generates the hostile policies that once took a Verdict
// process down, for the tests of every part that compiles or evaluates
// policies (server, webhook proxy, CLI): JMESPath expressions that
// overflowed go-jmespath's recursive parser, and a condition whose nested
// replace_all calls ran the process out of memory. Each is built in code,
// at its full size, so that no large fixture file is committed.
//
// It holds test fixtures only: nothing of the product imports it.
package hostile
