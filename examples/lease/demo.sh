#!/usr/bin/env bash
# `make demo`, lease part: a resource manager and two executor managers on loopback ports (each
# a real `cppless` process, stopped by pid at the end), then pi on a lease of four executors,
# printing where each call ran.
#
#   examples/lease/demo.sh <build dir>
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
cli=$build/tools/cppless/cppless
example=$build/examples/lease/pi_lease_example
work=$(mktemp -d /tmp/cppless-lease-demo.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

secret=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
key=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '@managers %s\ndemo %s\n' "$key" "$secret" >"$work/secrets"
chmod 600 "$work/secrets"

# Starts a server in the background; its address (from its "listening on" line) goes to $addr.
addr=
start() {
  local log=$1
  shift
  "$@" >"$log" 2>"$log.err" &
  pids+=($!)
  for _ in $(seq 200); do
    if grep -q 'listening on' "$log" 2>/dev/null; then
      addr=$(sed -n 's/.*listening on //p' "$log")
      return 0
    fi
    kill -0 "${pids[-1]}" 2>/dev/null || break
    sleep 0.05
  done
  cat "$log.err" >&2
  echo "demo: $* did not start" >&2
  return 1
}

start "$work/rm.log" "$cli" resource-manager --listen 127.0.0.1:0 --secrets "$work/secrets"
rm_addr=$addr
for n in 1 2; do
  CPPLESS_MANAGER_SECRET=$key start "$work/em$n.log" "$cli" executor-manager --resource-manager "tcp://$rm_addr" \
    --cores 2 --memory 2048 --listen 127.0.0.1:0 --cache-dir "$work/cache$n" --hot-poll-us 100000
done
echo "resource manager at $rm_addr, two executor managers with 2 cores each (loopback)"
CPPLESS_RESOURCE_MANAGER=tcp://$rm_addr CPPLESS_USER=demo CPPLESS_SECRET=$secret \
  "$example" --n 8000000 --tasks 16 --cores 4
