#!/usr/bin/env bash
# Runs the Ray peers (Python tasks, then the C++ driver on the same cluster) inside a network
# namespace of their own that has only loopback up: Ray binds the machine's external address
# otherwise, and here nothing may leave loopback. The namespace is deleted afterwards, and any
# process still in it (all of them started by this script) is ended by its pid.
#
#   bench/peers/run_ray.sh <venv python> <timeout s> -- ray|apps <py_peers.py arguments...>
# JSON lines on stdout. If the namespace cannot be made: "unavailable" lines for Ray instead, and
# `apps` runs outside any namespace without Ray (--no-ray).
set -uo pipefail
python=$1
limit=$2
shift 2
[[ ${1:-} == -- ]] && shift
what=${1:-ray}
shift
args=("$@")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ns="cppless-bench-$$"
# Ray's session files (short path: its socket names must fit 107 bytes); removed at the end, also
# what Ray's processes write after ray.shutdown() returned.
tmp=$(mktemp -d /tmp/cb-XXXXXX)

unavailable() {
  if [[ $what == apps ]]; then
    TMPDIR=$tmp timeout --kill-after=10 "$limit" "$python" "$here/py_peers.py" apps --no-ray "$1" "${args[@]}"
    rm -rf "$tmp"
    return
  fi
  for c in latency:ray_python throughput:ray_python latency:ray_cpp throughput:ray_cpp; do
    printf '{"suite":"%s","case":"%s","unavailable":"%s"}\n' "${c%%:*}" "${c#*:}" "$1"
  done
  rm -rf "$tmp"
}

cleanup() {
  local pids
  pids=$(ip netns pids "$ns" 2>/dev/null || true)
  if [[ -n $pids ]]; then
    echo "run_ray: ending leftover processes of $ns: $(echo $pids)" >&2
    kill -TERM $pids 2>/dev/null || true
    sleep 2
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [[ -n $pids ]] && kill -KILL $pids 2>/dev/null || true
  fi
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$tmp"
}

if ! command -v ip >/dev/null 2>&1; then
  unavailable "ip (iproute2) missing: cannot keep Ray on loopback"
  exit 0
fi
if ! ip netns add "$ns" 2>/tmp/"$ns".err; then
  unavailable "cannot create a network namespace: $(head -c 200 /tmp/"$ns".err | tr -d '\"\n')"
  rm -f /tmp/"$ns".err
  exit 0
fi
rm -f /tmp/"$ns".err
trap cleanup EXIT INT TERM
ip netns exec "$ns" ip link set lo up

# Ray's processes stay inside the namespace (they inherit it), so `ip netns pids` finds them all.
timeout --kill-after=10 "$limit" ip netns exec "$ns" env RAY_USAGE_STATS_ENABLED=0 TMPDIR="$tmp" \
  "$python" "$here/py_peers.py" "$what" "${args[@]}"
rc=$?
if ((rc == 124 || rc == 137)); then
  echo "run_ray: timed out after $limit s" >&2
fi
exit 0
