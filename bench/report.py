#!/usr/bin/env python3
"""Regenerates the tables of docs/performance.md from the suite's JSON results (stdlib only).

    bench/report.py [bench/results] [docs/performance.md]

The document is hand-written prose with generated blocks between markers:

    <!-- generated:NAME -->  ...  <!-- /generated:NAME -->

Only those blocks are replaced, so commentary survives a rerun; a block whose marker is missing is
appended at the end. Every figure is the median over the repeated runs of the suite, with the
spread (min-max of the per-run medians) beside it; every ratio is taken between figures of the
same run of the suite. plot.py imports the loading and aggregation functions from here.
"""
import glob
import json
import os
import re
import statistics
import sys
from collections import defaultdict

from report_lease import block_lease, lease_figures, lease_goals

# --- loading ------------------------------------------------------------------------------------


def load(results_dir):
    """All JSON lines of all result files, and the run's meta.json ({} if missing)."""
    records = []
    for path in sorted(glob.glob(os.path.join(results_dir, "*.jsonl"))):
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as e:
                    # A garbled line is a broken run: say so instead of reporting the rest as if whole.
                    sys.exit(f"report.py: {path}:{lineno}: not a JSON object ({e.msg}); rerun that "
                             "benchmark or remove the file")
                rec["_file"] = os.path.basename(path)
                records.append(rec)
    meta = {}
    meta_path = os.path.join(results_dir, "meta.json")
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
    return records, meta


class Figure:
    """One figure over repeated runs: the median of the per-run values and their spread."""

    def __init__(self, values, extra=None):
        self.values = sorted(values)
        self.extra = extra or {}

    @property
    def ok(self):
        return bool(self.values)

    @property
    def median(self):
        return statistics.median(self.values)

    @property
    def lo(self):
        return self.values[0]

    @property
    def hi(self):
        return self.values[-1]

    @property
    def runs(self):
        return len(self.values)


class Unavailable:
    def __init__(self, reason):
        self.reason = reason
        self.ok = False


# Latency contenders in display order: key -> (label, where it comes from).
LATENCY = [
    ("raw_shm_spin", "raw shared-memory ring, busy poll", "bench_local"),
    ("raw_shm_sleep", "raw shared-memory ring, sleeping (futex/eventfd)", "bench_local"),
    ("raw_eventfd", "raw eventfd ping-pong", "bench_apps limits"),
    ("raw_pipe", "raw pipe ping-pong", "bench_local"),
    ("raw_tcp_loopback", "raw TCP loopback ping-pong", "bench_apps limits"),
    ("call_hot", "**cppless** local call, hot worker", "bench_local"),
    ("call_warm", "**cppless** local call, warm worker", "bench_local"),
    ("mp_pool", "Python multiprocessing.Pool (fork)", "py_peers mp"),
    ("ray_cpp", "Ray C++ API task", "ray_bench"),
    ("ray_python", "Ray Python task", "py_peers ray"),
    ("lithops", "Lithops localhost (v1 runner)", "py_peers lithops"),
]
THROUGHPUT = [
    ("cppless", "**cppless** local (all workers busy)"),
    ("mp_pool", "Python multiprocessing.Pool (fork)"),
    ("ray_cpp", "Ray C++ API tasks"),
    ("ray_python", "Ray Python tasks"),
    ("lithops", "Lithops localhost (v1 runner)"),
]
APP_MODES = [
    ("serial", "serial"),
    ("threads", "std::thread"),
    ("cppless", "cppless local"),
    ("ray_cpp", "Ray C++"),
    ("lithops", "Lithops localhost"),
]
SER_IMPLS = [
    ("cppless", "cppless archive"),
    ("cppless_reuse", "cppless, reused buffer"),
    ("cereal_binary", "cereal binary"),
    ("cereal_json", "cereal JSON"),
    ("cppless_base64", "cppless + base64"),
    ("base64_only", "base64 alone"),
    ("memcpy", "memcpy (limit)"),
]


def unavailable_reason(records, pred):
    for r in records:
        if "unavailable" in r and pred(r):
            return r["unavailable"]
    return None


def latency_figures(records):
    """key -> {'median': Figure, 'p10': Figure, ...} or Unavailable."""
    out = {}
    for key, _, _ in LATENCY:
        recs = [r for r in records if r.get("case") == key and "median_ns" in r
                and r.get("suite") in ("local", "limits", "latency")]
        if recs:
            fig = {}
            for q in ("median", "p10", "p25", "p75", "p90", "p99"):
                vals = [r[f"{q}_ns"] for r in recs if f"{q}_ns" in r]
                if vals:
                    fig[q] = Figure(vals)
            out[key] = fig
        else:
            reason = unavailable_reason(records, lambda r: r.get("case") == key)
            out[key] = Unavailable(reason or "not measured in this run")
    return out


def throughput_figures(records):
    out = {}
    for key, _ in THROUGHPUT:
        if key == "cppless":
            vals = [r["calls_per_s"] for r in records if r.get("suite") == "local" and r.get("case") == "throughput"]
            calls = [r.get("calls") for r in records if r.get("suite") == "local" and r.get("case") == "throughput"]
        else:
            vals = [r["calls_per_s"] for r in records if r.get("suite") == "throughput" and r.get("case") == key
                    and "calls_per_s" in r]
            calls = [r.get("calls") for r in records if r.get("suite") == "throughput" and r.get("case") == key]
        if vals:
            out[key] = Figure(vals, {"calls": max(c for c in calls if c)})
        else:
            reason = unavailable_reason(records, lambda r: r.get("case") == key and r.get("suite") == "throughput")
            out[key] = Unavailable(reason or "not measured in this run")
    return out


def cold_figures(records):
    out = {}
    for key, suite in (("cold_start", "local"), ("raw_spawn_exit", "local"), ("python_bare", "cold"),
                       ("python_numpy", "cold")):
        vals = [r["median_ns"] for r in records if r.get("suite") == suite and r.get("case") == key and "median_ns" in r]
        if vals:
            out[key] = Figure(vals)
        else:
            reason = unavailable_reason(records, lambda r: r.get("case") == key)
            out[key] = Unavailable(reason or "not measured in this run")
    return out


# Which program measured a mode; each program measures its own serial baseline between its runs.
HARNESS = {"serial": "bench_apps", "threads": "bench_apps", "cppless": "bench_apps", "ray_cpp": "ray_cpp",
           "lithops": "lithops"}


def app_figures(records):
    """(app, size) -> {mode: {tasks: Figure(seconds)} or Unavailable, "_serial_by": {harness: Figure}}, cores.

    modes["serial"] is bench_apps' serial run; "_serial_by" has every harness' own serial baseline."""
    runs = defaultdict(list)
    serial_by = defaultdict(list)
    correct = defaultdict(lambda: True)
    cores = 0
    for r in records:
        if r.get("suite") != "apps" or "seconds" not in r:
            continue
        by = r.get("by", "bench_apps")
        if r["mode"] == "serial":
            serial_by[(r["app"], r["size"], by)].append(r["seconds"])
            if by != "bench_apps":
                continue
        k = (r["app"], r["size"], r["mode"], r["tasks"])
        runs[k].append(r["seconds"])
        correct[k] &= bool(r.get("correct", True))
        cores = max(cores, r.get("cores", 0))
    workloads = sorted({(a, s) for (a, s, _, _) in runs})
    out = {}
    for app, size in workloads:
        modes = {}
        for mode, _ in APP_MODES:
            per_tasks = {t: Figure(v, {"correct": correct[(a, s, m, t)]})
                         for (a, s, m, t), v in runs.items() if a == app and s == size and m == mode}
            if per_tasks:
                modes[mode] = dict(sorted(per_tasks.items()))
            else:
                reason = unavailable_reason(records, lambda r: r.get("suite") == "apps" and r.get("mode") == mode
                                            and r.get("app", app) == app and r.get("size", size) == size)
                modes[mode] = Unavailable(reason or "not measured in this run")
        modes["_serial_by"] = {by: Figure(v) for (a, s, by), v in serial_by.items() if a == app and s == size}
        out[(app, size)] = modes
    return out, cores or os.cpu_count() or 1


