package main

import (
	"fmt"
	"io"
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
