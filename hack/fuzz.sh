#!/usr/bin/env bash
# Runs every fuzz target of the module, found by their `func Fuzz...` lines
# in the test files (hack/ excluded), so that a new target is run without
# being listed anywhere.
#
#   hack/fuzz.sh seeds           each target on its seed corpus (f.Add and
#                                testdata/fuzz), without fuzzing: the check
#                                of .ci/run
#   hack/fuzz.sh fuzz [TIME]     each target fuzzed for TIME (default 30s)
#
# The targets of hostile inputs minimize briefly (a store file, a deep
# expression take long to minimize) and the JMESPath parser guard runs one
# worker at a time (each input may use a deep stack).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
mode=${1:-seeds}
fuzztime=${2:-30s}

targets=$(grep -rHo --include='*_test.go' --exclude-dir=hack --exclude-dir=.git '^func Fuzz[A-Za-z0-9_]*' . |
  sed -E 's|^\./(.*)/[^/]*_test\.go:func (Fuzz.*)$|\1 \2|' | sort)
if [ -z "$targets" ]; then
  echo "hack/fuzz.sh: no fuzz target found" >&2
  exit 1
fi

case "$mode" in
seeds)
  # One go test per package, every target of it on its seeds.
  echo "$targets" | awk '{a[$1] = a[$1] (a[$1] ? "|" : "") $2} END {for (p in a) print p, a[p]}' | sort |
    while read -r pkg names; do
      echo "$GO test -count=1 -run '^($names)\$' ./$pkg"
      $GO test -count=1 -run "^($names)\$" "./$pkg"
    done
  ;;
fuzz)
  echo "$targets" | while read -r pkg name; do
    extra=()
    case "$name" in
    FuzzParseGuard) extra=(-fuzzminimizetime 5s -parallel 1) ;;
    FuzzOpen) extra=(-fuzzminimizetime 2s) ;;
    esac
    echo "$GO test -run '^\$' -fuzz '^$name\$' -fuzztime $fuzztime ${extra[*]} ./$pkg"
    $GO test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" "${extra[@]}" "./$pkg"
  done
  ;;
*)
  echo "usage: hack/fuzz.sh seeds | fuzz [TIME]" >&2
  exit 2
  ;;
esac
