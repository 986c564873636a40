package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/verdict-policy/verdict/kyvernotest"
)

// klogFlags are the flags kyverno's main adds to every command: klog's
// (kyverno adds klog's flag set as persistent flags). They set klog, which
// the Kubernetes client of apply --cluster logs with, as they set it in
// kyverno; -v/--v also sets the level of Verdict's own log lines
// (slogLevel).
type klogFlags struct {
	set *flag.FlagSet
}

// klogDefaults are the values of klog's flags before any command line set
// them (the first registerKlogFlags records them).
var (
	klogDefaultsOnce sync.Once
	klogDefaults     map[string]string
)

// registerKlogFlags adds klog's flags to f: -v/--v shown, the others
// hidden (docs/cli.md lists them).
func registerKlogFlags(f *pflag.FlagSet) *klogFlags {
	k := &klogFlags{set: flag.NewFlagSet("klog", flag.ContinueOnError)}
	klog.InitFlags(k.set)
	// klog's flags set klog's globals: each command line starts from
	// klog's defaults, not from what an earlier one in this process set.
	klogDefaultsOnce.Do(func() {
		klogDefaults = map[string]string{}
		k.set.VisitAll(func(g *flag.Flag) { klogDefaults[g.Name] = g.DefValue })
	})
	k.set.VisitAll(func(g *flag.Flag) {
		g.DefValue = klogDefaults[g.Name]
		_ = g.Value.Set(g.DefValue)
	})
	f.AddGoFlagSet(k.set)
	k.set.VisitAll(func(g *flag.Flag) {
		if g.Name == "v" {
			f.Lookup("v").Usage = "log verbosity, as kyverno's (klog) -v: 0-1 warnings (default), 2-3 info, 4 and more debug; also the verbosity of the Kubernetes client's logs"
			return
		}
		_ = f.MarkHidden(g.Name)
	})
	return k
}

// verbosity is the value of -v.
func (k *klogFlags) verbosity() int {
	n, _ := strconv.Atoi(k.set.Lookup("v").Value.String())
	return n
}

// slogLevel maps klog's verbosity to Verdict's log level: kyverno's CLI
// logs its informational lines at V(2) and V(3) (resources skipped by
// --continue-on-fail, resource loading), so 2 and 3 show Verdict's info
// lines and 4 and more its debug lines; below 2, warnings only.
func slogLevel(v int) slog.Level {
	switch {
	case v >= 4:
		return slog.LevelDebug
	case v >= 2:
		return slog.LevelInfo
	}
	return slog.LevelWarn
}

// logger is Verdict's logger of apply and test, on w at the level of -v.
func (k *klogFlags) logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slogLevel(k.verbosity())}))
}

// gitURL is kyverno's test of a policy path (apply) or test folder (test)
// that names a git repository to clone (source.IsGit).
var gitURL = regexp.MustCompile(`^(http|https)://`)

// refuseGitPaths refuses the paths kyverno clones from git: Verdict reads
// no network source. --git-branch, --username and --password only apply
// to such paths in kyverno, so they have no effect otherwise.
func refuseGitPaths(cmd string, paths []string) error {
	for _, p := range paths {
		if gitURL.MatchString(p) {
			return usageError("%s %s: verdict does not clone git repositories (kyverno's git URL paths, with -b/--git-branch, --username, --password): clone it first (git clone --branch BRANCH URL DIR) and give the folder", cmd, p)
		}
	}
	return nil
}

// registryFlag is kyverno's --registry of apply and test, and its help.
const (
	registryFlag = "registry"
	registryHelp = "kyverno's access to the registries (local docker credentials) for imageRegistry context entries, which verdict does not load: a policy with one is an error; verifyImages rules reach the registries with or without it"
)

// unsupportedFlag refuses a kyverno flag Verdict cannot honour, naming it
// and what to do instead.
func unsupportedFlag(cmd, name, instead string) error {
	return usageError("%s --%s is not supported by verdict: %s", cmd, name, instead)
}

// defaultGeneratedExceptionTTL is kyverno apply's --generated-exception-ttl
// default (30 days).
const defaultGeneratedExceptionTTL = 30 * 24 * time.Hour

// applyKyvernoFlags are the flags of kyverno apply 1.19 that Verdict's
// other apply flags do not cover (docs/cli.md says what each does).
type applyKyvernoFlags struct {
	klog *klogFlags

	clusterWide         bool
	concurrent          int
	continueOnError     bool
	continueOnFail      bool
	crdPaths            []string
	envoyPayloads       []string
	httpPayloads        []string
	jsonPayloads        []string
	exceptionsInline    bool // --exceptions-with-resources
	exceptionsResources bool // --exceptions-within-resources
	exceptionsPolicies  bool // --exceptions-within-policies
	generateExceptions  bool
	generatedTTL        time.Duration
	gitBranch           string
	gitUsername         string
	gitPassword         string
	registry            bool
	showPerformance     bool
}

