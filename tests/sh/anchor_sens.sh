#!/bin/sh
# Sensitivities of the anchor lift's hoist-force objectives (docs/sensitivity.md,
# "Coordinate forces"; docs/benchmarks.md, "Anchor lift", "Sensitivities") on a
# short anchor-like chain: scripts/gen_anchor_lift.py --links 4 (11 bodies, the
# shipped model's end fittings, anchor, contacts, hoist law and parameters), 10 ms
# of the lift (200 steps) with ALI3-P. MBS_ANCHOR_LINKS=57 MBS_ANCHOR_TF=0.005
# runs the same checks on the shipped model (docs/benchmarks.md: minutes).
#  - the generator is deterministic (two runs, the same bytes);
#  - the hoist-force output of simulate and the objective hoist_force2 are the
#    same quantity: its trapezoidal quadrature over the rows of every step
#    equals psi within the noise of the two runs (below);
#  - DAVM = DDM (the same discrete derivative: round-off, 1e-10 of each
#    objective's largest entry, the bound of the closed-loop tests,
#    docs/sensitivity.md);
#  - DDM with K_hull in other units (a power of two): the same gradient bit for
#    bit, times the factor (below);
#  - DAVM = central differences of whole runs within a bound the test derives:
#    the differences at the relative steps h and 2h give the truncation
#    (O(h^2): D(2h) - D(h) = 3 T(h) + noise), and a run at a tiny step gives
#    the noise of psi (the solver's iteration, eps_psi: D(h0) - D(h) = eps/h0).
SUITE=anchor_sens
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
SRC=$MBS_SOURCE_DIR
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

N=${MBS_ANCHOR_LINKS:-4}
TF=${MBS_ANCHOR_TF:-0.01}
M=$TMP/anchor.json
"$PY" "$SRC/scripts/gen_anchor_lift.py" --links "$N" -o "$M" && "$PY" "$SRC/scripts/gen_anchor_lift.py" --links "$N" \
    -o "$TMP/again.json" && cmp -s "$M" "$TMP/again.json" &&
    ok "gen_anchor_lift.py --links $N: deterministic" || ko "gen_anchor_lift.py --links $N"

# --no-project: the sensitivity methods' runs (docs/sensitivity.md, "Euler parameters")
run simulate "$M" --formulation ali3p --tf "$TF" --output-dt 5e-5 --no-project -q -o "$TMP/s.csv"
expect 0 "simulate with the hoist-force output"

for m in ddm davm; do
    run sensitivity "$M" --formulation ali3p --tf "$TF" --method $m --json -q
    expect 0 "$m, tf $TF"
    cp "$OUT" "$TMP/$m.json"
done
# units: K_hull in units of 2^-34 x 1e10 N/m^1.5 (about N/m^1.5; value 2^34 times larger, scales
# 2^-34 times): the same model vector, and the DDM's gradient of K_hull 2^-34 times the one above BIT
# FOR BIT (a power of two scales every operation of its column exactly: tolerance zero;
# tests/test_sensitivity_scale.c), the other entries and psi unchanged
"$PY" - "$M" "$TMP/units.json" <<'PYEOF'
import json, sys
m = json.load(open(sys.argv[1]))
for p in m["parameters"]:
    if p["name"] == "K_hull":
        for k in ("value", "lower", "upper"):
            p[k] *= 2.0 ** 34
        for t in p["sets"]:
            t["scale"] *= 2.0 ** -34
json.dump(m, open(sys.argv[2], "w"))
PYEOF
run sensitivity "$TMP/units.json" --formulation ali3p --tf "$TF" --method ddm --json -q
expect 0 "ddm, K_hull in units of 2^-34 x 1e10 N/m^1.5"
cp "$OUT" "$TMP/ddm_units.json"
"$PY" - "$TMP" <<'PYEOF' && ok "ddm: K_hull's units change its gradient by their factor exactly, nothing else" \
    || ko "ddm: the gradient depends on K_hull's units"
import json, sys
a, b = (json.load(open("%s/%s.json" % (sys.argv[1], n))) for n in ("ddm", "ddm_units"))
j = a["parameters"].index("K_hull")
bad = a["psi"] != b["psi"]
for i, name in enumerate(a["objectives"]):
    for k, (x, y) in enumerate(zip(a["gradient"][i], b["gradient"][i])):
        if x != (y * 2.0 ** 34 if k == j else y):
            print("  %s %s: %.17g, in the new units %.17g x 2^34" % (name, a["parameters"][k], x, y * 2.0 ** 34))
            bad = True
    print("%s: dpsi/dK_hull %.15g per 1e10 N/m^1.5, %.15g per 2^-34 of it" % (name, a["gradient"][i][j],
                                                                            b["gradient"][i][j]))
sys.exit(bad)
PYEOF

# h = 2e-4: where truncation and noise are of one size on this model (1e-4 .. 1e-3
# measured, docs/benchmarks.md); h0 = 1e-6: noise alone
for h in 2e-4 4e-4 1e-6; do
    run sensitivity "$M" --formulation ali3p --tf "$TF" --method fd --fd-step $h --json -q
    expect 0 "fd --fd-step $h"
    cp "$OUT" "$TMP/fd$h.json"