def baseline(modes, mode):
    """The serial time every speedup divides: the plain serial program (bench_apps), measured in
    the same rounds as every contender. The peers' drivers time the same serial loop too (in the
    JSON, "by"); those run slower beside the peer's own background processes (Ray's driver threads,
    raylet and idle workers), so dividing by them would flatter the peer."""
    return modes.get("_serial_by", {}).get("bench_apps")


def serialization_figures(records):
    """(case, op) -> impl -> record (bench_serialization repeats inside: median, p10, p90)."""
    out = defaultdict(dict)
    for r in records:
        if r.get("suite") == "serialization" and "median_ns" in r:
            out[(r["case"], r["op"])][r["impl"]] = r
    return out


# --- formatting --------------------------------------------------------------------------------


def fmt_ns(ns):
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.{1 if ns < 1e5 else 0}f} µs"
    if ns < 1e9:
        return f"{ns / 1e6:.{2 if ns < 1e7 else 1}f} ms"
    return f"{ns / 1e9:.2f} s"


def fmt_rate(x):
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e4:
        return f"{x / 1e3:.0f} k"
    if x >= 1e3:
        return f"{x / 1e3:.1f} k"
    return f"{x:.0f}"


def fmt_ratio(x):
    if x >= 100:
        return f"{x:,.0f}x"
    if x >= 10:
        return f"{x:.0f}x"
    return f"{x:.2f}x"


def fmt_s(s):
    return f"{s:.3f}" if s < 10 else f"{s:.1f}"


def spread_ns(fig):
    return f"{fmt_ns(fig.lo)} – {fmt_ns(fig.hi)}" if fig.runs > 1 else "1 run"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def verdict(ok):
    return "met" if ok else "**missed**"


# --- the blocks --------------------------------------------------------------------------------


def block_meta(meta):
    if not meta:
        return "_No meta.json: run `make bench` to produce results._"
    peers = meta.get("peers", {})
    peer_lines = ", ".join(f"{k}: {v}" for k, v in peers.items()) or "unknown"
    kind = "quick run (`make bench-quick`: fewer repeats, smaller sizes)" if meta.get("quick") else "full run (`make bench`)"
    return (f"Results of the {kind} of {meta.get('date', '?')} on {meta.get('cores', '?')} cores "
            f"(load average at start: {meta.get('host_load', '?')}), commit `{meta.get('commit', '?')}`, "
            f"command `{meta.get('command', 'bench/run.sh')}`.\nPeers installed by `scripts/setup-bench.sh`: "
            f"{peer_lines}.")


def block_latency(lat):
    hot, warm = lat.get("call_hot"), lat.get("call_warm")
    rows = []
    for key, label, source in LATENCY:
        f = lat[key]
        if isinstance(f, Unavailable):
            rows.append([label, f"unavailable: {f.reason}", "", "", "", "", f"`{source}`"])
            continue
        med = f["median"]
        vs_hot = fmt_ratio(med.median / hot["median"].median) if isinstance(hot, dict) else ""
        vs_warm = fmt_ratio(med.median / warm["median"].median) if isinstance(warm, dict) else ""
        p99 = fmt_ns(f["p99"].median) if "p99" in f else ""
        rows.append([label, fmt_ns(med.median), spread_ns(med), p99, vs_hot, vs_warm, f"`{source}`"])
    return ("A no-op function, 64 B in and 64 B out (eventfd carries an 8-byte counter), called "
            "sequentially. Median of each run's median; spread = lowest and highest run median; p99 = "
            "median of the runs' p99. The last columns divide by cppless' hot and warm medians.\n\n"
            + table(["contender", "median", "spread over runs", "p99", "÷ cppless hot", "÷ cppless warm",
                     "measured by"], rows))


def block_steps(records):
    steps = [r for r in records if r.get("suite") == "step" and "seconds" in r]
    if not steps:
        return "_No step log in this run._"
    rows = [[r["case"], f"{r['seconds']:.0f} s", f"{r['load_at_start']:.1f}", "ok" if r.get("ok") else "**failed**"]
            for r in steps]
    total = sum(r["seconds"] for r in steps)
    return (f"Steps of this run ({total:.0f} s in all), with the machine's 1-minute load average when each "
            "began (2 cores: a load above 2 means other work competed with the benchmark).\n\n"
            + table(["step", "took", "load at start", "status"], rows))


def block_throughput(tp):
    base = tp.get("cppless")
    rows = []
    for key, label in THROUGHPUT:
        f = tp[key]
        if isinstance(f, Unavailable):
            rows.append([label, f"unavailable: {f.reason}", "", "", ""])
            continue
        ratio = fmt_ratio(base.median / f.median) if base.ok else ""
        rows.append([label, f"{fmt_rate(f.median)}calls/s", f"{fmt_rate(f.lo)} – {fmt_rate(f.hi)}",
                     f"{f.extra.get('calls', 0):,}", ratio if key != "cppless" else "1"])
    return ("No-op calls submitted at once and all awaited, every worker busy (one worker process per "
            "core for every contender).\n\n"
            + table(["contender", "median", "spread over runs", "calls per run", "cppless is faster by"], rows))


def block_cold(cold):
    labels = [("raw_spawn_exit", "raw `posix_spawn` + exit of a C++ executable", "bench_local"),
              ("cold_start", "**cppless** worker: process start to first result", "bench_local"),
              ("python_bare", "Python worker, bare interpreter: start to first result", "bench_apps cold"),
              ("python_numpy", "Python worker importing NumPy: start to first result", "bench_apps cold")]
    base = cold.get("cold_start")
    rows = []
    for key, label, src in labels:
        f = cold[key]
        if isinstance(f, Unavailable):
            rows.append([label, f"unavailable: {f.reason}", "", "", src])
            continue
        ratio = fmt_ratio(f.median / base.median) if base.ok else ""
        rows.append([label, fmt_ns(f.median), spread_ns(f), ratio, f"`{src}`"])
    return table(["worker", "median", "spread over runs", "vs cppless", "measured by"], rows)


def speedup(serial, fig):
    return serial.median / fig.median if serial else float("nan")


