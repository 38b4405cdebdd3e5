"""The lease backend's part of docs/performance.md (from bench/results/bench_lease.jsonl).

Imported by report.py: lease_figures(records) -> figures or None; block_lease(figures) -> text;
lease_goals(figures) -> [(goal, measured, ok or None)].
"""

HOT_GOAL, WARM_GOAL, CACHED_MS_GOAL = 1.3, 1.5, 10.0


def _us(ns):
    return f"{ns / 1e3:,.1f} µs"


def _ms(ns):
    return f"{ns / 1e6:,.1f} ms"


def lease_figures(records):
    recs = [r for r in records if r.get("_file") == "bench_lease.jsonl" and r.get("suite") == "lease"]
    if not recs:
        return None
    rtt = {r["mode"]: r for r in recs if r.get("case") == "rtt"}
    first = {bool(r["cached"]): r for r in recs if r.get("case") == "first_result"}
    payload = sorted((r for r in recs if r.get("case") == "payload"), key=lambda r: r["bytes"])
    scale = {r["case"]: r for r in recs if r.get("case") in ("throughput", "pi")}
    return {"rtt": rtt, "first": first, "payload": payload, "scale": scale}


def block_lease(fig):
    if fig is None:
        return "_bench_lease: not measured (no bench/results/bench_lease.jsonl)._"
    rows = []
    for mode, label, raw_label in (("hot", "hot lease (both sides busy-poll)", "raw TCP, busy-polling recv"),
                                   ("warm", "warm lease (both sides block)", "raw TCP, blocking recv")):
        r = fig["rtt"].get(mode)
        if r:
            rows.append([label, _us(r["lease_median_ns"]), _us(r["lease_p90_ns"]), raw_label, _us(r["raw_median_ns"]),
                         f"{r['ratio']:.2f}x"])
    text = ("No-op call (`bench_lease`: a resource manager and an executor manager on loopback, the executor "
            "pinned to CPU 1) against a raw TCP ping-pong of the same size (56 bytes each way) between the "
            "benchmark and a process pinned to the same CPU, measured in alternating blocks in the same run; "
            "medians of sequential round trips.\n\n")
    text += "| call | median | p90 | baseline | baseline median | ÷ baseline |\n|---|---|---|---|---|---|\n"
    text += "\n".join("| " + " | ".join(row) + " |" for row in rows)
    if fig["first"]:
        text += "\n\nLease request to first result (resource manager, token, executor manager, executor start, one call):\n\n"
        text += "| executable | median | p10 | p90 | runs |\n|---|---|---|---|---|\n"
        for cached in (True, False):
            r = fig["first"].get(cached)
            if r:
                what = "cached at the manager" if cached else f"shipped ({r.get('executable_bytes', 0) / 1e6:.1f} MB, empty cache)"
                text += f"| {what} | {_ms(r['median_ns'])} | {_ms(r['p10_ns'])} | {_ms(r['p90_ns'])} | {r['samples']} |\n"
    if fig["payload"]:
        text += ("\nPayload sweep: echo of a `std::vector<char>` through a warm lease against the raw blocking TCP "
                 "echo of the same bytes (one send and one receive per side):\n\n")
        text += "| bytes each way | lease | raw TCP | ÷ raw | lease GiB/s (both ways) |\n|---|---|---|---|---|\n"
        for r in fig["payload"]:
            text += (f"| {r['bytes']:,} | {_us(r['lease_median_ns'])} | {_us(r['raw_median_ns'])} | {r['ratio']:.2f}x | "
                     f"{r['lease_gib_s']:.2f} |\n")
    tp, pi = fig["scale"].get("throughput"), fig["scale"].get("pi")
    if tp or pi:
        text += ("\nFour warm executors over two executor managers (2 cores each) against the local backend (one "
                 "worker per core), the same calls in alternating runs (medians), all on this machine's 2 cores:\n\n")
        text += "| work | lease | local | lease ÷ local |\n|---|---|---|---|\n"
        if tp:
            text += (f"| {tp['calls']:,} no-op calls dispatched at once | {tp['lease_per_s']:,.0f} calls/s | "
                     f"{tp['local_per_s']:,.0f} calls/s | {tp['lease_per_s'] / tp['local_per_s']:.2f}x |\n")
        if pi:
            ok = "" if pi.get("correct", True) else " (wrong results!)"
            text += (f"| pi, {pi['tasks']} tasks of {pi['samples']:,} samples{ok} | {pi['lease_s']:.3f} s | "
                     f"{pi['local_s']:.3f} s | {pi['lease_s'] / pi['local_s']:.2f}x |\n")
    return text.rstrip("\n")


def lease_goals(fig):
    out = []
    for mode, goal, what in (("hot", HOT_GOAL, "busy-polling"), ("warm", WARM_GOAL, "blocking")):
        name = f"lease {mode} call ≤ {goal}x the raw {what} TCP round trip (same run)"
        r = None if fig is None else fig["rtt"].get(mode)
        if r:
            out.append((name, f"{r['ratio']:.2f}x ({_us(r['lease_median_ns'])} vs {_us(r['raw_median_ns'])})",
                        r["ratio"] <= goal))
        else:
            out.append((name, "not measured in this run", None))
    name = f"lease request to first result ≤ {CACHED_MS_GOAL:g} ms, executable cached"
    r = None if fig is None else fig["first"].get(True)
    if r:
        out.append((name, _ms(r["median_ns"]), r["median_ns"] / 1e6 <= CACHED_MS_GOAL))
    else:
        out.append((name, "not measured in this run", None))
    return out


