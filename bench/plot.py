#!/usr/bin/env python3
"""Draws the suite's plots from bench/results/ (matplotlib, installed by scripts/setup-bench.sh).

    bench/plot.py [bench/results] [docs/img]

    latency.png          no-op call latency of every contender: box p25-p75, whiskers p10-p90,
                         median line, p99 dot; log scale (median over the runs of each percentile)
    throughput.png       no-op calls per second, all workers busy: bars, min-max over runs
    cold_start.png       process start to first result: cppless worker vs Python workers
    apps_<app>_<n>.png   strong scaling: time and speedup over serial against tasks, ideal line
    serialization.png    GiB/s per implementation, data set and direction
    cost_parallelism.png pi: time and Lambda price against the number of functions at two memory
                         sizes (the TACO paper's figure), from traces of a local run
A contender that was unavailable in the run is drawn as an empty slot labelled "unavailable".
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402

CPPLESS = "#1f77b4"
RAW = "#7f7f7f"
PEER = "#d62728"
COLORS = {"serial": "#000000", "threads": "#2ca02c", "cppless": CPPLESS, "ray_cpp": "#ff7f0e", "lithops": "#9467bd"}
MARKERS = {"serial": "s", "threads": "^", "cppless": "o", "ray_cpp": "D", "lithops": "v"}


def strip(label):
    return label.replace("**", "")


def subtitle(meta):
    if not meta:
        return ""
    kind = "quick run" if meta.get("quick") else "full run"
    return f"{kind} {meta.get('date', '')}, {meta.get('cores', '?')} cores, load {meta.get('host_load', '?')}"


def plot_latency(lat, meta, out):
    stats, labels, colors, missing = [], [], [], []
    for key, label, _ in report.LATENCY:
        f = lat[key]
        name = strip(label)
        if isinstance(f, report.Unavailable):
            missing.append((len(labels), f.reason))
            labels.append(name)
            stats.append(None)
            colors.append(PEER)
            continue
        med = f["median"].median / 1e3
        get = lambda q, d: f[q].median / 1e3 if q in f else d  # noqa: E731
        q1, q3 = get("p25", med), get("p75", med)
        stats.append(dict(med=med, q1=q1, q3=q3, whislo=get("p10", q1), whishi=get("p90", get("p99", q3)),
                          fliers=[get("p99", med)] if "p99" in f else [], label=name))
        labels.append(name + ("" if "p25" in f else "\n(p10/p50/p99 only)"))
        colors.append(CPPLESS if "cppless" in label else RAW if key.startswith("raw") else PEER)
    fig, ax = plt.subplots(figsize=(10, 6.5))
    present = [i for i, s in enumerate(stats) if s]
    b = ax.bxp([stats[i] for i in present], positions=present, orientation="horizontal", showfliers=True, patch_artist=True,
               widths=0.6, flierprops=dict(marker=".", markersize=6))
    for patch, i in zip(b["boxes"], present):
        patch.set_facecolor(colors[i])
        patch.set_alpha(0.55)
    for line in b["medians"]:
        line.set_color("black")
        line.set_linewidth(2)
    for i, s in enumerate(stats):
        if s:
            ax.annotate(report.fmt_ns(s["med"] * 1e3), (s["med"], i), xytext=(0, 11), textcoords="offset points",
                        ha="center", fontsize=7)
    for i, reason in missing:
        ax.text(0.02, i, "unavailable: " + reason[:90], va="center", fontsize=7, color=PEER,
                transform=ax.get_yaxis_transform())
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("round trip of one no-op call, µs (log scale)")
    ax.set_title("Invocation latency of a no-op call, 64 B in / 64 B out\n"
                 "box p25–p75, whiskers p10–p90, dot p99 (medians over runs)\n" + subtitle(meta), fontsize=9)
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def bars(ax, names, figs, colors, fmt, log=True):
    for i, (f, c) in enumerate(zip(figs, colors)):
        if isinstance(f, report.Unavailable) or not f.ok:
            ax.text(i, 0.02, "unavailable", rotation=90, ha="center", va="bottom", fontsize=8, color=PEER,
                    transform=ax.get_xaxis_transform())
            continue
        ax.bar(i, f.median, color=c, alpha=0.8)
        ax.errorbar(i, f.median, yerr=[[f.median - f.lo], [f.hi - f.median]], color="black", capsize=4)
        ax.annotate(fmt(f.median), (i, f.hi), xytext=(0, 3), textcoords="offset points", ha="center", fontsize=8)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, fontsize=8, rotation=15, ha="right")
    ax.set_xlim(-0.6, len(names) - 0.4)
    if log:
        import math
        ax.set_yscale("log")
        lows = [f.lo for f in figs if not isinstance(f, report.Unavailable) and f.ok and f.lo > 0]
        highs = [f.hi for f in figs if not isinstance(f, report.Unavailable) and f.ok]
        if lows:  # bars start at a power of ten below the smallest, so heights compare by decade
            ax.set_ylim(bottom=10 ** math.floor(math.log10(min(lows)) - 0.3), top=max(highs) * 2.5)
    ax.grid(axis="y", which="both", alpha=0.3)


def plot_throughput(tp, meta, out):
    names = [strip(label) for _, label in report.THROUGHPUT]
    figs = [tp[k] for k, _ in report.THROUGHPUT]
    colors = [CPPLESS if k == "cppless" else PEER for k, _ in report.THROUGHPUT]
    fig, ax = plt.subplots(figsize=(8, 5))
    bars(ax, names, figs, colors, lambda x: report.fmt_rate(x) + "/s")
    ax.set_ylabel("no-op calls per second (log scale)")
    ax.set_title("Throughput, all workers busy (median, min–max over runs)\n" + subtitle(meta), fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_cold(cold, meta, out):
    keys = [("raw_spawn_exit", "raw posix_spawn + exit"), ("cold_start", "cppless worker"),
            ("python_bare", "Python worker (bare)"), ("python_numpy", "Python worker + import numpy")]
    figs = []
    for k, _ in keys:
        f = cold[k]
        figs.append(report.Figure([v / 1e6 for v in f.values]) if f.ok else f)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    bars(ax, [n for _, n in keys], figs, [RAW, CPPLESS, PEER, PEER], lambda x: f"{x:.1f} ms")
    ax.set_ylabel("process start to first result, ms (log scale)")
    ax.set_title("Cold start (median, min–max over runs)\n" + subtitle(meta), fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_app(app, size, modes, cores, meta, out):
    serial = modes.get("serial")
    if not isinstance(serial, dict) or 1 not in serial:
        return False
    s0 = serial[1]
    fig, (ax_t, ax_s) = plt.subplots(1, 2, figsize=(12, 4.8))
    all_tasks = sorted({t for k, m in modes.items() if isinstance(m, dict) and k != "_serial_by" for t in m})
    unavailable = []
    for mode, label in report.APP_MODES:
        m = modes.get(mode)
        base = report.baseline(modes, mode) or s0
        if mode == "serial":
            ax_t.axhline(s0.median, color=COLORS[mode], linestyle=":", label=f"serial ({s0.median:.2f} s)")
            continue
        if not isinstance(m, dict):
            unavailable.append(label)
            continue
        ts = sorted(m)
        med = [m[t].median for t in ts]
        ax_t.errorbar(ts, med, yerr=[[m[t].median - m[t].lo for t in ts], [m[t].hi - m[t].median for t in ts]],
                      marker=MARKERS[mode], color=COLORS[mode], label=label, capsize=2, linewidth=1.3)
        ax_s.plot(ts, [base.median / x for x in med], marker=MARKERS[mode], color=COLORS[mode], label=label,
                  linewidth=1.3)
    ideal_x = [t for t in all_tasks]
    ax_s.plot(ideal_x, [min(t, cores) for t in ideal_x], color="gray", linestyle="--",
              label=f"ideal: min(tasks, {cores} cores)")
    for ax in (ax_t, ax_s):
        ax.set_xscale("log", base=2)
        ax.set_xticks(all_tasks)
        ax.set_xticklabels([str(t) for t in all_tasks])
        ax.set_xlabel("tasks (same total work)")
        ax.grid(alpha=0.3, which="both")
    ax_t.set_yscale("log")
    ax_t.set_ylabel("time, s (log scale; median, min–max over runs)")
    ax_s.set_ylabel("speedup over the serial program")
    ax_s.set_ylim(bottom=0)
    ax_s.axhline(1, color="black", linewidth=0.5)
    name = f"Monte-Carlo pi, {size:,} samples" if app == "pi" else f"n-queens N={size}, prefix decomposition"
    extra = f" — unavailable: {', '.join(unavailable)}" if unavailable else ""
    fig.suptitle(f"{name}: strong scaling on {cores} cores{extra}\n{subtitle(meta)}", fontsize=10)
    ax_t.legend(fontsize=8)
    ax_s.legend(fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True


def plot_serialization(ser, meta, out):
    if not ser:
        return False
    groups = sorted(ser)
    impls = [(k, n) for k, n in report.SER_IMPLS if any(k in ser[g] for g in groups)]
    fig, ax = plt.subplots(figsize=(11, 5))
    width = 0.8 / max(1, len(impls))
    cmap = plt.get_cmap("tab10")
    for j, (impl, label) in enumerate(impls):
        xs, ys, lo, hi = [], [], [], []
        for i, g in enumerate(groups):
            r = ser[g].get(impl)
            if not r:
                continue
            gib = r["gib_per_s"]
            xs.append(i + (j - (len(impls) - 1) / 2) * width)
            ys.append(gib)
            # p10/p90 of time -> a range of speeds
            hi.append(r["bytes"] / r["p10_ns"] * 1e9 / 2**30 - gib if r.get("p10_ns") else 0)
            lo.append(gib - r["bytes"] / r["p90_ns"] * 1e9 / 2**30 if r.get("p90_ns") else 0)
        color = CPPLESS if impl == "cppless" else cmap(j)
        ax.bar(xs, ys, width, label=label, color=color, alpha=0.85)
        ax.errorbar(xs, ys, yerr=[lo, hi], fmt="none", color="black", capsize=2, linewidth=0.8)
    ax.axhline(1, color="gray", linestyle="--", linewidth=0.8)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{c}\n{op}" for c, op in groups])
    ax.set_yscale("log")
    ax.set_ylabel("GiB/s of own payload (log scale; p10–p90)")
    ax.set_title("Serialization: 1M uint32_t and 100k {int, int, string(42)}\n" + subtitle(meta), fontsize=10)
    ax.legend(fontsize=8, ncol=len(impls), loc="upper center", bbox_to_anchor=(0.5, -0.14))
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True


def plot_cost(cost, meta, path):
    """pi's time and its price on Lambda (model applied to local traces) against the number of functions."""
    if isinstance(cost, report.Unavailable):
        return False
    fig, (ax_t, ax_c) = plt.subplots(1, 2, figsize=(11, 4))
    memories = sorted({m for m, _ in cost["points"]})
    for i, memory in enumerate(memories):
        pts = [(n, d) for (m, n), d in cost["points"].items() if m == memory]
        ns = [n for n, _ in pts]
        colour = plt.get_cmap("tab10")(i)
        ax_t.errorbar(ns, [d["seconds"].median for _, d in pts],
                      yerr=[[d["seconds"].median - d["seconds"].lo for _, d in pts],
                            [d["seconds"].hi - d["seconds"].median for _, d in pts]],
                      marker="o", color=colour, label=f"{memory} MB", capsize=2)
        ax_c.plot(ns, [d["usd_x86"].median * 1e6 for _, d in pts], marker="o", color=colour, label=f"{memory} MB, x86_64")
        ax_c.plot(ns, [d["usd_arm"].median * 1e6 for _, d in pts], marker="s", linestyle="--", color=colour,
                  label=f"{memory} MB, arm64")
    for ax in (ax_t, ax_c):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("number of functions")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    ax_t.set_ylabel("seconds (local workers)")
    ax_t.set_ylim(bottom=0)
    ax_c.set_ylim(bottom=0)
    ax_c.set_ylabel("µUSD on AWS Lambda (price model)")
    ax_t.set_title(f"pi, {cost['samples']:,} samples: time")
    ax_c.set_title("cost: Lambda price model applied to the local run's traces")
    fig.suptitle("Cost and parallelism (TACO's figure) — a local run, priced with Lambda's list prices, not "
                 "measured on AWS\n" + subtitle(meta), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main():
    results = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")
    img = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "docs", "img")
    os.makedirs(img, exist_ok=True)
    records, meta = report.load(results)
    written = []
    plot_latency(report.latency_figures(records), meta, os.path.join(img, "latency.png"))
    written.append("latency.png")
    plot_throughput(report.throughput_figures(records), meta, os.path.join(img, "throughput.png"))
    written.append("throughput.png")
    plot_cold(report.cold_figures(records), meta, os.path.join(img, "cold_start.png"))
    written.append("cold_start.png")
    apps, cores = report.app_figures(records)
    for (app, size), modes in apps.items():
        name = f"apps_{app}.png" if app == "pi" else f"apps_{app}_{size}.png"
        if plot_app(app, size, modes, cores, meta, os.path.join(img, name)):
            written.append(name)
    if plot_serialization(report.serialization_figures(records), meta, os.path.join(img, "serialization.png")):
        written.append("serialization.png")
    if plot_cost(report.cost_figures(records), meta, os.path.join(img, "cost_parallelism.png")):
        written.append("cost_parallelism.png")
    print("plot: wrote " + ", ".join(os.path.join(img, w) for w in written), file=sys.stderr)


if __name__ == "__main__":
    main()
