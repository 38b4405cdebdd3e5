#!/usr/bin/env bash
# `cppless manifest` prints the paper's shape for a cppless program and refuses anything else.
set -euo pipefail
cli=$1 exe=$2
out=$("$cli" manifest "$exe")
grep -q '"entry_points"' <<<"$out"
grep -q '"function_name": "(lambda at examples/pi/main.cpp' <<<"$out"
grep -q '"memory": 512' <<<"$out"
grep -q '"timeout": 60' <<<"$out"
if "$cli" manifest /bin/true 2>err.txt; then echo "accepted a non-cppless program"; exit 1; fi
grep -q "not linked with cppless" err.txt
if "$cli" manifest /no/such/file 2>err.txt; then echo "accepted a missing file"; exit 1; fi
grep -q "cannot read" err.txt
rm -f err.txt
echo "manifest CLI ok"
