package servertest

import "time"

// Percentile returns the p-th percentile (nearest rank) of sorted
// durations; 0 for none.
func Percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p+99)/100 - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