def block_apps(apps, cores):
    parts = []
    for (app, size), modes in apps.items():
        serial = modes.get("serial")
        if not isinstance(serial, dict) or 1 not in serial:
            parts.append(f"**{app} {size}**: no serial baseline in this run.")
            continue
        s0 = serial[1]
        title = (f"**Monte-Carlo pi, {size:,} samples**" if app == "pi" else f"**n-queens N={size}** "
                 "(valid 3-row prefixes, task t gets every T-th)")
        tasks = sorted({t for k, m in modes.items() if isinstance(m, dict) and k not in ("serial", "_serial_by")
                        for t in m})
        header = ["tasks"] + [label for mode, label in APP_MODES if mode != "serial"]
        rows = []
        for t in tasks:
            row = [str(t) + (" (= cores)" if t == cores else "")]
            for mode, _ in APP_MODES:
                if mode == "serial":
                    continue
                m = modes.get(mode)
                if isinstance(m, Unavailable):
                    row.append("unavailable" if t == tasks[0] else "")
                elif t in m:
                    f = m[t]
                    bad = "" if f.extra.get("correct", True) else " WRONG RESULT"
                    row.append(f"{fmt_s(f.median)} s ({speedup(baseline(modes, mode), f):.2f}x){bad}")
                else:
                    row.append("–")
            rows.append(row)
        notes = []
        for mode, label in APP_MODES:
            m = modes.get(mode)
            if isinstance(m, Unavailable):
                notes.append(f"{label}: unavailable: {m.reason}")
        own = [f"{h} {fmt_s(f.median)} s ({fmt_s(f.lo)}–{fmt_s(f.hi)}, {f.runs} runs)"
               for h, f in modes.get("_serial_by", {}).items()]
        parts.append(f"{title}: the serial loop took {fmt_s(s0.median)} s ({fmt_s(s0.lo)}–{fmt_s(s0.hi)} s over "
                     f"{s0.runs} rounds); timed by each harness beside its own runs: " + "; ".join(own)
                     + f". Cells: median time (speedup over the plain serial program, bench_apps; "
                     f"ideal = min(tasks, {cores})).\n\n" + table(header, rows)
                     + ("\n\n" + "; ".join(notes) if notes else ""))
    if not parts:
        return "_No application results in this run._"
    return "\n\n".join(parts)


def block_serialization(ser):
    if not ser:
        return "_`bench_serialization` gave no results in this run._"
    cases = sorted({c for c, _ in ser})
    rows = []
    for case in cases:
        for op in ("encode", "decode"):
            impls = ser.get((case, op), {})
            if not impls:
                continue
            cereal = impls.get("cereal_binary")
            row = [case, op]
            for impl, _ in SER_IMPLS:
                r = impls.get(impl)
                if not r:
                    row.append("–")
                    continue
                cell = f"{r['gib_per_s']:.2f}"
                if cereal and impl.startswith("cppless") and impl != "cppless_base64":
                    cell += f" ({cereal['median_ns'] / r['median_ns']:.1f}x cereal)"
                row.append(cell)
            rows.append(row)
    return ("GiB/s of each implementation's own payload (bytes / median time over the benchmark's own "
            "repetitions, p10/p90 in the JSON); in brackets, how much faster than cereal binary on the same "
            "data (ratio of times).\n\n"
            + table(["data", "op"] + [label for _, label in SER_IMPLS], rows))


def block_local(lat, tp, cold):
    def row(key, label, base_key=None, goal=""):
        f = lat.get(key) if key in lat else None
        if not isinstance(f, dict):
            return [label, "unavailable", "", "", goal]
        ratio = ""
        if base_key and isinstance(lat.get(base_key), dict):
            ratio = fmt_ratio(f["median"].median / lat[base_key]["median"].median)
        return [label, fmt_ns(f["median"].median), spread_ns(f["median"]),
                fmt_ns(f["p99"].median) if "p99" in f else "", ratio, goal]

    hot_goal = warm_goal = ""
    if isinstance(lat.get("call_hot"), dict) and isinstance(lat.get("raw_shm_spin"), dict):
        r = lat["call_hot"]["median"].median / lat["raw_shm_spin"]["median"].median
        hot_goal = f"≤ 3x: {verdict(r <= 3)}"
    if isinstance(lat.get("call_warm"), dict) and isinstance(lat.get("raw_shm_sleep"), dict):
        r = lat["call_warm"]["median"].median / lat["raw_shm_sleep"]["median"].median
        warm_goal = f"≤ 2x: {verdict(r <= 2)}"
    rows = [row("raw_shm_spin", "raw shared-memory ring, both sides busy-poll"),
            row("call_hot", "cppless call, hot worker (busy-poll while idle)", "raw_shm_spin", hot_goal),
            row("raw_shm_sleep", "raw shared-memory ring, both sides sleeping (futex / eventfd)"),
            row("call_warm", "cppless call, warm worker (`hot_poll = 0`)", "raw_shm_sleep", warm_goal),
            row("raw_pipe", "raw pipe ping-pong")]
    def plain(f, label, ratio=""):
        if isinstance(f, Unavailable) or not f.ok:
            return [label, "unavailable", "", "", "", ""]
        return [label, fmt_ns(f.median), spread_ns(f), "", ratio, ""]
    rows.append(plain(cold["raw_spawn_exit"], "raw `posix_spawn` + exit of the same executable"))
    c, s = cold["cold_start"], cold["raw_spawn_exit"]
    rows.append(plain(c, "cold call (process start to first result)",
                      fmt_ratio(c.median / s.median) + " spawn" if c.ok and s.ok else ""))
    t = tp["cppless"]
    if t.ok:
        rows.append(["throughput, no-op calls with all workers busy", f"{fmt_rate(t.median)}calls/s",
                     f"{fmt_rate(t.lo)} – {fmt_rate(t.hi)}", "", "", ""])
    return table(["case", "median", "spread over runs", "p99", "ratio", "goal"], rows)


# --- shared objects, AWS invocations, task graphs (the other components' benchmarks) --------------

# bench_shared's latency operations in display order: op -> (label, kind). "single" operations are
# what the ≤ 1.3x goal covers (one object, one script, one round trip, as docs/shared-objects.md
# counts them); "compound" ones (a server-side read-modify-write with a range check, a barrier
# arrival) are shown beside them with their ratio but not held to it.
SHARED_OPS = [
    ("ping_raw", "`PING`, raw hiredis connection (baseline)", "baseline"),
    ("ping", "`PING` through a cppless session", "baseline"),
    ("counter.get", "counter.get", "read"),
    ("atomic.load", "atomic.load", "read"),
    ("best.value", "best.value", "read"),
    ("best.get", "best.get (value + payload)", "read"),
    ("map.get", "map.get", "read"),
    ("future.get_ready", "future.get (already set)", "read"),
    ("latch.try_wait", "latch.try_wait", "read"),
    ("counter.add", "counter.add", "write"),
    ("atomic.store", "atomic.store", "write"),
    ("atomic.exchange", "atomic.exchange", "write"),
    ("atomic.compare_exchange", "atomic.compare_exchange", "write"),
    ("best.offer_no_gain", "best.offer (no improvement)", "write"),
    ("best.offer_improves", "best.offer (improves)", "write"),
    ("map.put", "map.put", "write"),
    ("queue.push", "queue.push", "write"),
    ("queue.try_pop", "queue.try_pop", "write"),
    ("semaphore.try_acquire", "semaphore.try_acquire", "write"),
    ("semaphore.release", "semaphore.release", "write"),
    ("map.merge_add", "map.merge (add)", "compound"),
    ("barrier.arrive_1_party", "barrier.arrive_and_wait, 1 party", "compound"),
]
SHARED_GOAL = 1.3
SHARED_SINGLE = ("read", "write")
GRAPH_CASES = [
    ("chain", "chain (every node on the critical path)"),
    ("layered", "layered, width 100 (each node reads two of the layer before)"),
    ("fan", "fan 1 → N → `when_all` → 1"),
]


def not_measured(records, file, step):
    """Why a benchmark's results are missing: the step's own "unavailable" marker, if any."""
    reason = unavailable_reason(records, lambda r: r.get("_file") == file or r.get("case") == step)
    return f"not measured in this run ({reason})" if reason else "not measured in this run"


def this_run(records, file, step):
    """The records of one program's results file, unless the step log of this run shows that the
    program did not run (BENCH_ONLY left it out, or it was not built; the file then holds an earlier run's results)."""
    steps = {r.get("case") for r in records if r.get("suite") == "step"}
    if steps and step not in steps:
        return []
    return [r for r in records if r.get("_file") == file]


