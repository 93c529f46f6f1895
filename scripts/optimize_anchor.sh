#!/bin/sh
# The hoist-law optimization of the anchor lift (docs/benchmarks.md, "Anchor
# lift", "Hoist-law optimization"): minimize the peak hoist force, through
# its p-norm surrogate hoist_peak, over the knots of the hoist law, the lift
# reaching its height at the end of the lift (the last knot, s10, held).
#
#   scripts/optimize_anchor.sh [BUILD_DIR] [OUT_DIR] [MAX_ITER]
#
# BUILD_DIR (default build) holds the mbsens executable; OUT_DIR (default
# optimize-anchor) receives the reduced model, the optimizer's result (JSON),
# history (CSV), plot of psi (SVG) and optimized model, the runs of the two
# laws at the step and at half of it (CSV, one row per step), the summary
# (max |F|, the p-norm, psi, the hoist's travel at the end, the step check)
# and the figure anchor_hoist_force.svg (|F| and the hoist's travel, before
# and after). MAX_ITER: the optimizer's accepted iterations (default 30).
#
# The reduced problem (the environment may change it): MBS_ANCHOR_LINKS
# common links (4; the shipped model has 57), a lift of MBS_ANCHOR_LIFT
# seconds (2; scripts/gen_anchor_lift.py --lift: the shipped law compressed
# in time and distance, the same hauling speeds), steps of MBS_ANCHOR_DT
# (2e-4 s), the link contacts' stiffness K_hull times MBS_ANCHOR_HULL
# (0.01), the power of the peak surrogate hoist_peak MBS_ANCHOR_POWER (32;
# the shipped model's is 8). MBS_ANCHOR_LINKS=57 MBS_ANCHOR_LIFT=20
# MBS_ANCHOR_DT=5e-5 MBS_ANCHOR_HULL=1 MBS_ANCHOR_POWER=8 is the full-size
# problem (docs/benchmarks.md: its cost).
set -eu
B=${1:-build}
O=${2:-optimize-anchor}
ITER=${3:-30}
N=${MBS_ANCHOR_LINKS:-4}
T=${MBS_ANCHOR_LIFT:-2}
DT=${MBS_ANCHOR_DT:-2e-4}
HULL=${MBS_ANCHOR_HULL:-0.01}
P=${MBS_ANCHOR_POWER:-32}
SRC=$(cd "$(dirname "$0")/.." && pwd)
CLI=$B/mbsens
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
[ -x "$CLI" ] || { echo "no $CLI (build first: cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release && cmake --build $B)"; exit 1; }
mkdir -p "$O"
log() { echo "== $*"; }

log "reduced model: $N common links, a $T s lift, K_hull x $HULL, hoist_peak of power $P, steps of $DT s"
M=$O/anchor_reduced.json
"$PY" "$SRC/scripts/gen_anchor_lift.py" --links "$N" --lift "$T" -o "$O/anchor_generated.json"
"$PY" - "$O/anchor_generated.json" "$M" "$HULL" "$P" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
# hoist_peak = int (|F| / F_ref)^p dt: the power p, the weight F_ref^-p
term = [o for o in m["objectives"] if o["name"] == "hoist_peak"][0]["integral"][0]
F_ref = term["weight"] ** (-1.0 / term["power"])
term["power"] = float(sys.argv[4])
term["weight"] = F_ref ** -term["power"]
for p in m["parameters"]:
    if p["name"] == "K_hull":
        p["value"] *= float(sys.argv[3])
        if not p["lower"] <= p["value"] <= p["upper"]:
            sys.exit("K_hull %g outside its bounds [%g, %g]" % (p["value"], p["lower"], p["upper"]))
json.dump(m, open(sys.argv[2], "w"), indent=1)
EOF

# the knots s01 .. s09 free; s10 = s(T), the height reached at the end of the lift, held (with the
# clamped end the hoist arrives at rest); the link mass and the contact parameters held
# (a failure of a command piped into tee leaves the marker $O/failed: sh has no pipefail)
log "optimize: hoist_peak over s01..s09, at most $ITER iterations"
rm -f "$O/failed"
{ "$CLI" optimize "$M" --objective hoist_peak --free s01,s02,s03,s04,s05,s06,s07,s08,s09 --formulation ali3p \
    --dt "$DT" --tf "$T" --max-iter "$ITER" --out "$O/result.json" --history "$O/history.csv" \
    --plot "$O/hoist_peak.svg" --model-out "$O/anchor_optimized.json" || echo optimize >"$O/failed"; } \
    | tee "$O/optimize.log"
[ ! -e "$O/failed" ] || { echo "optimize failed"; exit 1; }

# the two laws at the step and at half of it, one row per step (--no-project: the optimizer's runs)
HALF=$("$PY" -c "import sys; print(float(sys.argv[1]) / 2)" "$DT")
for law in initial optimized; do
    model=$M
    [ $law = initial ] || model=$O/anchor_optimized.json
    log "simulate the $law law (steps of $DT and $HALF s)"
    "$CLI" simulate "$model" --formulation ali3p --dt "$DT" --tf "$T" --no-project -q -o "$O/$law.csv"
    "$CLI" simulate "$model" --formulation ali3p --dt "$HALF" --tf "$T" --output-dt "$DT" --no-project -q \
        -o "$O/${law}_half_step.csv"
done
{ "$PY" "$SRC/scripts/plot_hoist_force.py" "$O/initial.csv" "$O/optimized.csv" --power "$P" \
    --fine "$O/initial_half_step.csv" "$O/optimized_half_step.csv" \
    --svg "$O/anchor_hoist_force.svg" --json "$O/summary.json" || echo plot >"$O/failed"; } | tee "$O/summary.txt"
[ ! -e "$O/failed" ] || { echo "plot_hoist_force.py failed"; exit 1; }
