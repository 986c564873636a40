package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

func printTable(w io.Writer, o options, results []*result) {
	fmt.Fprintln(w, "| scenario | system | reviews | p50 ms | p99 ms | p99.9 ms | reviews/s | CPU s / 1,000 | peak RSS MiB | errors | wrong | dropped | load 1m |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	// Group the rows by scenario, the systems next to each other.
	var order []string
	by := map[string][]*result{}
	for _, r := range results {
		if _, ok := by[r.scenario]; !ok {
			order = append(order, r.scenario)
		}
		by[r.scenario] = append(by[r.scenario], r)
	}
	for _, sc := range order {
		for _, r := range by[sc] {
			n := len(r.latencies)
			if r.exited != "" {
				fmt.Fprintf(w, "| %s | %s | %d answered, then %s exited | | | | | | | %d | %d | %d | %s |\n",
					sc, r.system, n, r.exited, r.errors, r.wrong, r.dropped, r.load1)
				continue
			}
			perK := "-"
			if n > 0 {
				perK = fmt.Sprintf("%.3f", r.cpu/float64(n)*1000)
			}
			fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %.0f | %s | %.0f | %d | %d | %d | %s |\n",
				sc, r.system, n, ms(percentile(r.latencies, 0.50)), ms(percentile(r.latencies, 0.99)), ms(percentile(r.latencies, 0.999)),
				float64(n)/r.elapsed.Seconds(), perK, float64(r.peakRSS)/(1<<20), r.errors, r.wrong, r.dropped, r.load1)
		}
	}
	for _, r := range results {
		if r.firstErr != nil {
			fmt.Fprintf(w, "\n%s, %s: first error: %v\n", r.system, r.scenario, r.firstErr)
		}
		if r.firstWrong != "" {
			fmt.Fprintf(w, "\n%s, %s: first wrong decision: %s\n", r.system, r.scenario, r.firstWrong)
		}
	}
}

func mb(b int) string { return fmt.Sprintf("%.2f", float64(b)/1e6) }

// printScanTable prints the background scan of each system, the API
// writes by resource, and the entries of the final reports by policy and
// result side by side.
func printScanTable(w io.Writer, o options, results []*scanResult) {
	fmt.Fprintln(w, "| scenario | system | Pods | s to converged reports | CPU s | peak RSS MiB | apiserver + etcd CPU s | API writes | report objects | report MB in etcd | entries | intermediary objects (MB) at the end | intermediary peak (MB) | load 1m |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		conv := "not converged"
		if r.failure == "" {
			conv = fmt.Sprintf("%.1f", r.converged.Seconds())
		}
		writes := 0.0
		for _, v := range r.writes {
			writes += v
		}
		fmt.Fprintf(w, "| background scan | %s | %d | %s | %.1f | %.0f | %.1f | %.0f | %d | %s | %d | %d (%s) | %d (%s) | %s |\n",
			r.system, r.pods, conv, r.cpu, float64(r.peakRSS)/(1<<20), r.cpCPU, writes, r.reports, mb(r.repBytes), r.total,
			r.inter, mb(r.interBytes), r.peakInter, mb(r.peakInterB), r.load1)
	}
	for _, r := range results {
		if r.failure != "" {
			fmt.Fprintf(w, "\n%s, background scan: %s\n", r.system, r.failure)
		}
		keys := slices.Sorted(maps.Keys(r.writes))
		slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(r.writes[b], r.writes[a]) })
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %.0f", k, r.writes[k]))
		}
		fmt.Fprintf(w, "\n%s, API writes by verb and resource: %s\n", r.system, strings.Join(parts, ", "))
		for _, n := range r.notes {
			fmt.Fprintf(w, "%s: %s\n", r.system, n)
		}
	}
	if len(results) == 0 {
		return
	}
	// Entries by policy and result, each system side by side.
	policies := map[string]bool{}
	for _, r := range results {
		for p := range r.entries {
			policies[p] = true
		}
	}
	fmt.Fprintln(w)
	head, sep := "| policy |", "|---|"
	for _, r := range results {
		head += " " + r.system + " pass / fail / other |"
		sep += "---|"
	}
	if len(results) > 1 {
		head += " same |"
		sep += "---|"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, sep)
	for _, p := range slices.Sorted(maps.Keys(policies)) {
		line := "| " + p + " |"
		var cells []string
		for _, r := range results {
			e := r.entries[p]
			other := 0
			for k, v := range e {
				if k != "pass" && k != "fail" {
					other += v
				}
			}
			c := fmt.Sprintf(" %d / %d / %d", e["pass"], e["fail"], other)
			cells = append(cells, c)
			line += c + " |"
		}
		if len(results) > 1 {
			same := "yes"
			for _, c := range cells[1:] {
				if c != cells[0] {
					same = "NO"
				}
			}
			line += " " + same + " |"
		}
		fmt.Fprintln(w, line)
	}
}