def shared_figures(records):
    """{'latency': op -> {median, p99, ratio: Figure}, 'barrier': parties -> {...}, 'throughput':
    (kind, n) -> Figure(ops/s)}, or Unavailable. Ratios are bench_shared's own, each within one run."""
    recs = [r for r in this_run(records, "bench_shared.jsonl", "bench_shared")
            if r.get("suite") == "shared" and "op" in r]
    if not recs:
        return Unavailable(not_measured(records, "bench_shared.jsonl", "bench_shared"))
    lat, bar, tp = defaultdict(lambda: defaultdict(list)), defaultdict(lambda: defaultdict(list)), defaultdict(list)
    for r in recs:
        op = r["op"]
        if op == "barrier" and "parties" in r:
            for q in ("median", "p99", "mean"):
                if f"{q}_ns" in r:
                    bar[r["parties"]][q].append(r[f"{q}_ns"])
            bar[r["parties"]]["generations"].append(r.get("generations", 0))
        elif op == "counter.add_throughput" and "ops_per_s" in r:
            tp[("processes", r["clients"])].append(r["ops_per_s"])
        elif op == "counter.add_throughput_functions" and "ops_per_s" in r:
            tp[("functions", r["functions"])].append(r["ops_per_s"])
        elif "median_ns" in r:
            lat[op]["median"].append(r["median_ns"])
            if "p99_ns" in r:
                lat[op]["p99"].append(r["p99_ns"])
            if "ratio_vs_ping" in r:
                lat[op]["ratio"].append(r["ratio_vs_ping"])
            lat[op]["n"].append(r.get("n", 0))
    return {"latency": {op: {q: Figure(v) for q, v in d.items()} for op, d in lat.items()},
            "barrier": {p: {q: Figure(v) for q, v in d.items()} for p, d in sorted(bar.items())},
            "throughput": {k: Figure(v) for k, v in sorted(tp.items())}}


def shared_kinds(latency):
    """op -> (label, kind) for every measured op; an op the list does not know is single-key (the
    benchmark holds every latency op to the goal)."""
    known = {op: (label, kind) for op, label, kind in SHARED_OPS}
    order = [op for op, _, _ in SHARED_OPS if op in latency] + sorted(op for op in latency if op not in known)
    return [(op, *known.get(op, (op, "write"))) for op in order]


def shared_worst(sh):
    """(ratio, op) of the worst single-key operation, or None."""
    worst = None
    for op, _, kind in shared_kinds(sh["latency"]):
        f = sh["latency"][op].get("ratio")
        if kind in SHARED_SINGLE and f and f.ok and (worst is None or f.median > worst[0]):
            worst = (f.median, op)
    return worst


def with_spread(f, fmt):
    return fmt(f.median) + (f" ({fmt(f.lo)} – {fmt(f.hi)})" if f.runs > 1 else "")


def runs_note(program, figs):
    """How many runs of the program the figures come from (these programs run once per suite)."""
    n = max((f.runs for f in figs), default=0)
    if n <= 1:
        return f"One run of `{program}` in this suite. "
    return f"Median of {n} runs of `{program}`, lowest – highest in brackets. "


def block_shared(sh):
    if isinstance(sh, Unavailable):
        return f"_bench_shared: {sh.reason}._"
    latency = sh["latency"]
    ping = latency.get("ping_raw", {}).get("median")
    rows = []
    for op, label, kind in shared_kinds(latency):
        f = latency[op]
        med, ratio = f.get("median"), f.get("ratio")
        plus = ""
        if ping and op != "ping_raw":
            d = med.median - ping.median
            plus = ("+" if d >= 0 else "−") + fmt_ns(abs(d))
        if kind in SHARED_SINGLE:
            goal = verdict(ratio.median <= SHARED_GOAL) if ratio else ""
        elif kind == "compound":
            goal = (f"not single-key ({'within' if ratio.median <= SHARED_GOAL else 'above'} "
                    f"{SHARED_GOAL}x)") if ratio else "not single-key"
        else:
            goal = ""
        rows.append([label, kind if kind != "baseline" else "", with_spread(med, fmt_ns),
                     fmt_ns(f["p99"].median) if "p99" in f else "",
                     fmt_ratio(ratio.median) if ratio else "", plus, goal])
    calls = max((max(f["n"].values) for f in latency.values() if "n" in f), default=0)
    return (runs_note("bench_shared", [f["median"] for f in latency.values() if "median" in f])
            + f"Each operation alone on one connection, {calls:,} timed calls in rounds of 100 that interleave "
            "all operations (so machine load falls on all alike); median and p99 of single calls. × PING = "
            "median over the median of a raw `PING` (hiredis, no cppless code) to the same `redis-server` in "
            "the same run; + PING = the difference. Single-key operations (reads and writes: one object, one "
            f"script, one round trip) are held to ≤ {SHARED_GOAL}x; compound ones are shown with their "
            "ratio, without a verdict.\n\n"
            + table(["operation", "kind", "median", "p99", "× PING", "+ PING", f"≤ {SHARED_GOAL}x PING"], rows)
            + shared_summary(latency))


def shared_summary(latency):
    """One sentence: the range of × PING of the reads and of the single-key writes, against the goal."""
    parts = []
    for kind, name in (("read", "reads"), ("write", "single-key writes")):
        ratios = [latency[op]["ratio"].median for op, _, k in shared_kinds(latency)
                  if k == kind and latency[op].get("ratio") and latency[op]["ratio"].ok]
        if ratios:
            lo, hi = min(ratios), max(ratios)
            span = fmt_ratio(lo) if lo == hi else f"{fmt_ratio(lo)} – {fmt_ratio(hi)}"
            missed = sum(r > SHARED_GOAL for r in ratios)
            parts.append(f"{name} {span} a `PING` ({'all within' if not missed else f'{missed} of {len(ratios)} above'} "
                         f"{SHARED_GOAL}x)")
    return ("\n\nIn this run: " + "; ".join(parts) + ".") if parts else ""


def block_shared_scale(sh):
    if isinstance(sh, Unavailable):
        return f"_bench_shared: {sh.reason}._"
    bar_rows = []
    for parties in (2, 16, 64):
        f = sh["barrier"].get(parties)
        if not f:
            bar_rows.append([parties, "not measured in this run", "", "", ""])
            continue
        bar_rows.append([parties, with_spread(f["median"], fmt_ns), fmt_ns(f["p99"].median) if "p99" in f else "",
                         fmt_ns(f["mean"].median) if "mean" in f else "",
                         f"{int(f['generations'].median):,}" if "generations" in f else ""])
    tp = sh["throughput"]
    one = tp.get(("processes", 1))
    tp_rows = []
    keys = sorted(set(tp) | {("functions", 64)}, key=lambda k: (k[0] != "processes", k[1]))
    for kind, n in keys:
        label = f"{n} {'process' if kind == 'processes' and n == 1 else kind}" + (
            " (local workers)" if kind == "functions" else "")
        f = tp.get((kind, n))
        if not f:
            tp_rows.append([label, "not measured in this run", "", ""])
            continue
        tp_rows.append([label, with_spread(f, lambda x: f"{x:,.0f}"), f"{f.median / n:,.0f}",
                        fmt_ratio(f.median / one.median) if one else ""])
    return ("Barrier: one process per party, back-to-back generations, time per generation measured in party "
            "0.\n\n" + table(["parties", "median", "p99", "mean", "generations"], bar_rows)
            + "\n\n`counter.add` throughput: every client adds as fast as it can for the same window (1 s; 0.3 s "
            "in a quick run), all started together by a latch; calls/s = the counter's final value / window. "
            "Processes are forked clients; functions are lambdas capturing the counter's handle, run by "
            "cppless' local workers (one worker per function).\n\n"
            + table(["concurrent clients", "calls/s", "per client", "vs 1 process"], tp_rows))


