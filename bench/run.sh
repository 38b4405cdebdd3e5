#!/usr/bin/env bash
# The benchmark suite: cppless against its raw limits and against its peers, all in one run.
#
#   bench/run.sh <build dir> [--quick]
#
# 1. installs the peers into a venv (scripts/setup-bench.sh; a peer that fails is reported as
#    unavailable, never assumed present, and the rest still runs)
# 2. builds what the suite needs outside CMake: the Ray C++ peer (bench/peers/ray_cpp/build.sh)
#    and the kernels' C library that Lithops tasks load with ctypes
# 3. runs every build/bench/bench_* (each figure repeated: bench_local several times, the others
#    repeat inside), bench_apps limits and cold (Python workers), multiprocessing.Pool, Lithops
#    localhost, Ray Python and C++ (inside a network namespace with only loopback,
#    bench/peers/run_ray.sh), then pi and n-queens strong scaling with every contender taking
#    turns round by round (bench/peers/py_peers.py apps), so drifting machine load hits all alike
# 4. writes bench/results/*.jsonl and meta.json, draws docs/img/*.png (bench/plot.py) and
#    regenerates the tables of docs/performance.md (bench/report.py)
#
# --quick runs the same suite, smaller: every benchmark program, each with its quick arguments
# (quick_args below).
# BENCH_ONLY="local others limits mp lithops ray apps" restricts the steps that run (development).
set -uo pipefail
build=${1:-build}
shift || true
quick=0
[[ ${1:-} == --quick ]] && quick=1
root=$(cd "$(dirname "$0")/.." && pwd)
here=$root/bench
build=$(cd "$build" && pwd)
results=$here/results
venv=${CPPLESS_BENCH_VENV:-$root/build/bench-venv}
peers=$build/bench-peers
work=$build/bench-tmp
only=${BENCH_ONLY:-"local others limits mp lithops ray apps"}
start=$(date +%s)

want() { [[ " $only " == *" $1 "* ]]; }
say() { printf '== %s (%ds)\n' "$*" $(($(date +%s) - start)) >&2; }

# Sizes: quick | full.
if ((quick)); then
  local_repeat=2; repeat=3; app_repeat=2
  limit_rounds=2000; cold_rounds=8; cold_repeat=2
  pi_samples=40000000; queens=14; tasks=1,2,8,64,256
  mp_rounds=300; mp_calls=4000
  ray_rounds=200; ray_calls=1000
  lithops_rounds=4; lithops_calls=100; lithops_tasks=1,2,8; lithops_repeat=2
else
  local_repeat=3; repeat=5; app_repeat=3
  limit_rounds=10000; cold_rounds=20; cold_repeat=3
  pi_samples=100000000; queens=13,14,15; tasks=1,2,4,8,16,32,64,128,256
  mp_rounds=2000; mp_calls=20000
  ray_rounds=1000; ray_calls=10000
  lithops_rounds=15; lithops_calls=1000; lithops_tasks=$tasks; lithops_repeat=3
fi

mkdir -p "$results" "$peers"
rm -rf "$work"
mkdir -p "$work"

# --- 1. peers --------------------------------------------------------------------------------
say "setup (scripts/setup-bench.sh)"
bash "$root/scripts/setup-bench.sh" >&2 || echo "setup-bench failed: peers will be reported unavailable" >&2
python=$venv/bin/python
[[ -x $python ]] || python=python3
peer_status=$(bash "$root/scripts/setup-bench.sh" --status 2>/dev/null)
echo "$peer_status" | sed 's/^/   /' >&2

# --- 2. builds outside CMake -----------------------------------------------------------------
say "building the peers' native parts"
rm -f "$peers/ray_cpp/unavailable.txt"
if ! err=$(bash "$here/peers/ray_cpp/build.sh" "$python" "$peers/ray_cpp" 2>&1); then
  mkdir -p "$peers/ray_cpp"
  echo "$err" | tail -n 1 >"$peers/ray_cpp/unavailable.txt"
  rm -f "$peers/ray_cpp/ray_bench"
  echo "   Ray C++ peer unavailable: $err" >&2
fi
kernels=$peers/libbench_kernels.so
clang++-19 -std=c++17 -O2 -shared -fPIC "$here/peers/lithops_kernels.cpp" -o "$kernels" ||
  echo "   building $kernels failed: the Lithops applications will be unavailable" >&2
# bench_apps is a CMake target (bench/apps.cmake); build it here when the build tree predates it.
apps=$build/bench/bench_apps
if [[ ! -x $apps ]] && ! cmake --build "$build" --target bench_apps >/dev/null 2>&1; then
  apps=$peers/bench_apps
  echo "   bench_apps is not a target of $build yet: compiling it directly" >&2
  cmake --build "$build" --target cppless >/dev/null 2>&1
  clang++-19 -std=c++20 -O2 -g -I"$root/include" "$here/apps/apps_bench.cpp" "$build/libcppless.a" \
    -Wl,--wrap=main -pthread -o "$apps" || echo "   compiling bench_apps failed" >&2
fi

# Records the run: when, where, how big, which peers.
{
  printf '{"date":"%s","quick":%s,"cores":%s,"commit":"%s","host_load":"%s","peers":{' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$([[ $quick == 1 ]] && echo true || echo false)" "$(nproc)" \
    "$(git -C "$root" rev-parse --short HEAD 2>/dev/null)" "$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "$peer_status" | awk -F': ' 'NF>1 {printf "%s\"%s\":\"%s\"", (n++?",":""), $1, substr($0, length($1)+3)}'
  printf '},"command":"bench/run.sh %s%s"}\n' "$(basename "$build")" "$([[ $quick == 1 ]] && echo ' --quick')"
} >"$results/meta.json"

