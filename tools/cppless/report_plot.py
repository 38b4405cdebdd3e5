#!/usr/bin/env python3
"""Draws `cppless report --plot`: the timeline (a row per worker, a bar per call) above the cost
per function on Lambda (x86_64 and arm64), from the summary JSON that `cppless report` writes.

    report_plot.py summary.json out.png
"""
import json
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: report_plot.py SUMMARY_JSON OUT_PNG")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("report_plot.py: matplotlib is not installed for " + sys.executable)
    with open(sys.argv[1]) as f:
        s = json.load(f)
    calls = s["timeline"]
    rows = sorted({(c["pid"], c["worker"]) for c in calls})
    row_of = {r: i for i, r in enumerate(rows)}
    names = [f["function"] for f in s["functions"]]
    colours = {n: plt.get_cmap("tab10")(i % 10) for i, n in enumerate(names)}

    fig, (tl, cost) = plt.subplots(2, 1, figsize=(11, 3 + 0.25 * len(rows) + 0.3 * len(names)),
                                   gridspec_kw={"height_ratios": [max(2, len(rows) * 0.3), max(1.5, len(names) * 0.4)]})
    for c in calls:
        y = row_of[(c["pid"], c["worker"])]
        tl.plot([c["submitted_ms"], c["started_ms"]], [y, y], color="0.6", linewidth=0.8)
        tl.barh(y, max(c["executed_ms"] - c["started_ms"], 1e-3), left=c["started_ms"], height=0.7,
                color=colours.get(c["function"], "0.5"), edgecolor="black" if c["cold"] else "none",
                alpha=1.0 if c["ok"] else 0.4)
    tl.set_yticks(range(len(rows)))
    tl.set_yticklabels([f"pid {p} worker {w}" for p, w in rows], fontsize=7)
    tl.set_xlabel("ms since the first call was submitted")
    tl.set_title("Timeline: a bar per call (outlined: cold), grey: queued")
    tl.invert_yaxis()

    y = range(len(names))
    cost.barh([i - 0.2 for i in y], [f["lambda_x86_usd"] for f in s["functions"]], height=0.4, label="Lambda x86_64")
    cost.barh([i + 0.2 for i in y], [f["lambda_arm_usd"] for f in s["functions"]], height=0.4, label="Lambda arm64")
    cost.set_yticks(list(y))
    cost.set_yticklabels([n if len(n) < 50 else "..." + n[-47:] for n in names], fontsize=7)
    cost.set_xlabel(f"USD for this trace (price model, list prices as of {s['prices']['as_of']})")
    cost.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
