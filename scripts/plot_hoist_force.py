#!/usr/bin/env python3
"""The hoist force of an anchor lift before and after an optimization of its hoist law
(scripts/optimize_anchor.sh; docs/benchmarks.md, "Hoist-law optimization").

    /usr/bin/python3 scripts/plot_hoist_force.py BEFORE.csv AFTER.csv --svg FIG.svg [--json SUMMARY.json]
                     [--fine BEFORE_FINE.csv AFTER_FINE.csv] [--F-ref 1e4] [--power 8]

BEFORE.csv, AFTER.csv: `mbsens simulate` runs of the two laws with the columns
hoist.{x,y,z}.force (N) and C01.top.{x,z} (the hoist point), one row per step.
Prints, for each run: max |F| and when, the p-norm ||F||_p = (int |F|^p dt / T)^(1/p),
the surrogate psi = int (|F| / F_ref)^p dt (trapezoidal over the rows, as the
objective hoist_peak) and the hoist point's travel up the hull at the end, s(T).
--fine: the same laws at a finer step; prints the differences (the step check).
--svg: |F| against t and s(t), before and after (a hand-written SVG).
"""
import argparse
import csv
import json
import math
import os
import sys

UP = (-math.cos(math.radians(60.0)), math.sin(math.radians(60.0)))   # up the hull's steepest line (x, z)


def load(path):
    try:
        rows = list(csv.DictReader(open(path)))
        t = [float(r["t"]) for r in rows]
        F = [math.sqrt(sum(float(r["hoist.%s.force" % c]) ** 2 for c in "xyz")) for r in rows]
        s = [UP[0] * float(r["C01.top.x"]) + UP[1] * float(r["C01.top.z"]) for r in rows]
    except (OSError, KeyError, ValueError) as e:
        sys.exit("%s: %s (expected a simulate CSV with hoist.*.force and C01.top.* columns)" % (path, e))
    if len(t) < 2:
        sys.exit("%s: fewer than two rows" % path)
    return t, F, s


def figures(run, F_ref, p):
    t, F, s = run
    T = t[-1] - t[0]
    g = [(f / F_ref) ** p for f in F]
    psi = sum(0.5 * (t[k + 1] - t[k]) * (g[k] + g[k + 1]) for k in range(len(t) - 1))
    k = max(range(len(F)), key=F.__getitem__)
    return {"max_F": F[k], "t_max": t[k], "p_norm": F_ref * (psi / T) ** (1.0 / p), "psi": psi,
            "s_end": s[-1], "rows": len(t)}