func registerApplyKyvernoFlags(f *pflag.FlagSet) *applyKyvernoFlags {
	k := &applyKyvernoFlags{}
	f.BoolVar(&k.clusterWide, "cluster-wide-resources", false, "with --cluster -n NAMESPACE, also apply the policies to the cluster-scoped resources")
	f.IntVar(&k.concurrent, "concurrent", 1, "kyverno's workers listing the kinds of --cluster at once; verdict lists them one after another (its evaluation workers are --parallel)")
	f.BoolVar(&k.continueOnError, "continue-on-error", true, "kyverno's --cluster loading goes on after a kind fails to list; verdict's listing stops at the first error whatever its value")
	f.BoolVar(&k.continueOnFail, "continue-on-fail", false, "kyverno's option to go on with the next resource when applying the policies to one fails; verdict reports such a failure as error results and always goes on")
	f.StringSliceVar(&k.crdPaths, "crd-paths", nil, "CustomResourceDefinition files or folders: the types of custom resources that MutatingPolicies' ApplyConfigurations merge with")
	f.StringSliceVar(&k.crdPaths, "crd-path", nil, "deprecated: use --crd-paths")
	// Not MarkDeprecated: cobra would print its notice on standard output
	// (apply's check prints it on standard error, as kyverno's).
	_ = f.MarkHidden("crd-path")
	f.StringSliceVar(&k.envoyPayloads, "envoy-payload", nil, "Envoy check request payload files (not supported: refused)")
	f.StringSliceVar(&k.httpPayloads, "http-payload", nil, "HTTP check request payload files (not supported: refused)")
	f.StringSliceVar(&k.jsonPayloads, "json", nil, "JSON payload files, evaluated by the ValidatingPolicies of evaluation mode JSON (instead of --resource)")
	f.BoolVar(&k.exceptionsInline, "exceptions-with-resources", false, "use the PolicyExceptions found among the --resource documents (as --exceptions-within-resources)")
	f.BoolVar(&k.exceptionsResources, "exceptions-within-resources", false, "use the PolicyExceptions found among the --resource documents, instead of --exception")
	f.BoolVar(&k.exceptionsPolicies, "exceptions-within-policies", false, "also use the PolicyExceptions found among the policy documents")
	f.BoolVar(&k.generateExceptions, "generate-exceptions", false, "print a kyverno.io PolicyException per failure of a cluster-wide policy (in the --output-format), instead of the results")
	f.DurationVar(&k.generatedTTL, "generated-exception-ttl", defaultGeneratedExceptionTTL, "the cleanup.kyverno.io/ttl label of the exceptions of --generate-exceptions (0: none)")
	f.StringVarP(&k.gitBranch, "git-branch", "b", "", "kyverno's branch of a git URL policy path; verdict clones no repository: a git URL path is refused")
	f.StringVar(&k.gitUsername, "username", "", "kyverno's user of a git URL policy path (verdict refuses git URL paths)")
	f.StringVar(&k.gitPassword, "password", "", "kyverno's password of a git URL policy path (verdict refuses git URL paths)")
	f.BoolVar(&k.registry, registryFlag, false, registryHelp)
	f.BoolVar(&k.showPerformance, "show-performance", false, "print the resources read and evaluated, and the time taken, on standard error")
	k.klog = registerKlogFlags(f)
	return k
}

// check refuses the flags Verdict cannot honour and kyverno's usage
// errors of these flags.
func (k *applyKyvernoFlags) check(f *pflag.FlagSet, stderr io.Writer, policyPaths []string, resources bool, kubeconfig string) error {
	const cmd = "apply"
	if f.Changed("crd-path") {
		fmt.Fprintln(stderr, "Flag --crd-path has been deprecated, use --crd-paths instead")
	}
	switch {
	case len(k.envoyPayloads) > 0:
		return unsupportedFlag(cmd, "envoy-payload", "ValidatingPolicies in Envoy mode are not evaluated by verdict")
	case len(k.httpPayloads) > 0:
		return unsupportedFlag(cmd, "http-payload", "ValidatingPolicies in HTTP mode are not evaluated by verdict")
	case len(k.jsonPayloads) > 0 && resources:
		// kyverno's own check comes first.
		return usageError("both resource and json files can not be used together, use one or the other")
	case len(k.crdPaths) > 0 && strings.TrimSpace(kubeconfig) != "":
		return usageError("crd-paths and kubeconfig flags are mutually exclusive, please use only one of them")
	}
	return refuseGitPaths(cmd, policyPaths)
}

// writePerformance is apply --show-performance: kyverno prints how its
// --cluster listing went (duration, resources, API calls, workers) on
// standard output; Verdict prints on standard error, so that the output
// stays the same, the time of the whole run and what it evaluated.
func writePerformance(w io.Writer, res *kyvernotest.ApplyResult, d time.Duration, parallel int) {
	if parallel <= 0 {
		parallel = runtime.GOMAXPROCS(0)
	}
	rate := 0.0
	if s := d.Seconds(); s > 0 {
		rate = float64(res.ResourceCount) / s
	}
	fmt.Fprintf(w, "\nPerformance:\n  Duration: %s\n  Resources evaluated: %d (%.1f/s)\n  Policy rules: %d\n  Workers (--parallel): %d\n",
		d.Round(time.Microsecond), res.ResourceCount, rate, res.RuleCount, parallel)
}
