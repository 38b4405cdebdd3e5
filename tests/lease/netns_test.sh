#!/usr/bin/env bash
# Multi-node lease test: the resource manager, two executor managers and the client each in their
# own network namespace, joined by veth links to a bridge in a fifth ("hub") namespace, with
# private addresses that exist only inside these namespaces. Everything is created and removed
# here; processes are stopped by pid. Exits 77 (ctest: skipped) where namespaces cannot be made.
#
#   netns_test.sh <cppless CLI> <lease_dispatch_test binary> <sanitized: 0|1>
set -uo pipefail
cli=$1
client=$2
sanitized=${3:-0}
tag=c$$
hub=cpl-hub-$tag
nodes=(cpl-rm-$tag cpl-em1-$tag cpl-em2-$tag cpl-cl-$tag)
addrs=(10.231.0.1 10.231.0.2 10.231.0.3 10.231.0.4)
work=$(mktemp -d /tmp/cppless-netns.XXXXXX)
pids=()

cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  for ns in "${nodes[@]}" "$hub"; do ip netns del "$ns" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT

if ! ip netns add "$hub" 2>"$work/err"; then
  echo "network namespaces unavailable here ($(cat "$work/err")): skipped; the loopback tests cover the same paths"
  exit 77
fi
ip -n "$hub" link add br0 type bridge && ip -n "$hub" link set br0 up || exit 1
for i in "${!nodes[@]}"; do
  ns=${nodes[$i]}
  ip netns add "$ns" || exit 1
  ip -n "$hub" link add "v$i" type veth peer name eth0 netns "$ns" || exit 1
  ip -n "$hub" link set "v$i" master br0 up || exit 1
  ip -n "$ns" addr add "${addrs[$i]}/24" dev eth0 || exit 1
  ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up || exit 1
done

key=cluster-key-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')
secret=alice-secret-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '@managers %s\nalice %s\n' "$key" "$secret" >"$work/secrets"
chmod 600 "$work/secrets"

# Starts a server in a namespace and waits for its "listening on" line.
start() {
  local ns=$1 log=$2
  shift 2
  ip netns exec "$ns" "$@" >"$log" 2>"$log.err" &
  pids+=($!)
  for _ in $(seq 400); do
    grep -q 'listening on' "$log" 2>/dev/null && return 0
    kill -0 "${pids[-1]}" 2>/dev/null || break
    sleep 0.05
  done
  echo "did not start: $*" >&2
  cat "$log.err" >&2
  exit 1
}

start "${nodes[0]}" "$work/rm.log" "$cli" resource-manager --listen "${addrs[0]}:7700" --secrets "$work/secrets" \
  --heartbeat-ms 200
limit=()
[[ $sanitized == 1 ]] && limit=(--memory-enforcement none)
for n in 1 2; do
  CPPLESS_MANAGER_SECRET=$key start "${nodes[$n]}" "$work/em$n.log" "$cli" executor-manager \
    --resource-manager "tcp://${addrs[0]}:7700" --listen "${addrs[$n]}:7701" --cores 2 --memory 2048 \
    --cache-dir "$work/cache$n" --hot-poll-us 20000 "${limit[@]}"
done

LEASE_NETNS_RM=tcp://${addrs[0]}:7700 LEASE_NETNS_SECRET=$secret \
  LEASE_NETNS_MANAGERS="${addrs[1]}:7701,${addrs[2]}:7701" \
  ip netns exec "${nodes[3]}" "$client" --gtest_filter='LeaseNetns.*'