def separate_run(records, file, step):
    """The records of a results file that the suite's step log may not list (written by a hand run
    of the program), and a note saying which run they come from."""
    recs = [r for r in records if r.get("_file") == file]
    steps = {r.get("case") for r in records if r.get("suite") == "step"}
    note = "" if step in steps else f"From a separate run of `{step}` (not in this suite's step log). "
    return recs, note


def lease_measured(records):
    return any(r.get("_file") == "bench_lease.jsonl" and r.get("suite") == "lease" for r in records)


def cluster_figures(records):
    """bench_shared_cluster: {'rows': [(op, redis, masters, record)], 'note'} or Unavailable."""
    recs, note = separate_run(records, "bench_shared_cluster.jsonl", "bench_shared_cluster")
    rows = [r for r in recs if r.get("suite") == "shared_cluster" and "ops_per_s" in r]
    if not rows:
        return Unavailable(not_measured(records, "bench_shared_cluster.jsonl", "bench_shared_cluster"))
    return {"rows": rows, "note": note}


def block_shared_cluster(cl):
    if isinstance(cl, Unavailable):
        return f"_bench_shared_cluster: {cl.reason}._"
    first = cl["rows"][0]

    def where(r):
        return "one Redis server" if r["redis"] == "standalone" else (
            f"Redis Cluster, {r['masters']} master{'s' if r['masters'] != 1 else ''}")

    rows = [[f"`{r['op']}`", where(r), f"{fmt_rate(r['ops_per_s'])} ops/s",
             f"{fmt_rate(r['min_ops_per_s'])} – {fmt_rate(r['max_ops_per_s'])}", fmt_ratio(r["ratio_vs_1_master"])]
            for r in cl["rows"]]
    return (cl["note"]
            + f"{first['clients']} client processes, each writing its own object for a fixed window, the "
            f"configurations taking turns; median over {first['rounds']} round{'s' if first['rounds'] != 1 else ''}, "
            "lowest – highest round in the spread column.\n\n"
            + table(["operation", "Redis", "median", "spread over rounds", "÷ 1 master"], rows))


ML_MODES = [("serial", "serial"), ("threads", "std::thread"), ("cppless", "cppless (model in Redis)")]


def ml_figures(records):
    """bench_shared_ml: {'rows': {app: {mode: record}}, 'note'} or Unavailable."""
    recs, note = separate_run(records, "bench_shared_ml.jsonl", "bench_shared_ml")
    rows = defaultdict(dict)
    for r in recs:
        if r.get("suite") == "ml" and "seconds" in r:
            rows[r["app"]][r["mode"]] = r
    if not rows:
        return Unavailable(not_measured(records, "bench_shared_ml.jsonl", "bench_shared_ml"))
    return {"rows": dict(rows), "note": note}


def block_shared_ml(ml):
    if isinstance(ml, Unavailable):
        return f"_bench_shared_ml: {ml.reason}._"
    names = {"kmeans": "k-means", "logreg": "logistic regression"}
    out = []
    first = None
    for app, modes in ml["rows"].items():
        for mode, label in ML_MODES:
            r = modes.get(mode)
            if not r:
                out.append([names.get(app, app), label, "not measured", "", "", "", ""])
                continue
            first = first or r
            it = r["iterations"]
            shared = f"{r['shared_ms_per_iteration']:.1f} ms" if mode == "cppless" else "–"
            out.append([names.get(app, app), label, fmt_s(r["seconds"]), fmt_ns(r["seconds"] / it * 1e9),
                        shared, fmt_ratio(r["speedup_vs_serial"]), "yes" if r.get("model_equal") else "**NO**"])
    return (ml["note"]
            + f"Crucial's applications (`examples/ml`), {first['workers']} workers, {first['iterations']} iterations, "
            "one run each. *shared state per iteration*: the median over the workers of the time each "
            "spent in shared-object calls per iteration; *model equal*: the final model equals the serial one.\n\n"
            + table(["application", "mode", "seconds", "per iteration", "shared state per iteration",
                     "speedup over serial", "model equal"], out))


def aws_figures(records):
    """{'runs': (client, inflight) -> {per_s, p50_us, p99_us, calls: Figure}, 'dispatch': Figure(per ms)},
    or Unavailable."""
    recs = [r for r in this_run(records, "bench_aws.jsonl", "bench_aws")
            if r.get("bench") == "aws" and r.get("client") != "warmup"]
    if not recs:
        return Unavailable(not_measured(records, "bench_aws.jsonl", "bench_aws"))
    runs = defaultdict(lambda: defaultdict(list))
    dispatch = []
    for r in recs:
        if r.get("client") == "cppless-dispatch-only" and "per_ms" in r:
            dispatch.append(r["per_ms"])
        elif "per_s" in r and "inflight" in r:
            for q in ("per_s", "p50_us", "p99_us", "calls", "client_cpu_us_per_call"):
                if q in r:
                    runs[(r["client"], r["inflight"])][q].append(r[q])
    return {"runs": {k: {q: Figure(v) for q, v in d.items()} for k, d in sorted(runs.items())},
            "dispatch": Figure(dispatch)}


def aws_best(aws, client):
    """(invocations/s, in-flight) of the client's best in-flight setting, or None."""
    best = [(d["per_s"].median, n) for (c, n), d in aws["runs"].items() if c == client]
    return max(best) if best else None


def block_aws(aws):
    if isinstance(aws, Unavailable):
        return f"_bench_aws: {aws.reason}._"
    runs = aws["runs"]
    rows = []
    for client in ("cppless", "boto3"):
        mine = sorted(n for c, n in runs if c == client)
        if not mine:
            rows.append([client, "", "", "not measured in this run", "", "", "", ""])
        for n in mine:
            d = runs[(client, n)]
            b = runs.get(("boto3", n))
            if client == "boto3":
                ratio = "1"
            elif b:
                ratio = fmt_ratio(d["per_s"].median / b["per_s"].median)
            elif any(c == "boto3" for c, _ in runs):
                ratio = f"boto3 not run at {n:,}"
            else:
                ratio = "–"
            rows.append([client, f"{n:,}" + ((" thread" if n == 1 else " threads") if client == "boto3" else ""),
                         f"{int(d['calls'].median):,}" if "calls" in d else "",
                         with_spread(d["per_s"], lambda x: f"{x:,.0f}"),
                         fmt_ns(d["p50_us"].median * 1e3) if "p50_us" in d else "",
                         fmt_ns(d["p99_us"].median * 1e3) if "p99_us" in d else "",
                         f"{d['client_cpu_us_per_call'].median:,.0f} µs" if "client_cpu_us_per_call" in d else "–",
                         ratio])
    text = (runs_note("bench_aws", [d["per_s"] for d in runs.values()])
            + "A no-op function through the local Lambda-compatible server (HTTPS, HTTP/2): cppless' invoke "
            "client (`bench_aws`, a pool of HTTP/2 connections, calls kept in flight by `dispatch` / "
            "`wait_one`) and boto3's `invoke` from a `ThreadPoolExecutor` (`bench/aws_boto3_bench.py`), the "
            "same request to the same server and function in the same run. Latency: from sending a call to "
            "its result. Client CPU: the cppless process' CPU time (caller and I/O thread) per call; the "
            "server and its environments share the same two cores. The last column divides by boto3 at the "
            "same number in flight.\n\n"
            + table(["client", "in flight", "calls", "invocations/s", "p50", "p99", "client CPU / call",
                     "÷ boto3, same in flight"],
                    rows))
    c, b = aws_best(aws, "cppless"), aws_best(aws, "boto3")
    if c and b:
        text += (f"\n\nBest of each: cppless {c[0]:,.0f}/s ({c[1]:,} in flight) ÷ boto3 {b[0]:,.0f}/s "
                 f"({b[1]:,} thread{'s' if b[1] != 1 else ''}) = {fmt_ratio(c[0] / b[0])}.")
    elif not b:
        text += "\n\nboto3: not measured in this run (bench_aws runs it only when the venv's Python exists)."
    if aws["dispatch"].ok:
        text += (f" The client alone (`dispatch` of 10,000 calls: encode, base64, hand-over to the I/O thread, "
                 f"no network): {with_spread(aws['dispatch'], lambda x: f'{x:,.0f}')} calls/ms.")
    return text


