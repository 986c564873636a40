// Command verdict is Verdict's command line: a Kyverno-compatible policy
// engine.
//
//	verdict test PATH...                        run kyverno-test.yaml suites
//	verdict apply POLICY... --resource FILE     apply policies to resources (or to a cluster's: --cluster)
//	verdict eval -f FILE --server ADDR          evaluate resources on a decision server
//	verdict serve --policies DIR --listen ADDR  the gRPC decision server
//	verdict run                                 the same, on loopback, with examples/policies and the report writer
//	verdict webhook --server ADDR               the admission webhook proxy
//	verdict scan --server ADDR (-f PATH | --in-cluster)  background scans
//	verdict reports serve|get                   the report writer; PolicyReports like kubectl get polr
//	verdict cleanup --in-cluster                run the cluster's DeletingPolicies on their schedules (cleanup)
//	verdict jp query|parse|function             JMESPath with Kyverno's functions, as kyverno jp
//	verdict version                             print the version, build time and commit, as kyverno version
//
// Each subcommand lives in its own file and wires its flags to the
// packages that do the work: kyvernotest (test, apply), server
// (serve, run), webhookproxy (webhook), scanner (scan), cleanup (cleanup),
// reportwriter and its leader and publish packages (reports serve, the
// report writer of serve and run), client (eval, reports get),
// engine/jmespath (jp). What stays here is flag
// parsing, the connections and stores the flags name, the printing of
// results, and the exit code: 0 when everything passed, 1 on failures or
// errors, 2 on bad usage. Flags are defined here and nowhere else.
//
// apply and test take every flag of kyverno apply and kyverno test 1.19,
// klog's global flags included (kyvernoflags.go): those Verdict cannot
// honour are refused with an error naming the flag and what to do
// instead (exit 2), never "unknown flag", never silently dropped.
//
// Every command that reads files (apply, test, eval, scan, and serve's
// policy folder) reads only regular files: a named pipe, device or socket
// in a folder is skipped with a warning on stderr (or in the log), one
// given as an argument is an error, never a read that hangs (apply's
// policy or resource path - reads standard input, as kyverno apply does).
// apply and scan read resource files one document at a time
// (--max-document-bytes limits one document) and print through spools,
// so that their memory does not grow with the files; scan stops at once
// on SIGTERM or Ctrl-C.
package main
