#!/bin/sh
# batch.sh: `verdict apply` and `verdict test` against Kyverno's CLI, runs
# interleaved, each under /usr/bin/time (wall, user+system CPU, peak RSS).
#
#   hack/peer/batch.sh VERDICT KYVERNO_CLI POLICIES_DIR RESOURCES_FILE [ROUNDS] [TEST_DIR]
#
# Prints one line per run: tool, command, wall s, CPU s, peak RSS MiB, and
# the exit status (apply exits 1 when a policy fails: both do).
set -u
verdict=$1 kyverno=$2 pols=$3 res=$4 rounds=${5:-3} tests=${6:-}
out=$(mktemp)
run() {
	tool=$1 what=$2
	shift 2
	/usr/bin/time -f '%e %U %S %M %x' -o "$out" "$@" >/dev/null 2>&1
	read -r wall user sys rss status <<EOF
$(tail -n 1 "$out")
EOF
	printf '%-8s %-6s wall %6.2f s  cpu %6.2f s  peak %5.0f MiB  exit %s  load %s\n' \
		"$tool" "$what" "$wall" "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc)" "$status" \
		"$(cut -d' ' -f1 /proc/loadavg)"
}
i=0
while [ "$i" -lt "$rounds" ]; do
	run verdict apply "$verdict" apply "$pols" --resource "$res"
	run kyverno apply "$kyverno" apply "$pols" --resource "$res"
	if [ -n "$tests" ]; then
		run verdict test "$verdict" test "$tests"
		run kyverno test "$kyverno" test "$tests"
	fi
	i=$((i + 1))
done
rm -f "$out"
