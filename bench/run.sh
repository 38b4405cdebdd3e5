#!/usr/bin/env bash
# Runs every benchmark executable of a build and keeps its JSON lines in bench/results/.
#   bench/run.sh <build dir> [--quick]
set -euo pipefail
build=${1:-build}
shift || true
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$here/results"
status=0
for exe in "$build"/bench/bench_*; do
  [[ -x $exe ]] || continue
  name=$(basename "$exe")
  echo "== $name" >&2
  if "$exe" "$@" > "$here/results/$name.jsonl"; then
    echo "   -> bench/results/$name.jsonl" >&2
  else
    echo "   $name failed" >&2
    status=1
  fi
done
exit $status
