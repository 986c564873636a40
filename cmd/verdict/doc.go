// Command verdict is Verdict's command line: a Kyverno-compatible policy
// engine.
//
//	verdict test PATH...                      run kyverno-test.yaml suites
//	verdict apply POLICY... --resource FILE   apply policies to resources
//	verdict version                           print the version
//	verdict serve --policies DIR --listen ADDR  the gRPC decision server
//	verdict run                               the same, on loopback, with examples/policies and the report writer
//	verdict reports serve|get                 the report writer; PolicyReports like kubectl get polr
//	verdict cleanup --in-cluster              run the cluster's DeletingPolicies on their schedules (cleanup)
//
// Each subcommand lives in its own file and only parses flags, calls a
// library (internal/kyvernotest for test and apply, server for serve and
// run) and maps the outcome to output and an exit code: 0 when everything
// passed, 1 on failures or errors, 2 on bad usage. Flags are defined here
// and nowhere else.
//
// Every command that reads files (apply, test, eval, scan, and serve's
// policy folder) reads only regular files: a named pipe, device or socket
// in a folder is skipped with a warning on stderr (or in the log), one
// given as an argument is an error, never a read that hangs. apply and
// scan read resource files one document at a time (--max-document-bytes
// limits one document) and print through spools, so that their memory
// does not grow with the files; scan stops at once on SIGTERM or Ctrl-C.
package main