def graph_figures(records):
    """(case, api, backend) -> Figure(µs per task) and the task counts, or Unavailable."""
    recs = [r for r in this_run(records, "bench_graph.jsonl", "bench_graph")
            if r.get("suite") == "graph" and "per_task_us" in r]
    if not recs:
        return Unavailable(not_measured(records, "bench_graph.jsonl", "bench_graph"))
    per, tasks = defaultdict(list), {}
    for r in recs:
        per[(r["case"], r["api"], r["backend"])].append(r["per_task_us"])
        tasks[r["case"]] = r.get("tasks", 0)
    return {"per_task": {k: Figure(v) for k, v in per.items()}, "tasks": tasks}


def block_graph(gr):
    if isinstance(gr, Unavailable):
        return f"_bench_graph: {gr.reason}._"
    per = gr["per_task"]
    us = lambda x: f"{x:.2f}"  # noqa: E731

    def cell(case, api, backend):
        f = per.get((case, api, backend))
        return with_spread(f, us) if f else "–"

    def diff(case, backend):
        g, a = per.get((case, "graph", backend)), per.get((case, "async", backend))
        if not (g and a):
            return "–"
        d = g.median - a.median
        return ("+" if d >= 0 else "−") + f"{abs(d):.2f}"

    def ratio(case):
        g, t = per.get((case, "graph", "local")), per.get((case, "threads", "in-process"))
        return fmt_ratio(g.median / t.median) if g and t else "–"

    known = [c for c, _ in GRAPH_CASES]
    cases = [c for c in known if c in gr["tasks"]] + sorted(c for c in gr["tasks"] if c not in known)
    labels = dict(GRAPH_CASES)
    rows = [[labels.get(c, c), f"{gr['tasks'][c]:,}", cell(c, "graph", "local"), cell(c, "async", "local"),
             diff(c, "local"), cell(c, "graph", "inline"), cell(c, "async", "inline"), diff(c, "inline"),
             cell(c, "threads", "in-process"), ratio(c)] for c in cases]
    return (runs_note("bench_graph", per.values())
            + "µs per task: the median time of the whole DAG (over `bench_graph`'s own repeats) divided by its "
            "number of no-op tasks. *graph*: the graph API (host controller); *async*: the same DAG as plain "
            "`cppless::async` calls, wave by wave; *local*: warm worker processes; *inline*: a backend that "
            "runs each call in the host process at once (cppless' own cost, no transport); *threads*: the same "
            "DAG on a 2-thread in-process pool with dependency counters (standing in for Taskflow, which "
            "Debian does not package). *graph − async*: what a graph node adds to the call it makes.\n\n"
            + table(["shape", "tasks", "graph, local", "async, local", "graph − async, local", "graph, inline",
                     "async, inline", "graph − async, inline", "threads, in-process", "graph, local ÷ threads"],
                    rows))


RAYTRACER_MODES = [("serial", "serial"), ("threads", "std::thread"), ("cppless", "cppless, scene in every call"),
                   ("cppless_preserialized", "cppless, scene pre-serialized")]


def raytracer_figures(records):
    """case -> {'modes': mode -> Figure(seconds), 'meta': first record, 'unequal': count}, or Unavailable."""
    recs = [r for r in this_run(records, "bench_raytracer.jsonl", "bench_raytracer")
            if r.get("suite") == "raytracer" and "seconds" in r]
    if not recs:
        return Unavailable(not_measured(records, "bench_raytracer.jsonl", "bench_raytracer"))
    out = {}
    for r in recs:
        c = out.setdefault(r["case"], {"modes": defaultdict(list), "meta": r, "unequal": 0})
        c["modes"][r["mode"]].append(r["seconds"])
        c["unequal"] += 0 if r.get("equal_to_serial", True) else 1
    for c in out.values():
        c["modes"] = {m: Figure(v) for m, v in c["modes"].items()}
    return out


def block_raytracer(rt):
    if isinstance(rt, Unavailable):
        return f"_bench_raytracer: {rt.reason}._"
    rows = []
    for case, c in rt.items():
        m, serial = c["meta"], c["modes"].get("serial")
        row = [case, f"{m['width']}x{m['height']}, {m['tiles']} tiles", f"{m['objects']} / {m['scene_bytes']:,} B"]
        for mode, _ in RAYTRACER_MODES:
            f = c["modes"].get(mode)
            if not f:
                row.append("–")
                continue
            cell = with_spread(f, fmt_s)
            if serial and mode != "serial":
                cell += f" ({serial.median / f.median:.2f}x)"
            row.append(cell)
        row.append("yes" if c["unequal"] == 0 else f"NO ({c['unequal']} runs differ)")
        rows.append(row)
    return (runs_note("bench_raytracer", [f for c in rt.values() for f in c["modes"].values()])
            + "The ray tracer (`examples/raytracer`): seconds per image, speedup over serial in brackets. "
            "*std::thread*: one thread per core pulling tiles; *cppless*: one local call per tile, a lambda "
            "capturing the scene (encoded and decoded in every call); *pre-serialized*: the scene in a "
            "`cppless::preserialized` (encoded once, decoded once per worker; timed from the encoding on). "
            "*equal*: every offloaded image equals the serial one byte for byte.\n\n"
            + table(["scene", "image", "objects / encoded scene"] + [label for _, label in RAYTRACER_MODES]
                    + ["equal"], rows))


def cost_figures(records):
    """(memory_mb, functions) -> {'seconds', 'usd_x86', 'usd_arm', 'gb_s': Figure}, and the price model; or Unavailable."""
    recs = [r for r in this_run(records, "bench_cost.jsonl", "bench_cost") if r.get("suite") == "cost" and "seconds" in r]
    if not recs:
        return Unavailable(not_measured(records, "bench_cost.jsonl", "bench_cost"))
    per = defaultdict(lambda: defaultdict(list))
    for r in recs:
        d = per[(r["memory_mb"], r["functions"])]
        d["seconds"].append(r["seconds"])
        d["usd_x86"].append(r["lambda_x86_usd"])
        d["usd_arm"].append(r["lambda_arm_usd"])
        d["gb_s"].append(r["gb_seconds"])
    return {"points": {k: {q: Figure(v) for q, v in d.items()} for k, d in sorted(per.items())},
            "model": recs[0].get("price_model", ""), "samples": recs[0].get("samples", 0)}


