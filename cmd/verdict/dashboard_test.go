package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/scanner"
	"github.com/verdict-policy/verdict/server"
	"github.com/verdict-policy/verdict/webhookproxy"
)

const (
	// upstreamDashboard is Kyverno's Grafana dashboard, in the shared
	// folder next to the repository (as the conformance corpus).
	upstreamDashboard = "../../../shared/kyverno-docs/grafana/kyverno-dashboard.json"
	// dashboardRefs are the metrics and labels its queries use, derived
	// from it, so that a clone without the shared folder still checks them.
	dashboardRefs = "testdata/dashboard/queries.txt"
)

var updateDashboard = flag.Bool("update-dashboard", false, "rewrite "+dashboardRefs+" from "+upstreamDashboard)

// prometheusLabels are the labels the Prometheus that scrapes Kyverno adds
// (the dashboard selects clusters with them); no exporter emits them. The
// dashboard must use them only with a template variable.
var prometheusLabels = map[string]bool{"cluster": true}

// TestKyvernoDashboard runs a decision server, the webhook proxy's handler
// and a scan, scrapes their /metrics, and checks that every metric and
// every label the queries of Kyverno's Grafana dashboard read is
// exported.
func TestKyvernoDashboard(t *testing.T) {
	refs := dashboardReferences(t)

	regServer, regProxy := prometheus.NewRegistry(), prometheus.NewRegistry()
	srv, err := server.New(server.Options{Registry: regServer, Sources: []server.PolicySource{
		&server.FolderSource{Dir: examplePolicies}, &server.FolderSource{Dir: "testdata/dashboard"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, lis) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server Run() = %v", err)
		}
	})
	c, err := client.Dial(lis.Addr().String(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	deadline := time.Now().Add(10 * time.Second)
	for c.CheckHealth(t.Context()) != nil {
		if time.Now().After(deadline) {
			t.Fatal("server not SERVING after 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}

	h, err := webhookproxy.New(c, webhookproxy.Options{Registry: regProxy})
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(h)
	t.Cleanup(proxy.Close)
	for i, r := range []struct{ path, op, labels, image string }{
		{"/mutate", "CREATE", `"team":"a"`, "nginx:1.27"},
		{"/validate", "CREATE", `"team":"a"`, "nginx:1.27"},
		{"/validate", "CREATE", ``, "ghcr.io/team/app:latest"}, // denied
		{"/validate", "UPDATE", `"team":"a"`, "nginx:1.27"},
	} {
		pod := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p%d","namespace":"shop","labels":{%s}},"spec":{"containers":[{"name":"c","image":%q}]}}`, i, r.labels, r.image)
		old := "null"
		if r.op == "UPDATE" {
			old = pod
		}
		body := fmt.Sprintf(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u%d","kind":{"group":"","version":"v1","kind":"Pod"},
"resource":{"group":"","version":"v1","resource":"pods"},"namespace":"shop","name":"p%d","operation":%q,"userInfo":{"username":"alice"},"object":%s,"oldObject":%s}}`,
			i, i, r.op, pod, old)
		resp, err := http.Post(proxy.URL+r.path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %d %s", r.path, resp.StatusCode, out)
		}
	}

	sc, err := scanner.New(c, scanner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := scanner.NewFileSource(t.Context(), []string{exampleResources}, scanner.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := scanner.LoadPolicies(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := sc.Scan(t.Context(), src, set, scanner.ScanOptions{}); err != nil || sum.Resources == 0 {
		t.Fatalf("Scan() = %+v, %v, want resources scanned", sum, err)
	}

	exported := map[string]map[string]bool{}
	for _, reg := range []*prometheus.Registry{regServer, regProxy} {
		for name, labels := range scrapeMetrics(t, promhttp.HandlerFor(reg, promhttp.HandlerOpts{})) {
			if exported[name] == nil {
				exported[name] = map[string]bool{}
			}
			for l := range labels {
				exported[name][l] = true
			}
		}
	}
	for _, metric := range slices.Sorted(mapKeys(refs)) {
		have, ok := exported[metric]
		if !ok {
			t.Errorf("metric %s: not exported (the dashboard reads it)", metric)
			continue
		}
		for _, l := range slices.Sorted(mapKeys(refs[metric])) {
			if !have[l] && !prometheusLabels[l] {
				t.Errorf("metric %s: label %s not exported (the dashboard reads it)", metric, l)
			}
		}
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// scrapeMetrics GETs /metrics of h and returns, by sample name (a histogram's
// _bucket, _sum and _count), the labels of its series.
func scrapeMetrics(t *testing.T, h http.Handler) map[string]map[string]bool {
	t.Helper()
	ts := httptest.NewServer(h)
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	out := map[string]map[string]bool{}
	add := func(name string, m *dto.Metric) {
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		for _, l := range m.GetLabel() {
			// An empty value is no label to Prometheus.
			if l.GetValue() != "" {
				out[name][l.GetName()] = true
			}
		}
	}
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decode /metrics: %v", err)
		}
		for _, m := range mf.GetMetric() {
			if mf.GetType() == dto.MetricType_HISTOGRAM {
				add(mf.GetName()+"_sum", m)
				add(mf.GetName()+"_count", m)
				add(mf.GetName()+"_bucket", m)
				out[mf.GetName()+"_bucket"]["le"] = true
				continue
			}
			add(mf.GetName(), m)
		}
	}
	return out
}

// dashboardReferences returns the metrics of the dashboard's queries with
// the labels each is selected or grouped by: from the upstream dashboard
// when it is there (and then checks that the testdata copy agrees), from
// the testdata copy otherwise.
func dashboardReferences(t *testing.T) map[string]map[string]bool {
	t.Helper()
	saved, err := os.ReadFile(dashboardRefs)
	if err != nil && !*updateDashboard {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(upstreamDashboard)
	if err != nil {
		t.Logf("Kyverno's dashboard not found (%v): checking the metrics of %s", err, dashboardRefs)
		return parseRefs(t, string(saved))
	}
	var exprs []string
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", upstreamDashboard, err)
	}
	collectExprs(doc, &exprs)
	if len(exprs) == 0 {
		t.Fatalf("%s: no query found", upstreamDashboard)
	}
	refs := map[string]map[string]bool{}
	for _, e := range exprs {
		got, err := promqlRefs(e)
		if err != nil {
			t.Fatalf("query %q: %v", e, err)
		}
		for m, ls := range got.metrics {
			if refs[m] == nil {
				refs[m] = map[string]bool{}
			}
			for l := range ls {
				refs[m][l] = true
			}
		}
		for l, vals := range got.matchers {
			if prometheusLabels[l] {
				for _, v := range vals {
					if !strings.HasPrefix(v, "$") {
						t.Errorf("query %q selects %s=%q: a label the scraping Prometheus adds, expected with a template variable only", e, l, v)
					}
				}
			}
		}
	}
	text := formatRefs(refs)
	if *updateDashboard {
		if err := os.WriteFile(dashboardRefs, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if diff := cmp.Diff(string(saved), text); diff != "" {
		t.Errorf("%s differs from the metrics of %s (go test ./cmd/verdict -run TestKyvernoDashboard -update-dashboard rewrites it) (-saved +upstream):\n%s", dashboardRefs, upstreamDashboard, diff)
	}
	return refs
}

// collectExprs appends every "expr" string of a Grafana dashboard.
func collectExprs(v any, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "expr" && s != "" {
				*out = append(*out, s)
				continue
			}
			collectExprs(x, out)
		}
	case []any:
		for _, x := range v {
			collectExprs(x, out)
		}
	}
}

const refsHeader = "# The metrics Kyverno's Grafana dashboard (kyverno-docs/grafana/kyverno-dashboard.json)\n# reads, each with the labels its queries select or group it by. Written by\n# go test ./cmd/verdict -run TestKyvernoDashboard -update-dashboard.\n"

func formatRefs(refs map[string]map[string]bool) string {
	var b strings.Builder
	b.WriteString(refsHeader)
	for _, m := range slices.Sorted(mapKeys(refs)) {
		b.WriteString(m)
		for _, l := range slices.Sorted(mapKeys(refs[m])) {
			b.WriteString(" " + l)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func parseRefs(t *testing.T, text string) map[string]map[string]bool {
	t.Helper()
	refs := map[string]map[string]bool{}
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		refs[f[0]] = map[string]bool{}
		for _, l := range f[1:] {
			refs[f[0]][l] = true
		}
	}
	if len(refs) == 0 {
		t.Fatalf("%s: no metric", dashboardRefs)
	}
	return refs
}

// queryRefs are what one PromQL query reads: metrics with the labels
// they are selected or grouped by, and every label matcher's values.
type queryRefs struct {
	metrics  map[string]map[string]bool
	matchers map[string][]string
}

type token struct {
	kind byte // 'i' identifier, 's' string, 'n' number, or the punctuation itself
	text string
}

// tokenize splits a PromQL query into identifiers, strings, numbers and
// single punctuation characters (operators of several characters come
// out one character at a time, which is enough to find selectors and
// groupings).
func tokenize(q string) ([]token, error) {
	var out []token
	rs := []rune(q)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case r == '"' || r == '\'' || r == '`':
			j := i + 1
			var b strings.Builder
			for ; j < len(rs) && rs[j] != r; j++ {
				if rs[j] == '\\' && r != '`' && j+1 < len(rs) {
					j++
				}
				b.WriteRune(rs[j])
			}
			if j >= len(rs) {
				return nil, fmt.Errorf("unterminated string at %d", i)
			}
			out = append(out, token{'s', b.String()})
			i = j + 1
		case r == '_' || r == ':' || unicode.IsLetter(r):
			j := i
			for j < len(rs) && (rs[j] == '_' || rs[j] == ':' || unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j])) {
				j++
			}
			out = append(out, token{'i', string(rs[i:j])})
			i = j
		case unicode.IsDigit(r) || r == '.':
			j := i
			for j < len(rs) && (unicode.IsDigit(rs[j]) || rs[j] == '.' || unicode.IsLetter(rs[j])) {
				j++ // 5m, 1e3, 0.5
			}
			out = append(out, token{'n', string(rs[i:j])})
			i = j
		default:
			out = append(out, token{byte(r), string(r)})
			i++
		}
	}
	return out, nil
}

// promqlKeywords are identifiers that name no metric.
var promqlKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"bool": true, "and": true, "or": true, "unless": true, "offset": true,
}

