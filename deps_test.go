package verdict_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// module is this module's path; rules name its packages without it.
const module = "github.com/verdict-policy/verdict"

// rule is what one doc.go says a package may depend on, checked against
// `go list -deps` (the package's non-test dependencies, transitive) and
// its direct imports. A pattern is a package path, "P/..." for P and the
// packages under it; a pattern without a dot in its first element is a
// package of this module.
type rule struct {
	doc string // the doc.go that states the rule
	pkg string // the packages it applies to (a pattern)
	// notDeps: no dependency may match one of these.
	notDeps []string
	// onlyModule: every dependency of this module must match one of these
	// (the package itself is always allowed).
	onlyModule    []string
	onlyModuleSet bool
	// notImports: no direct import may match one of these.
	notImports []string
	// onlyImports: every direct import outside the standard library must
	// match one of these.
	onlyImports    []string
	onlyImportsSet bool
	// importedBy: the packages that import it (non-test code) must match
	// one of these; none when empty and importedBySet.
	importedBy    []string
	importedBySet bool
}

// Rule helpers.
var (
	clientGo = "k8s.io/client-go/..."
	grpc     = "google.golang.org/grpc/..."
	// engineBase is what every engine package may use besides what its
	// doc.go names: the error type and the engine's internal helpers.
	engineBase = []string{"engine", "engine/internal/..."}
)

func only(ps ...string) []string { return append([]string(nil), ps...) }