def block_cost(cost):
    if isinstance(cost, Unavailable):
        return f"_bench_cost: {cost.reason}._"
    rows = []
    for (memory, n), d in cost["points"].items():
        rows.append([f"{memory:,}", f"{n}", with_spread(d["seconds"], fmt_s), f"{d['gb_s'].median:.3f}",
                     f"${d['usd_x86'].median * 1e6:.2f}", f"${d['usd_arm'].median * 1e6:.2f}"])
    return (runs_note("bench_cost", [d["seconds"] for d in cost["points"].values()])
            + f"pi on {cost['samples']:,} samples split into N functions, run on local workers and traced; the "
            "traces priced by `cppless report` (" + cost["model"] + "). Local workers get the same CPU whatever "
            "the memory size, so memory changes the price here, not the time (on Lambda, more memory also "
            "means more CPU). Figure: `docs/img/cost_parallelism.png`.\n\n"
            + table(["memory MB", "functions", "seconds", "GB-s", "Lambda x86_64, µUSD", "Lambda arm64, µUSD"], rows))


def trace_figures(records):
    """bench_trace's summaries: Figure(ratio on/off), Figure(off ns), Figure(on ns); or Unavailable."""
    recs = [r for r in this_run(records, "bench_trace.jsonl", "bench_trace")
            if r.get("suite") == "trace" and r.get("case") == "hot_noop_overhead"]
    if not recs:
        return Unavailable(not_measured(records, "bench_trace.jsonl", "bench_trace"))
    return {"ratio": Figure([r["ratio"] for r in recs]), "off": Figure([r["median_off_ns"] for r in recs]),
            "on": Figure([r["median_on_ns"] for r in recs]), "bytes": recs[0].get("bytes_per_line", 0),
            "rounds": recs[0].get("rounds", 0), "calls": recs[0].get("calls", 0)}


def block_trace(tr):
    if isinstance(tr, Unavailable):
        return f"_bench_trace: {tr.reason}._"
    return (runs_note("bench_trace", [tr["ratio"]])
            + f"Hot no-op call (one busy-polling worker, 64 B each way), {tr['rounds']} rounds of {tr['calls']:,} calls "
            "alternating tracing off and on (which goes first alternates too); medians over the rounds. "
            f"A trace line is about {tr['bytes']} bytes.\n\n"
            + table(["tracing off", "tracing on", "on ÷ off", "goal"],
                    [[fmt_ns(tr["off"].median), fmt_ns(tr["on"].median), fmt_ratio(tr["ratio"].median), "≤ 1.05x"]]))


def goals(lat, tp, cold, apps, cores, ser, shared=None, aws=None):
    """[(goal, measured, met or None)]; shared and aws as shared_figures and aws_figures return them."""
    out = []

    def lat_ratio(a, b):
        if isinstance(lat.get(a), dict) and isinstance(lat.get(b), dict):
            return lat[a]["median"].median / lat[b]["median"].median
        return None

    r = lat_ratio("call_warm", "raw_shm_sleep")
    out.append(("warm local call ≤ 2x the raw round trip of its transport (shared-memory ring, sleeping)",
                f"{fmt_ratio(r)}" if r else "not measured", r <= 2 if r else None))
    r = lat_ratio("call_hot", "raw_shm_spin")
    out.append(("hot local call ≤ 3x shared-memory ping-pong (busy poll)",
                f"{fmt_ratio(r)}" if r else "not measured", r <= 3 if r else None))
    for peer, need in (("ray_cpp", 10), ("lithops", 50)):
        a, b = tp["cppless"], tp[peer]
        name = "Ray C++ tasks" if peer == "ray_cpp" else "Lithops localhost"
        if a.ok and b.ok:
            r = a.median / b.median
            out.append((f"throughput ≥ {need}x {name}", fmt_ratio(r), r >= need))
        else:
            why = b.reason if isinstance(b, Unavailable) else "cppless figure missing"
            out.append((f"throughput ≥ {need}x {name}", f"unavailable: {why}", None))
    a, b = cold["cold_start"], cold["python_numpy"]
    if a.ok and b.ok:
        r = a.median / b.median
        out.append(("cold start ≤ 1/10 of a Python worker importing NumPy",
                    f"{fmt_ns(a.median)} vs {fmt_ns(b.median)} = 1/{b.median / a.median:.0f}", r <= 0.1))
    else:
        out.append(("cold start ≤ 1/10 of a Python worker importing NumPy", "not measured", None))
    for (app, size), modes in apps.items():
        serial = modes.get("serial")
        name = f"pi ({size:,} samples)" if app == "pi" else f"n-queens N={size}"
        if not isinstance(serial, dict) or 1 not in serial:
            continue
        s0 = serial[1]
        cp, th = modes.get("cppless"), modes.get("threads")
        if isinstance(cp, dict) and isinstance(th, dict) and cores in cp and cores in th:
            a, b = speedup(baseline(modes, "cppless"), cp[cores]), speedup(baseline(modes, "threads"), th[cores])
            out.append((f"{name}: within 10% of std::thread's speedup at {cores} tasks (= cores)",
                        f"{a:.2f}x vs {b:.2f}x ({a / b:.0%})", a >= 0.9 * b))
            for peer, label in (("ray_cpp", "Ray C++"), ("lithops", "Lithops")):
                p = modes.get(peer)
                if isinstance(p, dict) and cores in p:
                    c = speedup(baseline(modes, peer), p[cores])
                    out.append((f"{name}: ahead of {label} at {cores} tasks", f"{a:.2f}x vs {c:.2f}x", a > c))
                else:
                    why = p.reason if isinstance(p, Unavailable) else "not measured"
                    out.append((f"{name}: ahead of {label} at {cores} tasks", f"unavailable: {why}", None))
    if ser:
        worst = None
        for (case, op), impls in ser.items():
            for impl in ("cppless",):
                if impl in impls and "cereal_binary" in impls:
                    r = impls["cereal_binary"]["median_ns"] / impls[impl]["median_ns"]
                    if worst is None or r < worst[0]:
                        worst = (r, f"{case} {op}")
        if worst:
            out.append(("serialization ≥ cereal binary everywhere (encode and decode, both data sets)",
                        f"slowest case {worst[1]}: {worst[0]:.1f}x cereal's speed", worst[0] >= 1))
        dec = [impls["base64_only"]["gib_per_s"] for (case, op), impls in ser.items()
               if op == "decode" and "base64_only" in impls]
        if dec:
            out.append(("base64 decode ≥ 1 GiB/s", f"{min(dec):.2f} GiB/s (slowest data set)", min(dec) >= 1))
    else:
        out.append(("serialization ≥ cereal binary everywhere; base64 decode ≥ 1 GiB/s",
                    "bench_serialization gave no results", None))
    if shared is not None:
        compound = [label.split(" (")[0].split(",")[0] for op, label, kind in SHARED_OPS
                    if kind == "compound" and not isinstance(shared, Unavailable) and op in shared["latency"]]
        name = (f"shared objects: every single-key operation ≤ {SHARED_GOAL}x a raw Redis `PING` (same server, "
                "same run)" + (f"; not single-key: {', '.join(compound)}" if compound else ""))
        worst = None if isinstance(shared, Unavailable) else shared_worst(shared)
        ping = None if isinstance(shared, Unavailable) else shared["latency"].get("ping_raw", {}).get("median")
        if worst and ping:
            med = shared["latency"][worst[1]]["median"].median
            out.append((name, f"worst: {worst[1]} {fmt_ratio(worst[0])} ({fmt_ns(med)} vs `PING` "
                              f"{fmt_ns(ping.median)})", worst[0] <= SHARED_GOAL))
        else:
            why = shared.reason if isinstance(shared, Unavailable) else "not measured in this run"
            out.append((name, why, None))
    if aws is not None:
        name = "AWS invocations: throughput ≥ 10x boto3 with a thread pool (local Lambda server, best of each)"
        c = None if isinstance(aws, Unavailable) else aws_best(aws, "cppless")
        b = None if isinstance(aws, Unavailable) else aws_best(aws, "boto3")
        if c and b:
            out.append((name, f"{fmt_ratio(c[0] / b[0])}: cppless {c[0]:,.0f}/s ({c[1]:,} in flight), boto3 "
                              f"{b[0]:,.0f}/s ({b[1]:,} thread{'s' if b[1] != 1 else ''})",
                        c[0] / b[0] >= 10))
        else:
            why = aws.reason if isinstance(aws, Unavailable) else (
                "boto3 not measured in this run" if c else "cppless not measured in this run")
            out.append((name, why, None))
        name = "AWS client alone ≥ 10 invocations/ms (the paper's floor)"
        if not isinstance(aws, Unavailable) and aws["dispatch"].ok:
            d = aws["dispatch"].median
            out.append((name, f"{d:,.0f} calls/ms (dispatch of 10,000 calls, no network)", d >= 10))
        else:
            out.append((name, aws.reason if isinstance(aws, Unavailable) else "not measured in this run", None))
    return out


