#!/usr/bin/env bash
# `cppless report` on hand-made traces whose numbers are known: GB-seconds, Lambda prices, rFaaS
# lease billing, the HTML timeline; and on a truncated trace and one with a line of another
# format version (it must name the line and why, and report the rest, exit status 3).
set -uo pipefail
cli=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
expect() { grep -qF -- "$2" <<<"$1" || fail "expected '$2' in: $1"; }

out=$("$cli" report "$here/good.jsonl" --html "$work/r.html" --json "$work/r.json" 2>&1) || fail "exit $? on a good trace: $out"
# fa: 1.5 ms + 0.2 ms billed as 2 ms + 1 ms at 1 GB = 0.003 GB-s; x86 0.003*0.0000166667 + 2*0.2e-6 = 4.5e-7.
expect "$out" "fa"
expect "$out" '$0.00000045'
# fb: billed 12 ms (from the trace, not the 10 ms execution) at 2 GB = 0.024 GB-s; failed 1.
expect "$out" "0.0240"
# fc on a lease: ta 10 s * 2 GB = 20 GB-s, tc 1 s, th 2 s: 20*0.0000041667 + 3*0.0000097222 = 0.000112500.
expect "$out" "ta 20.000 GB-s, tc 1.000 s, th 2.000 s: \$0.00011250"
grep -q "<svg" "$work/r.html" || fail "no timeline in the HTML page"
grep -q '"gb_seconds"' "$work/r.json" || fail "no JSON summary"
# Prices are overridable.
out=$("$cli" report "$here/good.jsonl" --price-x86 0 --price-request 0 2>&1) || fail "exit $? with overridden prices"
expect "$out" '$0.00000000'

# Truncated: the last line was cut off while it was being written.
head -c -40 "$here/good.jsonl" >"$work/cut.jsonl"
out=$("$cli" report "$work/cut.jsonl" 2>&1)
rc=$?
[[ $rc == 3 ]] || fail "truncated trace: exit $rc, expected 3: $out"
expect "$out" "line 6: truncated: the file ends inside this line"
expect "$out" "cppless report: 3 calls (1 of 6 lines skipped"

# A line of another format version, in the middle.
{ sed -n 1,2p "$here/good.jsonl"; echo '{"v":2,"kind":"call","what":"future"}'; sed -n '3,$p' "$here/good.jsonl"; } >"$work/v2.jsonl"
out=$("$cli" report "$work/v2.jsonl" 2>&1)
rc=$?
[[ $rc == 3 ]] || fail "version 2 line: exit $rc, expected 3"
expect "$out" "line 3: trace format version 2; this cppless reads version 1"
expect "$out" "cppless report: 4 calls (1 of 7 lines skipped"

# A line missing a field, and a file that is not a trace at all.
sed '2s/"execution_ns":1500000,//' "$here/good.jsonl" >"$work/field.jsonl"
out=$("$cli" report "$work/field.jsonl" 2>&1)
expect "$out" "line 2: field 'execution_ns' is missing or not an integer"
echo "hello" >"$work/none.jsonl"
out=$("$cli" report "$work/none.jsonl" 2>&1)
rc=$?
[[ $rc == 1 ]] || fail "not a trace: exit $rc, expected 1"
expect "$out" "no call could be read"
out=$("$cli" report "$work/missing.jsonl" 2>&1)
[[ $? == 1 ]] || fail "missing file: expected exit 1"
expect "$out" "cannot open"
echo "report_cli: ok"