status=0
: >"$results/steps.jsonl"
# Runs one step with a time limit; stdout (JSON lines) to the file; on failure, the step's own
# "unavailable" marker so the report says what happened instead of dropping the figure. Every
# step's duration and the machine's load when it started go to steps.jsonl (the machine is shared).
run_step() {
  local name=$1 limit=$2 out=$3 t0 load ok=true
  shift 3
  say "$name"
  t0=$(date +%s%N)
  load=$(cut -d' ' -f1 /proc/loadavg)
  if ! timeout --kill-after=10 "$limit" "$@" >>"$out"; then
    echo "   $name failed or timed out (limit $limit s)" >&2
    printf '{"suite":"step","case":"%s","unavailable":"failed or timed out after %s s"}\n' "$name" "$limit" >>"$out"
    status=1
    ok=false
  fi
  local ms=$((($(date +%s%N) - t0) / 1000000))
  printf '{"suite":"step","case":"%s","load_at_start":%s,"seconds":%d.%03d,"ok":%s}\n' "$name" "$load" \
    $((ms / 1000)) $((ms % 1000)) "$ok" >>"$results/steps.jsonl"
}

# --- 3. the runs -----------------------------------------------------------------------------
if want local && [[ -x $build/bench/bench_local ]]; then
  : >"$results/bench_local.jsonl"
  for ((r = 0; r < local_repeat; ++r)); do
    run_step "bench_local (repeat $r)" 600 "$work/local.jsonl" \
      "$build/bench/bench_local" $([[ $quick == 1 ]] && echo --quick)
    sed "s/^{/{\"repeat\":$r,/" "$work/local.jsonl" >>"$results/bench_local.jsonl"
    rm -f "$work/local.jsonl"
  done
fi

# Every other build/bench/bench_* (bench_shared, bench_graph, bench_lease, bench_cost, ...): each
# one runs, the quick run with the smaller arguments its program accepts (not every program knows
# --quick). A program without an entry here gets --quick; add an entry when one does not accept it.
quick_args() {
  case $1 in
    bench_serialization) echo --reps 21 ;;
    bench_shared_cluster) echo --rounds 1 --window-ms 300 ;;
    bench_shared_ml) echo --iterations 3 ;;
    *) echo --quick ;;
  esac
}
if want others; then
  for exe in "$build"/bench/bench_*; do
    name=$(basename "$exe")
    [[ -x $exe && $name != bench_local && $name != bench_apps ]] || continue
    : >"$results/$name.jsonl"
    # shellcheck disable=SC2046 # the arguments are words on purpose
    run_step "$name" 900 "$results/$name.jsonl" "$exe" $( ((quick)) && quick_args "$name")
  done
fi

if want limits; then
  out=$results/limits.jsonl
  : >"$out"
  if [[ -x $apps ]]; then
    run_step "bench_apps limits" 300 "$out" "$apps" limits --rounds $limit_rounds --repeat $repeat
    if [[ -x $venv/bin/python ]]; then
      run_step "bench_apps cold" 600 "$out" "$apps" cold --python "$venv/bin/python" --rounds $cold_rounds --repeat $cold_repeat
    else
      echo '{"suite":"cold","case":"python_numpy","unavailable":"no venv with numpy (scripts/setup-bench.sh failed)"}' >>"$out"
    fi
  else
    echo '{"suite":"limits","case":"raw_eventfd","unavailable":"bench_apps could not be built"}' >>"$out"
  fi
fi

if want mp; then
  : >"$results/peers_mp.jsonl"
  run_step "multiprocessing.Pool" 600 "$results/peers_mp.jsonl" \
    "$python" "$here/peers/py_peers.py" mp --rounds $mp_rounds --calls $mp_calls --repeat $repeat
fi

if want lithops; then
  : >"$results/peers_lithops.jsonl"
  run_step "Lithops localhost" 1200 "$results/peers_lithops.jsonl" \
    "$python" "$here/peers/py_peers.py" lithops --work "$work" --kernels "$kernels" \
    --rounds $lithops_rounds --calls $lithops_calls --repeat $lithops_repeat
fi

if want ray; then
  : >"$results/peers_ray.jsonl"
  run_step "Ray Python and C++ (own network namespace)" 1200 "$results/peers_ray.jsonl" \
    bash "$here/peers/run_ray.sh" "$python" 1100 -- ray --ray-cpp "$peers/ray_cpp" \
    --rounds $ray_rounds --calls $ray_calls --repeat $repeat
fi

# Applications: bench_apps (serial, std::thread, cppless), Ray C++ and Lithops take turns, one
# repeat each per round, on one Ray cluster in the namespace (bench/peers/py_peers.py apps).
if want apps; then
  : >"$results/apps.jsonl"
  run_step "applications: pi and n-queens, every contender in turn" 3600 "$results/apps.jsonl" \
    bash "$here/peers/run_ray.sh" "$python" 3500 -- apps --bench-apps "$apps" --ray-cpp "$peers/ray_cpp" \
    --kernels "$kernels" --work "$work" --pi $pi_samples --nqueens $queens --depth 3 \
    --tasks $tasks --lithops-tasks $lithops_tasks --app-repeat $app_repeat
fi

# --- 4. plots and the document ---------------------------------------------------------------
say "plots (bench/plot.py) and docs/performance.md (bench/report.py)"
"$python" "$here/plot.py" "$results" "$root/docs/img" || { echo "   plotting failed" >&2; status=1; }
"$python" "$here/report.py" "$results" "$root/docs/performance.md" || { echo "   report failed" >&2; status=1; }
rm -rf "$work"
say "done: bench/results/, docs/img/, docs/performance.md"
exit $status