def block_goals(goal_rows):
    rows = [[g, m, "unavailable" if ok is None else verdict(ok)] for g, m, ok in goal_rows]
    return table(["goal", "measured in this run", "verdict"], rows)


# --- the document -------------------------------------------------------------------------------


def block_aws_lambda_os(records):
    """Packages for the Lambda OS (bench/aws_lambda_os_bench.py) and the throttled map
    (bench_aws --throttled-map), both written to aws_lambda_os.jsonl by hand-run commands: run.sh
    does not run them (they take minutes and qemu), so no step-log filter applies."""
    recs = [r for r in records if r.get("_file") == "aws_lambda_os.jsonl"]
    if not recs:
        return "_aws_lambda_os.jsonl: not measured._"
    lines = ["From `bench/results/aws_lambda_os.jsonl`, written by `bench/aws_lambda_os_bench.py` "
             "(packages of `aws_app`'s function builds, cold starts under the local Lambda server) and "
             "`bench_aws --throttled-map`; medians over the rounds, lowest – highest in brackets.", ""]
    packages = [r for r in recs if r.get("bench") == "aws_package"]
    if packages:
        lines += ["| package | zip | unzipped | files |", "|---|---|---|---|"]
        for r in packages:
            lines.append(f"| {r['architecture']} | {r['zip_bytes'] / 1024:,.0f} KiB | "
                         f"{r['unzipped_bytes'] / 1024:,.0f} KiB | {r['files']} |")
        lines.append("")
    cold = [r for r in recs if r.get("bench") == "aws_cold_start"]
    if cold:
        lines += ["| cold start | rounds | first call (new environment) | Init Duration | warm call |",
                  "|---|---|---|---|---|"]
        for arch in sorted({r["architecture"] for r in cold}):
            rs = [r for r in cold if r["architecture"] == arch]
            def cell(key):
                fig = Figure([r[key] for r in rs if r.get(key) is not None])
                if not fig.ok:
                    return "–"
                return f"{fig.median:.1f} ms ({fig.lo:.1f} – {fig.hi:.1f})" if len(fig.values) > 1 else f"{fig.median:.1f} ms"
            how = "under qemu-aarch64-static (context only)" if rs[0].get("emulated") else "native"
            lines.append(f"| {arch}, {how} | {len(rs)} | {cell('cold_ms')} | {cell('init_ms')} | {cell('warm_ms')} |")
        lines.append("")
    tm = [r for r in recs if r.get("bench") == "aws_throttled_map"]
    if tm:
        fig = Figure([r["seconds"] for r in tm])
        ideal = tm[0]["ideal_s"]
        failed = sum(r["failed"] for r in tm)
        retries = Figure([r["retries"] for r in tm])
        spread = f" ({fig.lo:.1f} – {fig.hi:.1f})" if len(fig.values) > 1 else ""
        lines.append(f"Throttled map: {tm[0]['calls']} calls of {tm[0]['call_s']} s sent at once to a function "
                     f"limited to {tm[0]['concurrency']} environments (the server answers 429 beyond): "
                     f"{fig.median:.1f} s{spread} over {len(tm)} run(s) against the ideal {ideal} s "
                     f"({fig.median / ideal:.2f}x), {retries.median:.0f} retried 429s (median), "
                     f"{failed} failed call(s).")
    return "\n".join(lines).rstrip()


def replace_blocks(text, blocks):
    for name, body in blocks.items():
        start, end = f"<!-- generated:{name} -->", f"<!-- /generated:{name} -->"
        pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
        new = f"{start}\n{body}\n{end}"
        if pattern.search(text):
            text = pattern.sub(lambda _: new, text)
        else:
            text = text.rstrip("\n") + f"\n\n{new}\n"
    return text


def main():
    if any(a.startswith("-") for a in sys.argv[1:]) or not all(os.path.isdir(a) for a in sys.argv[1:2]):
        sys.exit("usage: report.py [RESULTS_DIR [PERFORMANCE_MD]]  (regenerates the tables of the document "
                 "from the results; RESULTS_DIR must exist)")
    results = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")
    doc = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "docs", "performance.md")
    records, meta = load(results)
    lat = latency_figures(records)
    tp = throughput_figures(records)
    cold = cold_figures(records)
    apps, cores = app_figures(records)
    ser = serialization_figures(records)
    shared = shared_figures(records)
    aws = aws_figures(records)
    graph = graph_figures(records)
    raytracer = raytracer_figures(records)
    cost = cost_figures(records)
    tracing = trace_figures(records)
    goal_rows = goals(lat, tp, cold, apps, cores, ser, shared, aws)
    if not isinstance(tracing, Unavailable):
        r = tracing["ratio"].median
        goal_rows.append(("tracing on adds ≤ 5% to the hot no-op call", fmt_ratio(r), r <= 1.05))
    lease = lease_figures(records)
    goal_rows += lease_goals(lease)
    blocks = {
        "meta": block_meta(meta),
        "goals": block_goals(goal_rows),
        "local": block_local(lat, tp, cold),
        "latency": block_latency(lat),
        "throughput": block_throughput(tp),
        "cold": block_cold(cold),
        "apps": block_apps(apps, cores),
        "serialization": block_serialization(ser),
        "shared": block_shared(shared),
        "shared-scale": block_shared_scale(shared),
        "shared-cluster": block_shared_cluster(cluster_figures(records)),
        "shared-ml": block_shared_ml(ml_figures(records)),
        "aws": block_aws(aws),
        "graph": block_graph(graph),
        "raytracer": block_raytracer(raytracer),
        "cost": block_cost(cost),
        "trace": block_trace(tracing),
        "lease": (separate_run(records, "bench_lease.jsonl", "bench_lease")[1]
                  if lease_measured(records) else "") + block_lease(lease),
        "steps": block_steps(records),
    }
    text = open(doc).read() if os.path.exists(doc) else "# Performance\n"
    with open(doc, "w") as f:
        f.write(replace_blocks(text, blocks))
    # docs/aws.md carries its own generated block (replaced only where its marker is).
    aws_doc = os.path.join(os.path.dirname(doc), "aws.md")
    if os.path.exists(aws_doc):
        aws_text = open(aws_doc).read()
        if "<!-- generated:aws-lambda-os -->" in aws_text:
            with open(aws_doc, "w") as f:
                f.write(replace_blocks(aws_text, {"aws-lambda-os": block_aws_lambda_os(records)}))
    for g, m, ok in goal_rows:
        print(f"{'?' if ok is None else ('met   ' if ok else 'MISSED')}  {g}: {m}", file=sys.stderr)


if __name__ == "__main__":
    main()