def thin(xs, ys, n=1500):
    """At most about 2n points: the lowest and the highest of each of n buckets, in time order
    (the peaks stay; the figure stays small)."""
    if len(xs) <= 2 * n:
        return xs, ys
    k = -(-len(xs) // n)
    idx = []
    for b in range(0, len(xs), k):
        seg = range(b, min(b + k, len(xs)))
        idx += sorted({min(seg, key=ys.__getitem__), max(seg, key=ys.__getitem__)})
    return [xs[i] for i in idx], [ys[i] for i in idx]


def polyline(xs, ys, sx, sy, colour, dash=""):
    xs, ys = thin(xs, ys)
    pts = " ".join("%.1f,%.1f" % (sx(x), sy(y)) for x, y in zip(xs, ys))
    d = ' stroke-dasharray="%s"' % dash if dash else ""
    return '<polyline fill="none" stroke="%s" stroke-width="1.2"%s points="%s"/>' % (colour, d, pts)


def panel(x0, w, h, runs, label, unit, ticks_y):
    """One panel: the curves of runs (list of (t, y, colour, name)), axes, ticks."""
    top, left = 30, x0 + 60
    pw, ph = w - 80, h - 80
    tmax = max(r[0][-1] for r in runs)
    lo, hi = ticks_y[0], ticks_y[-1]
    sx = lambda t: left + pw * t / tmax
    sy = lambda y: top + ph * (1 - (y - lo) / (hi - lo))
    out = ['<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>' % (left, top, pw, ph)]
    for y in ticks_y:
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>' % (left, left + pw, sy(y), sy(y)))
        out.append('<text x="%d" y="%.1f" text-anchor="end" font-size="11">%g</text>' % (left - 4, sy(y) + 4, y))
    n = 4
    for i in range(n + 1):
        t = tmax * i / n
        out.append('<text x="%.1f" y="%d" text-anchor="middle" font-size="11">%g</text>' % (sx(t), top + ph + 15, round(t, 6)))
    out.append('<text x="%.1f" y="%d" text-anchor="middle" font-size="12">t (s)</text>' % (left + pw / 2, top + ph + 32))
    out.append('<text x="%d" y="%d" font-size="12">%s (%s)</text>' % (left, top - 10, label, unit))
    for t, y, colour, _ in runs:
        clip = [min(max(v, lo), hi) for v in y]
        out.append(polyline(t, clip, sx, sy, colour))
    return out, sx, sy


def svg(before, after, fb, fa, path):
    W, H = 900, 380
    kN = lambda F: [f / 1000 for f in F]
    Fb, Fa = kN(before[1]), kN(after[1])
    lo = math.floor(min(Fb + Fa) * 2) / 2
    hi = math.ceil(max(Fb + Fa) * 2) / 2
    ticks = [lo + 0.5 * k for k in range(int(round((hi - lo) / 0.5)) + 1)]
    blue, red = "#1f5fbf", "#c0392b"
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">' % (W, H),
           '<rect width="100%" height="100%" fill="white"/>']
    p, sx, sy = panel(0, 560, H, [(before[0], Fb, blue, "before"), (after[0], Fa, red, "after")],
                      "hoist force |F|", "kN", ticks)
    out += p
    for f, colour in ((fb, blue), (fa, red)):
        y = sy(f["max_F"] / 1000)
        out.append('<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="4,3"/>'
                   % (sx(0), sx(before[0][-1]), y, y, colour))
    out.append('<text x="300" y="%d" font-size="12" fill="%s">before: max %.3f kN at %.3f s</text>'
               % (70, blue, fb["max_F"] / 1000, fb["t_max"]))
    out.append('<text x="300" y="%d" font-size="12" fill="%s">after: max %.3f kN at %.3f s</text>'
               % (86, red, fa["max_F"] / 1000, fa["t_max"]))
    smax = max(before[2] + after[2])
    top = math.ceil(smax * 20) / 20
    sticks = [round(top * k / 4, 6) for k in range(5)]
    p, _, _ = panel(560, 340, H, [(before[0], before[2], blue, "before"), (after[0], after[2], red, "after")],
                        "hoist travel s", "m", sticks)
    out += p
    out.append("</svg>")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(out) + "\n")
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--fine", nargs=2, metavar=("BEFORE_FINE", "AFTER_FINE"))
    ap.add_argument("--svg")
    ap.add_argument("--json")
    ap.add_argument("--F-ref", type=float, default=1e4)
    ap.add_argument("--power", type=float, default=8)
    a = ap.parse_args()
    runs = {"before": load(a.before), "after": load(a.after)}
    res = {k: figures(v, a.F_ref, a.power) for k, v in runs.items()}
    for k in ("before", "after"):
        f = res[k]
        print("%-6s max |F| %.2f N at t = %.4f s, ||F||_%g %.2f N, psi %.10g, s(T) %.9f m, %d rows"
              % (k, f["max_F"], f["t_max"], a.power, f["p_norm"], f["psi"], f["s_end"], f["rows"]))
    print("max |F|: %.2f -> %.2f N (%.2f %%); ||F||_%g: %.2f -> %.2f N"
          % (res["before"]["max_F"], res["after"]["max_F"], 100 * (res["after"]["max_F"] / res["before"]["max_F"] - 1),
             a.power, res["before"]["p_norm"], res["after"]["p_norm"]))
    if a.fine:
        for k, path in zip(("before", "after"), a.fine):
            f = figures(load(path), a.F_ref, a.power)
            res[k + "_fine"] = f
            print("step check, %s: max |F| %.2f N at half the step (difference %.2f N), psi %.10g (relative "
                  "difference %.1e)" % (k, f["max_F"], res[k]["max_F"] - f["max_F"], f["psi"],
                                        res[k]["psi"] / f["psi"] - 1))
    if a.svg:
        svg(runs["before"], runs["after"], res["before"], res["after"], a.svg)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


main()
