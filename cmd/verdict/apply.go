package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/kyvernotest"
)

func newApplyCmd() *cobra.Command {
	var (
		opts         kyvernotest.ApplyOptions
		policyReport bool
		format       string
		warnExitCode int
		warnNoPass   bool
		table        bool
		detailed     bool
		removeColor  bool
		forceColor   bool
		stdin        bool
		output       string
		gcPercent    int
		cl           *applyClusterFlags
		ky           *applyKyvernoFlags
	)
	cmd := &cobra.Command{
		Use:   "apply POLICY_PATH... --resource FILE...",
		Short: "Apply policies to resource files",
		Long: `Apply the policies in POLICY_PATH (files or folders) to the resources in
the --resource files or folders, as kyverno apply does (a POLICY_PATH or
--resource of - reads standard input, for the policies or the resources), and print the
violations followed by "pass: N, fail: N, warn: N, error: N, skip: N".

Like kyverno apply, it prints the resource as each policy with mutate
rules left it, and the resources generate rules would create, with their
labels; -i/--stdin prints them without the lines around them, to pipe
them to kubectl (for a policy with generateExisting: what it would create for the
given resources as existing triggers, labelled
kyverno.io/background-gen-rule). -o/--output PATH writes them to a file
(PATH ending in .yaml or .yml) or a folder of <resource>-mutated.yaml and
<policy>-generated.yaml files instead. Mutate rules with targets patch the
resources of --target-resource.

With --policy-report the results are printed as kyverno apply 1.19 prints
them: an openreports.io/v1alpha1 ClusterReport named "merged" (and, after
a "---" line, a report per namespaced Policy, of kind PolicyReport as
Kyverno names it), in the --output-format (yaml or json); mutated
resources are then written only with --output.

Resource files are read one document at a time: memory does not grow with
their size. Generate rules and mutate rules with targets see the resources
of the files of the kinds they can look up: a first pass keeps those
(every resource when a rule gives the kind with a variable, or when the
resources come from standard input). A document larger than
--max-document-bytes is an error naming its file and line. In a folder,
files that are not regular files (named pipes, devices, sockets) are
skipped with a warning.

-t/--table prints every result in kyverno apply's table (MESSAGE added by
--detailed-results), coloured as Kyverno colours it when standard output is
a terminal (not with --remove-color or NO_COLOR).

The resources are evaluated on --parallel workers (default GOMAXPROCS),
at most 2 per worker read ahead of the output, which is written in the
order of the resource files and is the same for any --parallel.

The exit code is 1 when a rule failed or errored; with --warn-exit-code,
that code when there were only warnings.

With --cluster (and --kubeconfig, --context, -n/--namespace,
-l/--selector) the resources are those of the cluster, of the kinds the
policies match, listed page by page (--batch-size), instead of --resource.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "yaml" && format != "json" {
				return &exitError{code: 2, msg: fmt.Sprintf("invalid output format %q: want yaml or json", format)}
			}
			switch output {
			case "yaml":
				output = "" // the default: mutated resources as YAML on stdout
			case "json":
				return &exitError{code: 2, msg: "-o/--output is the file or folder of mutated resources, as in kyverno apply; for JSON policy reports use --output-format json"}
			}
			if opts.Parallelism < 0 {
				return &exitError{code: 2, msg: fmt.Sprintf("invalid --parallel %d: want 0 (GOMAXPROCS) or more resources evaluated at once", opts.Parallelism)}
			}
			if err := ky.check(cmd.Flags(), cmd.ErrOrStderr(), args, len(opts.ResourcePaths) > 0, cl.kubeconfig); err != nil {
				return err
			}
			log := ky.klog.logger(cmd.ErrOrStderr())
			cl.clusterWide = ky.clusterWide
			opts.CRDPaths = ky.crdPaths
			opts.RegistryAccess = ky.registry
			opts.ExceptionsWithinResources = ky.exceptionsInline || ky.exceptionsResources
			opts.ExceptionsWithinPolicies = ky.exceptionsPolicies
			applyGCPercent(gcPercent)
			opts.ImageVerifier = newImageVerifier()
			switch {
			case cl.cluster && len(opts.ResourcePaths) > 0:
				return &exitError{code: 2, msg: "--cluster and --resource are exclusive"}
			case cl.cluster:
				src, err := cl.source(log)
				if err != nil {
					return &exitError{code: 2, msg: err.Error()}
				}
				opts.ResourceSource = src
			case len(ky.jsonPayloads) > 0:
				opts.JSONPaths = ky.jsonPayloads
			case len(opts.ResourcePaths) == 0:
				return &exitError{code: 2, msg: "apply needs --resource (or --cluster)"}
			}
			opts.PolicyPaths = args
			opts.Stdin = cmd.InOrStdin()
			opts.Warnings = cmd.ErrOrStderr()
			out := kyvernotest.ApplyOutput{
				MutatedPath: output, Detailed: detailed, Stdin: stdin,
				Color: useColor(cmd.OutOrStdout(), removeColor, forceColor),
			}
			switch {
			case policyReport && format == "json":
				out.Format = kyvernotest.ApplyReportJSON
			case policyReport:
				out.Format = kyvernotest.ApplyReportYAML
			case ky.generateExceptions && format == "json":
				out.Format = kyvernotest.ApplyExceptionsJSON
			case ky.generateExceptions:
				out.Format = kyvernotest.ApplyExceptionsYAML
			case table:
				out.Format = kyvernotest.ApplyTable
			}
			out.PrintMutated = output == ""
			out.ExceptionTTL, out.Warnings = ky.generatedTTL, cmd.ErrOrStderr()
			// The resources are read, evaluated and written one document
			// at a time: memory does not grow with the resource files.
			start := time.Now()
			res, err := kyvernotest.ApplyWrite(cmd.Context(), opts, cmd.OutOrStdout(), out)
			if err != nil {
				return err
			}
			log.Info("applied", "policyRules", res.RuleCount, "resources", res.ResourceCount, "exceptions", res.ExceptionCount, "skippedPolicies", len(res.Skipped), "duration", time.Since(start))
			for _, s := range res.Skipped {
				log.Debug("policy skipped", "policy", s.Name, "reason", s.Reason)
			}
			if ky.showPerformance {
				writePerformance(cmd.ErrOrStderr(), res, time.Since(start), opts.Parallelism)
			}
			return applyExit(res.Counts, warnExitCode, warnNoPass)
		},
	}
	f := cmd.Flags()
	cl = registerApplyClusterFlags(f) // applycluster.go
	ky = registerApplyKyvernoFlags(f) // kyvernoflags.go
	f.StringSliceVarP(&opts.ResourcePaths, "resource", "r", nil, "resource files or folders")
	f.StringSliceVar(&opts.ResourcePaths, "resources", nil, "alias of --resource")
	f.StringVarP(&opts.ValuesFile, "values-file", "f", "", "values file for policy variables")
	f.StringSliceVarP(&opts.Set, "set", "s", nil, "variables, as key=value")
	f.StringVarP(&opts.UserInfoFile, "userinfo", "u", "", "user info file: roles, cluster roles and subjects of the request")
	f.StringSliceVarP(&opts.ExceptionPaths, "exception", "e", nil, "PolicyException files")
	f.StringSliceVar(&opts.ExceptionPaths, "exceptions", nil, "alias of --exception")
	f.StringSliceVar(&opts.ParamPaths, "parameter-resource", nil, "files of params resources for validate.cel rules and ValidatingAdmissionPolicyBindings")
	f.StringVar(&opts.ContextFile, "context-file", "", "cli.kyverno.io Context file: resources and image data for the CEL libraries of ValidatingPolicies")
	f.BoolVar(&opts.AuditWarn, "audit-warn", false, "report failures of Audit rules as warnings")
	f.BoolVarP(&policyReport, "policy-report", "p", false, "print the results as policy reports")
	f.StringVar(&format, "output-format", "yaml", "policy report format: yaml or json")
	f.StringVarP(&output, "output", "o", "", "file (.yaml/.yml) or folder for the mutated and generated resources (default: printed)")
	f.StringSliceVar(&opts.TargetPaths, "target-resource", nil, "files or folders of existing resources that mutate rules with targets patch")
	f.StringSliceVar(&opts.TargetPaths, "target-resources", nil, "alias of --target-resource")
	f.IntVar(&warnExitCode, "warn-exit-code", 0, "exit code when there are warnings but no failure or error")
	f.BoolVar(&warnNoPass, "warn-no-pass", false, "exit with --warn-exit-code when no rule passed")
	f.BoolVarP(&table, "table", "t", false, "print every result in a table")
	f.BoolVar(&detailed, "detailed-results", false, "with --table, show each result's message")
	f.BoolVarP(&stdin, "stdin", "i", false, `print only the resources (no "Applying..." and "policy ... applied to" lines), to pipe the mutated resources to kubectl`)
	f.BoolVar(&removeColor, "remove-color", false, "never color the --table output (colored only on a terminal, without NO_COLOR)")
	registerForceColor(f, &forceColor)
	registerGCFlag(f, &gcPercent, batchGCPercent)
	f.IntVar(&opts.Parallelism, "parallel", 0, "resources evaluated at once (0: GOMAXPROCS; 1: one after the other); the output is the same for any value")
	f.IntVar(&opts.MaxDocumentBytes, "max-document-bytes", kyverno.DefaultMaxDocumentBytes, "largest YAML document of a policy or resource file (and largest values or user info file), in bytes")
	_ = f.MarkHidden("resources")
	_ = f.MarkHidden("target-resources")
	_ = f.MarkHidden("exceptions")
	return cmd
}

// applyExit maps counts to kyverno apply's exit semantics: 1 on any
// failure or error; otherwise warnExitCode when there are warnings (or,
// with warnNoPass, when nothing passed).
func applyExit(c kyvernotest.Counts, warnExitCode int, warnNoPass bool) error {
	switch {
	case c.Fail > 0:
		return &exitError{code: 1, msg: "exit as there are policy violations"}
	case c.Error > 0:
		return &exitError{code: 1, msg: "exit as there are policy errors"}
	case c.Warn > 0 && warnExitCode != 0:
		return &exitError{code: warnExitCode, msg: "exit as warnExitCode is " + strconv.Itoa(warnExitCode)}
	case c.Pass == 0 && warnNoPass:
		return &exitError{code: warnExitCode, msg: "exit as no objects satisfied policy"}
	}
	return nil
}
