#!/usr/bin/env bash
# CPPLESS_TRACE end to end: a real program (the ray tracer, 6 tiles on local workers) traced through
# the environment, its trace written at exit and read back by `cppless report`.
set -uo pipefail
example=$1
cli=$2
scene=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CPPLESS_TRACE="$work/run.jsonl" "$example" --scene "$scene" --width 48 --height 32 --tile 16 --mode cppless >/dev/null ||
  { echo "FAIL: the example failed"; exit 1; }
[[ -s $work/run.jsonl ]] || { echo "FAIL: no trace written"; exit 1; }
out=$("$cli" report "$work/run.jsonl" --html "$work/run.html" 2>&1) || { echo "FAIL: report exit $?: $out"; exit 1; }
grep -qF "cppless report: 6 calls" <<<"$out" || { echo "FAIL: expected 6 calls: $out"; exit 1; }
grep -qF "render.hpp" <<<"$out" || { echo "FAIL: the function is not named: $out"; exit 1; }
grep -q '"role":"host"' "$work/run.jsonl" || { echo "FAIL: no process line"; exit 1; }
echo "env_trace: ok"