// promqlRefs finds the metrics of a query (identifiers followed by a
// selector, a range, or neither, but not by "(", which makes them
// functions; {__name__=~"a|b"} names a and b), the labels of their
// selectors, and the labels of by (...) groupings, which belong to the
// metrics of the aggregation's argument (the parenthesised expression
// before or after the grouping).
func promqlRefs(q string) (queryRefs, error) {
	toks, err := tokenize(q)
	if err != nil {
		return queryRefs{}, err
	}
	refs := queryRefs{metrics: map[string]map[string]bool{}, matchers: map[string][]string{}}
	// at[i] are the metrics of the selector that starts at token i.
	at := map[int][]string{}
	use := func(metric string, labels ...string) {
		if refs.metrics[metric] == nil {
			refs.metrics[metric] = map[string]bool{}
		}
		for _, l := range labels {
			refs.metrics[metric][l] = true
		}
	}
	for i := 0; i < len(toks); i++ {
		tk := toks[i]
		if tk.kind == '{' || (tk.kind == 'i' && !promqlKeywords[tk.text]) {
			var names []string
			start := i
			if tk.kind == 'i' {
				if i+1 < len(toks) && (toks[i+1].kind == '(' || (toks[i+1].kind == 'i' && (toks[i+1].text == "by" || toks[i+1].text == "without"))) {
					continue // a function or an aggregation
				}
				if i > 0 && (toks[i-1].kind == '(' || toks[i-1].kind == ',') && inGrouping(toks, i) {
					continue // a label of by (...)
				}
				names = append(names, tk.text)
				i++
			}
			var labels []string
			if i < len(toks) && toks[i].kind == '{' {
				j := i + 1
				for ; j < len(toks) && toks[j].kind != '}'; j++ {
					if toks[j].kind != 'i' {
						continue
					}
					label := toks[j].text
					k := j + 1
					for k < len(toks) && (toks[k].kind == '=' || toks[k].kind == '!' || toks[k].kind == '~') {
						k++
					}
					if k >= len(toks) || toks[k].kind != 's' {
						return queryRefs{}, fmt.Errorf("label %s: no value", label)
					}
					if label == "__name__" {
						names = append(names, strings.Split(toks[k].text, "|")...)
					} else {
						labels = append(labels, label)
						refs.matchers[label] = append(refs.matchers[label], toks[k].text)
					}
					j = k
				}
				if j >= len(toks) {
					return queryRefs{}, fmt.Errorf("unterminated selector")
				}
				i = j
			} else {
				i--
			}
			for _, n := range names {
				use(n, labels...)
			}
			at[start] = names
		}
	}
	// Groupings: by (l1, l2) and the argument they apply to.
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].kind != 'i' || (toks[i].text != "by" && toks[i].text != "without") || toks[i+1].kind != '(' {
			continue
		}
		end := matching(toks, i+1)
		if end < 0 {
			return queryRefs{}, fmt.Errorf("unbalanced parentheses after %s", toks[i].text)
		}
		var labels []string
		for _, tk := range toks[i+2 : end] {
			if tk.kind == 'i' {
				labels = append(labels, tk.text)
			}
		}
		var lo, hi int
		if end+1 < len(toks) && toks[end+1].kind == '(' {
			lo, hi = end+1, matching(toks, end+1) // sum by (l) (expr)
		} else if i > 0 && toks[i-1].kind == ')' {
			hi, lo = i-1, opening(toks, i-1) // sum(expr) by (l)
		} else {
			return queryRefs{}, fmt.Errorf("%s (...) without an argument", toks[i].text)
		}
		if lo < 0 || hi < 0 {
			return queryRefs{}, fmt.Errorf("unbalanced parentheses around %s", toks[i].text)
		}
		for j := lo; j <= hi; j++ {
			for _, m := range at[j] {
				use(m, labels...)
			}
		}
	}
	return refs, nil
}

