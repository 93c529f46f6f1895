#!/bin/sh
# The full optimization runs of docs/optimization.md (the tests use short
# horizons): suspension design, five-bar, bicycle sensitivity scaling and
# bicycle optimal control.
#
#   scripts/optimize_examples.sh [BUILD_DIR] [OUT_DIR] [PART...]
#
# BUILD_DIR (default build) holds the mbsens executable, OUT_DIR (default
# optimize-examples) receives the results (JSON, history CSV, SVG plots,
# optimized models, logs). PART: halfcar, fivebar, scaling, bicycle (default:
# all). Use a Release build: the bicycle parts take tens of minutes.
set -eu
B=${1:-build}
O=${2:-optimize-examples}
shift 2 2>/dev/null || shift $#
PARTS=${*:-halfcar fivebar scaling bicycle}
CLI=$B/mbsens
[ -x "$CLI" ] || { echo "no $CLI (build first: cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release && cmake --build $B)"; exit 1; }
mkdir -p "$O"
log() { echo "== $*"; }

for part in $PARTS; do
case $part in
halfcar)
    # thesis 7.3.4 substitute: four suspension parameters, bounds [10, 1e5], three algorithms
    for alg in lbfgs slsqp mma; do
        log "halfcar_step, $alg"
        "$CLI" optimize models/halfcar_step.json --objective ride --algorithm "$alg" --max-iter 100 \
            --pgtol 1e-9 --out "$O/halfcar_$alg.json" --history "$O/halfcar_$alg.csv" \
            --plot "$O/halfcar_$alg.svg" --plot-point chassis.seat.az --model-out "$O/halfcar_${alg}_opt.json" \
            | tee "$O/halfcar_$alg.log"
    done
    ;;
fivebar)
    # thesis 7.1 model, 5 s at 1 ms, ALI3-P direct differentiation; the spring free lengths
    for obj in psi1 psi2 psi3; do
        log "fivebar, $obj"
        "$CLI" optimize models/fivebar.json --objective "$obj" --free L_s1,L_s2 --formulation ali3p --tf 5 \
            --dt 0.001 --out "$O/fivebar_$obj.json" --history "$O/fivebar_$obj.csv" --plot "$O/fivebar_$obj.svg" \
            --plot-point b12.P2.y | tee "$O/fivebar_$obj.log"
    done
    ;;
scaling)
    # thesis Table 7.27 setup: constant torques (rear 2 N m, steering 0), 10 s, knots 16 .. 500 per spline
    printf "| parameters | ddm (s) | davm (s) | cavm (s) | max rel. diff. davm/cavm vs ddm |\n|---|---|---|---|---|\n" \
        >"$O/scaling.md"
    for n in 16 50 100 250 500; do
        python3 scripts/gen_bicycle.py --knots "$n" --single-objective -o "$O/bicycle_$n.json"
        for meth in ddm davm cavm; do
            log "bicycle scaling: $((2 * n)) parameters, $meth"
            "$CLI" sensitivity "$O/bicycle_$n.json" --method "$meth" --json >"$O/scaling_${n}_$meth.json"
        done
        python3 - "$O" "$n" >>"$O/scaling.md" <<'EOF'
import json, sys
o, n = sys.argv[1], sys.argv[2]
r = {m: json.load(open("%s/scaling_%s_%s.json" % (o, n, m))) for m in ("ddm", "davm", "cavm")}
g = r["ddm"]["gradient"][0]
s = max(abs(x) for x in g)
d = [max(abs(a - b) for a, b in zip(r[m]["gradient"][0], g)) / s for m in ("davm", "cavm")]
print("| %d | %.2f | %.2f | %.2f | %.1e / %.1e |" % (2 * int(n), r["ddm"]["wall_seconds"], r["davm"]["wall_seconds"],
      r["cavm"]["wall_seconds"], d[0], d[1]))
EOF
    done
    cat "$O/scaling.md"
    ;;
bicycle)
    # optimal control: track the lean and speed references from constant torques, horizon continuation
    log "bicycle optimal control"
    "$CLI" optimize models/bicycle.json --objective track --continuation --scaling none --max-iter 60 \
        --out "$O/bicycle_ocp.json" --history "$O/bicycle_ocp.csv" --plot "$O/bicycle_ocp.svg" --plot-coord lean \
        --plot-ref lean_ref \
        --model-out "$O/bicycle_opt.json" | tee "$O/bicycle_ocp.log"
    "$CLI" simulate models/bicycle.json --tangent analytic --dt 0.01 --out "$O/bicycle_initial_traj.csv" --quiet
    "$CLI" simulate "$O/bicycle_opt.json" --tangent analytic --dt 0.01 --out "$O/bicycle_opt_traj.csv" --quiet
    ;;
*) echo "unknown part '$part' (halfcar, fivebar, scaling, bicycle)"; exit 2 ;;
esac
done
