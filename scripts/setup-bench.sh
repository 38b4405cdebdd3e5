#!/usr/bin/env bash
# Installs the benchmark's peers and plotting tools into a virtual environment (default
# build/bench-venv, or $CPPLESS_BENCH_VENV), all from PyPI:
#   matplotlib, numpy  plots, and the "Python worker importing NumPy" of the cold-start case
#   ray, ray-cpp       Ray's Python tasks and Ray's C++ API (headers + libray_api.so)
#   lithops            Lithops with its localhost backend
# Idempotent: what is already importable is left alone. A package that fails to install is
# reported and skipped (the suite then reports that peer as unavailable); only a venv that
# cannot be created at all is an error. `iproute2` (ip netns, for Ray) comes from Debian.
#
#   scripts/setup-bench.sh            install what is missing
#   scripts/setup-bench.sh --status   print one line per peer: available or the reason it is not
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${CPPLESS_BENCH_VENV:-$root/build/bench-venv}"
python="${PYTHON:-python3}"
status_dir="$venv/.bench-status"

# package spec -> python import that proves it is there
declare -A probe=(
  [matplotlib]="import matplotlib"
  [numpy]="import numpy"
  [ray]="import ray"
  [ray-cpp]="import ray, os; assert os.path.exists(os.path.join(os.path.dirname(ray.__file__), 'cpp', 'lib', 'libray_api.so'))"
  [lithops]="import lithops"
)
order=(numpy matplotlib ray ray-cpp lithops)

if [[ ${1:-} == --status ]]; then
  for p in "${order[@]}"; do
    if [[ -x $venv/bin/python ]] && "$venv/bin/python" -c "${probe[$p]}" >/dev/null 2>&1; then
      echo "$p: available"
    elif [[ -s $status_dir/$p ]]; then
      echo "$p: unavailable: $(tail -n 1 "$status_dir/$p")"
    else
      echo "$p: unavailable: not installed (run scripts/setup-bench.sh)"
    fi
  done
  exit 0
fi

if ! command -v ip >/dev/null 2>&1; then
  echo "setup-bench: installing iproute2 (ip netns, to keep Ray on loopback)"
  (export DEBIAN_FRONTEND=noninteractive; apt-get install -y -qq --no-install-recommends iproute2 >/dev/null 2>&1 ||
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends iproute2 >/dev/null; }) ||
    echo "setup-bench: iproute2 failed to install: Ray peers will be unavailable"
fi

if [[ ! -x $venv/bin/python ]]; then
  echo "setup-bench: creating $venv"
  if ! "$python" -m venv "$venv" >/dev/null 2>&1; then
    "$python" -m venv --without-pip "$venv" || { echo "setup-bench: cannot create a venv at $venv" >&2; exit 1; }
  fi
fi
pip=("$venv/bin/python" -m pip)
if ! "${pip[@]}" --version >/dev/null 2>&1; then
  pip=("$python" -m pip --python "$venv/bin/python")
fi
mkdir -p "$status_dir"

missing=()
for p in "${order[@]}"; do
  "$venv/bin/python" -c "${probe[$p]}" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "setup-bench: installing ${missing[*]} into $venv"
# One resolver run for all (ray and ray-cpp must agree on the version); one at a time if that fails.
if ! "${pip[@]}" install -q --disable-pip-version-check "${missing[@]}" >"$status_dir/pip.log" 2>&1; then
  for p in "${missing[@]}"; do
    "${pip[@]}" install -q --disable-pip-version-check "$p" >"$status_dir/$p" 2>&1 || true
  done
fi
for p in "${missing[@]}"; do
  if "$venv/bin/python" -c "${probe[$p]}" >/dev/null 2>&1; then
    rm -f "$status_dir/$p"
  else
    reason=$(grep -E 'ERROR|error' "$status_dir/$p" "$status_dir/pip.log" 2>/dev/null | tail -n 1 | cut -c1-200)
    echo "pip install $p failed${reason:+: $reason}" >>"$status_dir/$p"
    echo "setup-bench: $p unavailable (${reason:-pip install failed})" >&2
  fi
done
echo "setup-bench: done"
exit 0