// rules are the import rules of every doc.go that states one.
var rules = []rule{
	{doc: "cleanup/doc.go", pkg: "cleanup", notDeps: only("server/...", "reportwriter/...", "scanner", "webhookproxy")},
	{doc: "client/doc.go", pkg: "client", onlyModule: only("proto/...", "internal/grpccodec", "internal/safefile"), onlyModuleSet: true, notDeps: only(clientGo, "engine/...", "server/...")},
	{doc: "deploy/doc.go", pkg: "cmd/verdict", notDeps: only("deploy")},
	{doc: "engine/doc.go", pkg: "engine/...", onlyModule: only("engine/..."), onlyModuleSet: true, notDeps: only(clientGo, grpc),
		notImports: only("log", "log/slog", "github.com/prometheus/...", "k8s.io/klog/...", "github.com/go-logr/...", "go.opentelemetry.io/...")},
	{doc: "engine/internal/celtypes/doc.go", pkg: "engine/internal/celtypes", onlyModuleSet: true,
		onlyImports: only("github.com/google/cel-go/...", "k8s.io/apiserver/pkg/cel/..."), onlyImportsSet: true},
	{doc: "engine/internal/quantity/doc.go", pkg: "engine/internal/quantity", onlyModuleSet: true, onlyImports: only("k8s.io/apimachinery/..."), onlyImportsSet: true},
	{doc: "engine/internal/notfound/doc.go", pkg: "engine/internal/notfound", onlyImportsSet: true},
	{doc: "engine/internal/wildcard/doc.go", pkg: "engine/internal/wildcard", onlyImportsSet: true},
	{doc: "engine/autogen/doc.go", pkg: "engine/autogen", onlyModule: append(only("engine/kyverno"), engineBase...), onlyModuleSet: true},
	{doc: "engine/cases/doc.go", pkg: "engine/cases", onlyModule: only("engine/..."), onlyModuleSet: true},
	{doc: "engine/celrule/doc.go", pkg: "engine/celrule", notDeps: only(clientGo, "engine/eval", "engine/policy")},
	{doc: "engine/condition/doc.go", pkg: "engine/condition", onlyModule: engineBase, onlyModuleSet: true,
		onlyImports: append(only("k8s.io/apimachinery/pkg/api/resource", "github.com/blang/semver/..."), engineBase...), onlyImportsSet: true},
	{doc: "engine/eval/doc.go", pkg: "engine/eval", onlyModule: only("engine/..."), onlyModuleSet: true, notDeps: only(clientGo, grpc)},
	{doc: "engine/generate/doc.go", pkg: "engine/generate", onlyModule: append(only("engine/pattern"), engineBase...), onlyModuleSet: true},
	{doc: "engine/internal/jsonconv/doc.go", pkg: "engine/internal/jsonconv/...", onlyModule: only("engine/internal/jsonconv/..."), onlyModuleSet: true},
	{doc: "engine/internal/jsonquote/doc.go", pkg: "engine/internal/jsonquote", onlyImportsSet: true},
	{doc: "engine/internal/operator/doc.go", pkg: "engine/internal/operator", onlyImportsSet: true},
	{doc: "engine/internal/memo/doc.go", pkg: "engine/internal/memo", onlyImports: nil, onlyImportsSet: true},
	{doc: "engine/jmespath/doc.go", pkg: "engine/jmespath", onlyModule: engineBase, onlyModuleSet: true, notDeps: only(clientGo)},
	{doc: "engine/kyverno/doc.go", pkg: "engine/kyverno", onlyModule: engineBase, onlyModuleSet: true,
		onlyImports: append(only("go.yaml.in/yaml/..."), engineBase...), onlyImportsSet: true},
	{doc: "engine/kyvernocel/doc.go", pkg: "engine/kyvernocel/...", onlyModule: only("engine/internal/...", "engine/kyvernocel/..."), onlyModuleSet: true, notDeps: only(clientGo, grpc)},
	{doc: "engine/manifests/doc.go", pkg: "engine/manifests", onlyModule: engineBase, onlyModuleSet: true,
		onlyImports: only("sigs.k8s.io/yaml", "engine"), onlyImportsSet: true},
	{doc: "engine/match/doc.go", pkg: "engine/match", onlyModule: append(only("engine/kyverno"), engineBase...), onlyModuleSet: true, notDeps: only("engine/eval", "engine/policy")},
	{doc: "engine/mutate/doc.go", pkg: "engine/mutate", onlyModule: append(only("engine/pattern"), engineBase...), onlyModuleSet: true,
		onlyImports: only("engine/pattern", "engine/internal/jsonquote", "github.com/evanphx/json-patch/...", "sigs.k8s.io/yaml"), onlyImportsSet: true},
	{doc: "engine/pattern/doc.go", pkg: "engine/pattern", onlyModule: engineBase, onlyModuleSet: true,
		onlyImports: append(only("k8s.io/apimachinery/..."), engineBase...), onlyImportsSet: true},
	{doc: "engine/podsecurity/doc.go", pkg: "engine/podsecurity", notDeps: only(clientGo, "engine/eval", "engine/policy")},
	{doc: "engine/policy/doc.go", pkg: "engine/policy", notDeps: only("engine/eval")},
	{doc: "engine/variables/doc.go", pkg: "engine/variables", onlyModule: append(only("engine/jmespath"), engineBase...), onlyModuleSet: true},
	{doc: "engine/mpol/doc.go", pkg: "engine/mpol", notDeps: only(clientGo, grpc, "engine/policy", "engine/eval")},
	{doc: "engine/ivpol/doc.go", pkg: "engine/ivpol", notDeps: only(clientGo, grpc, "engine/policy", "engine/eval")},
	{doc: "engine/gpol/doc.go", pkg: "engine/gpol", notDeps: only(clientGo, grpc, "engine/policy", "engine/eval"),
		onlyModule: append(only("engine/vpol", "engine/mpol", "engine/kyverno", "engine/kyvernocel/..."), engineBase...), onlyModuleSet: true},
	{doc: "engine/dpol/doc.go", pkg: "engine/dpol", notDeps: only(clientGo, grpc, "engine/policy", "engine/eval"),
		onlyModule: append(only("engine/vpol", "engine/mpol", "engine/kyverno", "engine/kyvernocel/..."), engineBase...), onlyModuleSet: true},
	{doc: "engine/vap/doc.go", pkg: "engine/vap", notDeps: only(clientGo, grpc, "engine/policy", "engine/eval")},
	{doc: "engine/vpol/doc.go", pkg: "engine/vpol", notDeps: only(clientGo, grpc, "engine/policy", "engine/eval")},
	{doc: "hack/conformance/doc.go", pkg: "hack/conformance", onlyImports: only("kyvernotest", "internal/testing/testcorpus"), onlyImportsSet: true},
	{doc: "internal/testing/e2e/doc.go", pkg: "internal/testing/e2e", onlyModule: nil, onlyModuleSet: true, onlyImports: only("k8s.io/client-go/rest"), onlyImportsSet: true, importedBySet: true},
	{doc: "internal/grpcauth/doc.go", pkg: "internal/grpcauth", onlyModule: only("internal/safefile"), onlyModuleSet: true,
		onlyImports: only(grpc, "github.com/grpc-ecosystem/go-grpc-middleware/...", "internal/safefile"), onlyImportsSet: true},
	{doc: "internal/grpccodec/doc.go", pkg: "internal/grpccodec", onlyModule: nil, onlyModuleSet: true},
	{doc: "internal/testing/hostile/doc.go", pkg: "internal/testing/hostile", importedBySet: true},
	{doc: "host/imageverify/doc.go", pkg: "engine/...", notDeps: only("host/imageverify")},
	{doc: "internal/jsonvalue/doc.go", pkg: "internal/jsonvalue", onlyImportsSet: true},
	{doc: "internal/kubeconfig/doc.go", pkg: "internal/kubeconfig", onlyModuleSet: true,
		onlyImports: only("k8s.io/client-go/rest", "k8s.io/client-go/tools/clientcmd"), onlyImportsSet: true},
	{doc: "internal/kubemetrics/doc.go", pkg: "internal/kubemetrics", onlyModule: only("internal/promreg"), onlyModuleSet: true,
		onlyImports: only("k8s.io/client-go/rest", "github.com/prometheus/client_golang/...", "internal/promreg"), onlyImportsSet: true},
	{doc: "kyvernotest/doc.go", pkg: "kyvernotest", notDeps: only("cmd/verdict", "server/...", clientGo)},
	{doc: "internal/kubeevents/doc.go", pkg: "internal/kubeevents", notDeps: only("server/...", "client", "scanner", "reportwriter/...", "webhookproxy")},
	{doc: "internal/options/doc.go", pkg: "internal/options", onlyImportsSet: true},
	{doc: "internal/promreg/doc.go", pkg: "internal/promreg", onlyModuleSet: true, onlyImports: only("github.com/prometheus/client_golang/..."), onlyImportsSet: true},
	{doc: "internal/policyreport/doc.go", pkg: "internal/policyreport", onlyImportsSet: true},
	{doc: "internal/safefile/doc.go", pkg: "internal/safefile", onlyImportsSet: true},
	{doc: "internal/testing/testpki/doc.go", pkg: "internal/testing/testpki", onlyImportsSet: true, importedBySet: true},
	{doc: "internal/testing/servertest/doc.go", pkg: "internal/testing/servertest", importedBySet: true},
	{doc: "internal/ctxtime/doc.go", pkg: "internal/ctxtime", onlyImportsSet: true},
	{doc: "internal/shard/doc.go", pkg: "internal/shard", onlyImportsSet: true},
	{doc: "internal/streamrecv/doc.go", pkg: "internal/streamrecv", onlyImportsSet: true},
	{doc: "internal/spool/doc.go", pkg: "internal/spool", onlyImportsSet: true},
	{doc: "internal/strtable/doc.go", pkg: "internal/strtable", onlyImportsSet: true},
	{doc: "internal/yamlenc/doc.go", pkg: "internal/yamlenc", onlyModuleSet: true, onlyImports: only("go.yaml.in/yaml/v3"), onlyImportsSet: true},
	{doc: "internal/testing/testcorpus/doc.go", pkg: "internal/testing/testcorpus", onlyModuleSet: true, importedBy: only("hack/conformance"), importedBySet: true},
	{doc: "proto/verdict/v1/doc.go", pkg: "proto/...", onlyModule: only("proto/..."), onlyModuleSet: true,
		onlyImports: only(grpc, "google.golang.org/protobuf/...", "github.com/planetscale/vtprotobuf/..."), onlyImportsSet: true},
	{doc: "publish/doc.go", pkg: "publish", notDeps: only("server/...", "scanner", "reportwriter/...", "client")},
	{doc: "reportwriter/doc.go", pkg: "reportwriter", notDeps: only("server/...", "client", "scanner")},
	{doc: "reportwriter/boltstore/doc.go", pkg: "reportwriter/boltstore", notDeps: only("server/...", "client", "scanner")},
	{doc: "reportwriter/kubestore/doc.go", pkg: "reportwriter/kubestore", notDeps: only("server/...", "client", "scanner")},
	{doc: "reportwriter/leader/doc.go", pkg: "reportwriter/leader", notDeps: only("server/...", "client", "scanner")},
	{doc: "scanner/doc.go", pkg: "scanner", notDeps: only("server/...", "reportwriter/...", "webhookproxy")},
	{doc: "server/doc.go", pkg: "server", notDeps: only("client", "webhookproxy", "reportwriter/...", "scanner", "cmd/verdict", "server/kubesource", "host/kubelookup", clientGo)},
	{doc: "host/kubelookup/doc.go", pkg: "host/kubelookup", notDeps: only("server"), importedBy: only("cmd/verdict"), importedBySet: true},
	{doc: "server/celdata/doc.go", pkg: "server/celdata", notDeps: only("server"), importedBy: only("cmd/verdict"), importedBySet: true},
	{doc: "server/kubesource/doc.go", pkg: "server/kubesource", importedBy: only("cmd/verdict", "deploy"), importedBySet: true},
	{doc: "webhookproxy/doc.go", pkg: "webhookproxy", onlyModule: only("proto/...", "internal/options", "internal/promreg", "internal/safefile"), onlyModuleSet: true, notDeps: only("server/...", "engine/...")},
}