// inGrouping reports whether token i is inside the label list of a
// grouping or a vector matching: by, without, on, ignoring, group_left,
// group_right.
func inGrouping(toks []token, i int) bool {
	depth := 0
	for j := i - 1; j >= 0; j-- {
		switch toks[j].kind {
		case ')':
			depth++
		case '(':
			if depth == 0 {
				return j > 0 && toks[j-1].kind == 'i' && promqlKeywords[toks[j-1].text]
			}
			depth--
		}
	}
	return false
}

// matching returns the index of the ")" that closes the "(" at i, -1 if
// none.
func matching(toks []token, i int) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		switch toks[j].kind {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// opening returns the index of the "(" that the ")" at i closes, -1 if
// none.
func opening(toks []token, i int) int {
	depth := 0
	for j := i; j >= 0; j-- {
		switch toks[j].kind {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

func TestPromqlRefs(t *testing.T) {
	tests := []struct {
		give         string
		want         map[string][]string
		wantMatchers map[string][]string
	}{
		{
			give:         `sum(increase(kyverno_policy_results_total{rule_result="fail", cluster=~"$cluster"}[24h]) or vector(0))*100/sum(increase(kyverno_policy_results_total{cluster=~"$cluster"}[24h]))`,
			want:         map[string][]string{"kyverno_policy_results_total": {"cluster", "rule_result"}},
			wantMatchers: map[string][]string{"rule_result": {"fail"}, "cluster": {"$cluster", "$cluster"}},
		},
		{
			give: `count(count(kyverno_policy_rule_info_total{policy_namespace!="-"}==1) by (policy_name, policy_namespace)) by (policy_namespace)`,
			want: map[string][]string{"kyverno_policy_rule_info_total": {"policy_name", "policy_namespace"}},
		},
		{
			give: `sum(rate(a_sum[5m])) by (rule_type) / sum(rate(a_count[5m])) by (kind)`,
			want: map[string][]string{"a_sum": {"rule_type"}, "a_count": {"kind"}},
		},
		{
			give: `sum by (policy_name, result) (increase({__name__=~"x_total|y_total", execution_cause="background_scan"}[5m])) + z`,
			want: map[string][]string{"x_total": {"execution_cause", "policy_name", "result"}, "y_total": {"execution_cause", "policy_name", "result"}, "z": nil},
		},
		{
			give: `avg without (instance) (up) and on (job) m offset 5m`,
			want: map[string][]string{"up": {"instance"}, "m": nil},
		},
	}
	for _, tt := range tests {
		got, err := promqlRefs(tt.give)
		if err != nil {
			t.Errorf("promqlRefs(%q) error %v", tt.give, err)
			continue
		}
		gotMetrics := map[string][]string{}
		for m, ls := range got.metrics {
			gotMetrics[m] = slices.Sorted(mapKeys(ls))
		}
		if diff := cmp.Diff(tt.want, gotMetrics, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("promqlRefs(%q) metrics (-want +got):\n%s", tt.give, diff)
		}
		if tt.wantMatchers != nil {
			if diff := cmp.Diff(tt.wantMatchers, got.matchers); diff != "" {
				t.Errorf("promqlRefs(%q) matchers (-want +got):\n%s", tt.give, diff)
			}
		}
	}
}

func TestPromqlRefsErrors(t *testing.T) {
	for _, give := range []string{`m{a="x}`, `m{a=}`, `sum(m) by (a`, `m{a="x"`} {
		if _, err := promqlRefs(give); err == nil {
			t.Errorf("promqlRefs(%q) = nil error, want one", give)
		}
	}
}