done
"$PY" - "$TMP" "$M" <<'PYEOF' && ok "DAVM = DDM; DAVM = central differences within the derived bound; output = objective" || ko "gradients"
import csv, json, sys
d = sys.argv[1]
L = lambda n: json.load(open("%s/%s.json" % (d, n)))
ddm, davm, f1, f2, f0 = L("ddm"), L("davm"), L("fd2e-4"), L("fd4e-4"), L("fd1e-6")
h1, h2, h0 = 2e-4, 4e-4, 1e-6
bad = 0
for i, name in enumerate(davm["objectives"]):
    A, D = davm["gradient"][i], ddm["gradient"][i]
    F1, F2, F0 = f1["gradient"][i], f2["gradient"][i], f0["gradient"][i]
    scale = max(abs(v) for v in A)
    np_ = len(A)
    # the parameters' values: the fd step of parameter j is h max(1, |rho_j|) (docs/sensitivity.md)
    rho = [p["value"] for p in json.load(open(sys.argv[2]))["parameters"]]
    hj = lambda h, j: h * max(1.0, abs(rho[j]))
    # noise of psi: the largest of the tiny-step samples, doubled (a sample of 13)
    eps = 2 * max(hj(h0, j) * abs(F0[j] - F1[j]) for j in range(np_))
    worst_ad, worst_fd = 0, 0
    for j in range(np_):
        if abs(A[j] - D[j]) > 1e-10 * scale:
            print("  %s %s: davm %.12e ddm %.12e" % (name, davm["parameters"][j], A[j], D[j]))
            bad = 1
        worst_ad = max(worst_ad, abs(A[j] - D[j]) / scale)
        N1, N2 = eps / hj(h1, j), eps / hj(h2, j)
        T1 = (abs(F2[j] - F1[j]) + N1 + N2) / 3
        bound = T1 + N1
        err = abs(A[j] - F1[j])
        worst_fd = max(worst_fd, err / bound)
        if err > bound:
            print("  %s %s: davm %.12e fd %.12e, |diff| %.3e > bound %.3e (truncation %.3e, noise %.3e)"
                  % (name, davm["parameters"][j], A[j], F1[j], err, bound, T1, N1))
            bad = 1
    print("%s: psi %.10g, |davm - ddm| <= %.2e of the largest entry; eps_psi %.2e (%.1e of psi); "
          "|davm - fd| <= %.2f of the bound" % (name, davm["psi"][i], worst_ad, eps, eps / davm["psi"][i], worst_fd))
    if i == 0:
        # simulate's run iterates to its own convergence: its psi differs from the
        # sensitivity runs' by their noise, eps for each of the two runs
        rows = list(csv.DictReader(open(d + "/s.csv")))
        g = [1e-6 * sum(float(r["hoist.%s.force" % c]) ** 2 for c in "xyz") for r in rows]
        t = [float(r["t"]) for r in rows]
        q = sum(0.5 * (t[k + 1] - t[k]) * (g[k] + g[k + 1]) for k in range(len(t) - 1))
        print("hoist-force output: %d rows, quadrature %.15g, psi %.15g, |diff| %.2e, bound 2 eps %.2e"
              % (len(rows), q, davm["psi"][0], abs(q - davm["psi"][0]), 2 * eps))
        bad |= not abs(q - davm["psi"][0]) <= 2 * eps
sys.exit(bad)
PYEOF

# bad input: the member and what is wrong
"$PY" - "$M" "$TMP" <<'PYEOF'
import json, sys
m = json.load(open(sys.argv[1]))
m["outputs"][3]["coordinate"][1] = "hoist.w"
json.dump(m, open(sys.argv[2] + "/bad_out.json", "w"))
m = json.load(open(sys.argv[1]))
m["objectives"][1]["integral"][0]["power"] = 1
json.dump(m, open(sys.argv[2] + "/bad_pow.json", "w"))
m = json.load(open(sys.argv[1]))
m["objectives"][0]["integral"][0]["quantity"] = "torque"
json.dump(m, open(sys.argv[2] + "/bad_qty.json", "w"))
PYEOF
run info "$TMP/bad_out.json"
expect 1 "an unknown coordinate of a force output"
stderr_has 'outputs\[3\]\.coordinate\[1\]: unknown coordinate "hoist.w"' "its message names the member"
run info "$TMP/bad_pow.json"
expect 1 "a power below 2"
stderr_has 'objectives\[1\]\.integral\[0\]\.power: expected a number >= 2' "its message names the member"
run info "$TMP/bad_qty.json"
expect 1 "an unknown coordinate quantity"
stderr_has 'unknown quantity "torque" for a coordinate \(value, velocity, acceleration, force\)' "its message lists the quantities"

run sensitivity "$M" --formulation ali3p --tf 0.002 --method cs
expect 1 "cs refuses objectives that read coordinate forces"
stderr_has "coordinate force" "cs: the message says why"
finish