// pkgInfo is what go list says of a package.
type pkgInfo struct {
	path     string
	standard bool
	imports  []string
	deps     []string
}

// listPackages runs go list -deps over the module.
func listPackages(t *testing.T) map[string]*pkgInfo {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}|{{.Standard}}|{{join .Imports \",\"}}|{{join .Deps \",\"}}", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./...: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]*pkgInfo{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "|")
		if len(f) != 4 {
			t.Fatalf("go list: line %q", sc.Text())
		}
		split := func(s string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, ",")
		}
		pkgs[f[0]] = &pkgInfo{path: f[0], standard: f[1] == "true", imports: split(f[2]), deps: split(f[3])}
	}
	return pkgs
}

// full turns a rule's pattern into a package path pattern.
func full(p string) string {
	if first, _, _ := strings.Cut(p, "/"); !strings.Contains(first, ".") {
		return module + "/" + p
	}
	return p
}

func matches(path, pattern string) bool {
	pattern = full(pattern)
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == pattern
}

func matchesAny(path string, patterns []string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return matches(path, p) })
}

// TestImportRules checks every import rule a doc.go states (rules) with
// go list -deps, and that every doc.go stating one has its rule here.
func TestImportRules(t *testing.T) {
	pkgs := listPackages(t)
	var ours []*pkgInfo
	for _, p := range pkgs {
		if strings.HasPrefix(p.path, module+"/") {
			ours = append(ours, p)
		}
	}
	for _, r := range rules {
		applied := false
		for _, p := range ours {
			if !matches(p.path, r.pkg) {
				continue
			}
			applied = true
			for _, d := range p.deps {
				if matchesAny(d, r.notDeps) {
					t.Errorf("%s depends on %s; %s says it must not", p.path, d, r.doc)
				}
				if r.onlyModuleSet && strings.HasPrefix(d, module+"/") && d != p.path && !matchesAny(d, r.onlyModule) {
					t.Errorf("%s depends on %s; %s allows only %v", p.path, d, r.doc, r.onlyModule)
				}
			}
			for _, i := range p.imports {
				if matchesAny(i, r.notImports) {
					t.Errorf("%s imports %s; %s says it must not", p.path, i, r.doc)
				}
				if r.onlyImportsSet && !pkgs[i].standard && !matchesAny(i, r.onlyImports) {
					t.Errorf("%s imports %s; %s allows only the standard library and %v", p.path, i, r.doc, r.onlyImports)
				}
			}
			if r.importedBySet {
				for _, q := range ours {
					if slices.Contains(q.imports, p.path) && !matchesAny(q.path, r.importedBy) {
						t.Errorf("%s imports %s; %s says only %v may", q.path, p.path, r.doc, r.importedBy)
					}
				}
			}
		}
		if !applied {
			t.Errorf("the rule of %s applies to no package (%s)", r.doc, r.pkg)
		}
	}

	// Every doc.go (or package comment) that states an import rule has one
	// here.
	stated := regexp.MustCompile(`must not (import|depend|be imported)|depends? (only )?on .* only|imports? only|only .* imports? it|never imports?|never on|never imported|nothing of the product imports it`)
	documented := map[string]bool{}
	for _, r := range rules {
		documented[r.doc] = true
	}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != ".") {
			if d != nil && d.IsDir() && path != "." {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		comment := packageComment(string(data))
		if stated.MatchString(comment) && !documented[filepath.ToSlash(path)] {
			t.Errorf("%s states an import rule that TestImportRules does not check: add it to rules", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// packageComment is the comment before the package clause of a Go file,
// joined in one line.
func packageComment(src string) string {
	var lines []string
	for _, l := range strings.Split(src, "\n") {
		switch {
		case strings.HasPrefix(l, "//"):
			lines = append(lines, strings.TrimSpace(strings.TrimPrefix(l, "//")))
		case strings.HasPrefix(l, "package "):
			return strings.Join(lines, " ")
		default:
			lines = nil
		}
	}
	return ""
}
