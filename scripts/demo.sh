#!/bin/sh
# The main job on shipped models (`make demo`): a guided run of the command
# line tool. Its final part is the five-bar sensitivity table of the thesis
# (Tables 7.4-7.6) by direct differentiation, the adjoints and finite
# differences side by side, and the same gradient from the Python package.
#
#   [PYTHON=/usr/bin/python3] sh scripts/demo.sh [BUILD_DIR]
set -eu
BUILD=${1:-build}
SRC=$(cd "$(dirname "$0")/.." && pwd)
MBS="$BUILD/mbsens"
[ -x "$MBS" ] || { echo "demo: $MBS not found; run 'make build' first" >&2; exit 1; }

step() { printf '\n==> %s\n    $ %s\n' "$1" "$2"; }

step "A model: the 43-DOF human of Zhakatayev et al. (D-H placement)" \
     "mbsens info models/human43.json"
"$MBS" info "$SRC/models/human43.json" | head -12

step "Inverse dynamics of the double pendulum at rest (holding torques)" \
     "mbsens inverse models/double_pendulum.json --q 0.5,0.5"
"$MBS" inverse "$SRC/models/double_pendulum.json" --q 0.5,0.5

step "Every analytical derivative against complex step, on the human model" \
     "mbsens check models/human43.json --samples 2"
"$MBS" check "$SRC/models/human43.json" --samples 2

step "A simulation (trapezoidal rule, 1 ms): the last rows" \
     "mbsens simulate models/double_pendulum.json --tf 2"
"$MBS" simulate "$SRC/models/double_pendulum.json" --tf 2 --quiet | tail -3 | cut -c1-110

OBJ="$SRC/tests/models/spring_tree.json"
printf '\nSensitivities of an open tree (a spatial tree with springs, 11 parameters, 5 objectives):\n'
printf 'direct differentiation, the discrete and continuous adjoints, and central differences.\n'
for meth in ddm davm cavm fd; do
    step "Spatial tree with springs, 0.5 s at 1 ms, method $meth" \
         "mbsens sensitivity tests/models/spring_tree.json --tf 0.5 --method $meth"
    "$MBS" sensitivity "$OBJ" --tf 0.5 --method $meth
done

FIVEBAR="$SRC/models/fivebar.json"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
step "The five-bar linkage (thesis 7.1): a closed loop, cut automatically" \
     "mbsens info models/fivebar.json"
"$MBS" info "$FIVEBAR" | sed -n '1,6p'

step "Five-bar sensitivities, 5 s at 1 ms: ALI3-P, reference point at the CoM, DDM" \
     "mbsens sensitivity models/fivebar.json --formulation ali3p --method ddm --tf 5"
"$MBS" sensitivity "$FIVEBAR" --formulation ali3p --method ddm --tf 5 > "$OUT/ddm_ali3p_com"
cat "$OUT/ddm_ali3p_com"

step "The same with Matrix R and the reference point at the global origin (RTdyn1)" \
     "mbsens sensitivity models/fivebar.json --formulation matrixr --ref origin --method ddm --tf 5"
"$MBS" sensitivity "$FIVEBAR" --formulation matrixr --ref origin --method ddm --tf 5 > "$OUT/ddm_matrixr_origin"
cat "$OUT/ddm_matrixr_origin"

step "The discrete adjoint (DAVM) of ALI3-P: the transpose of the DDM's recursion on the same step
      linearization (the same discrete gradient, backwards, all objectives at once)" \
     "mbsens sensitivity models/fivebar.json --formulation ali3p --ref origin --method davm --tf 5"
"$MBS" sensitivity "$FIVEBAR" --formulation ali3p --ref origin --method davm --tf 5 > "$OUT/davm_ali3p_origin"
cat "$OUT/davm_ali3p_origin"

step "Our own reference: central differences over 11 re-assembled simulations (ALI3-P; step 1e-4:
      the iterative solver converges to 1e-10, smaller steps amplify its noise)" \
     "mbsens sensitivity models/fivebar.json --formulation ali3p --method fd --fd-step 1e-4 --tf 5"
"$MBS" sensitivity "$FIVEBAR" --formulation ali3p --method fd --fd-step 1e-4 --tf 5 > "$OUT/fd_ali3p_com"
cat "$OUT/fd_ali3p_com"

step "The continuous adjoint (CAVM) of the same equations, ALI3-P forward run, 1 ms steps: the
      continuous gradient (the DDM's differ from it by the O(h^2) of the discretization)" \
     "mbsens sensitivity models/fivebar.json --formulation ali3p --method cavm --tf 5"
"$MBS" sensitivity "$FIVEBAR" --formulation ali3p --method cavm --tf 5 > "$OUT/cavm_ali3p_com"
cat "$OUT/cavm_ali3p_com"

step "CAVM with Matrix R and the reference point at the global origin" \
     "mbsens sensitivity models/fivebar.json --formulation matrixr --ref origin --method cavm --tf 5"
"$MBS" sensitivity "$FIVEBAR" --formulation matrixr --ref origin --method cavm --tf 5 > "$OUT/cavm_matrixr_origin"
cat "$OUT/cavm_matrixr_origin"


# The final table: every method side by side with the thesis (mr = Matrix R).
printf '\n==> The five-bar gradient side by side (5 s at 1 ms; mr = Matrix R) against thesis Tables 7.4-7.6\n\n'
awk '
BEGIN {
    split("-4.228 3.212 0.3186 0.4423 3.360", T1, " ");
    split("-15.45 50.32 0.9700 0.7454 -27.37", T2, " ");
    split("221.8 2437 -32.51 -85.70 -2547", T3, " ");
    for (j = 1; j <= 5; j++) { th["psi1", j] = T1[j]; th["psi2", j] = T2[j]; th["psi3", j] = T3[j]; }
    nm = 0;
}
FNR == 1 { m = FILENAME; sub(/.*\//, "", m); order[++nm] = m }
/^objective/ { for (j = 3; j <= NF; j++) pname[j - 2] = $j }
/^psi[123] / { for (j = 3; j <= 7; j++) g[m, $1, j - 2] = $j }
END {
    printf "%-13s %7s", "", "thesis";
    for (k = 1; k <= nm; k++) { h = order[k]; sub(/_/, " ", h); sub(/_/, "/", h); sub(/matrixr/, "mr", h); printf " %15s", h }
    printf " %9s\n", "max dev";
    for (o = 1; o <= 3; o++) for (j = 1; j <= 5; j++) {
        key = "psi" o; worst = 0;
        printf "%-13s %7s", "d" key "/d" pname[j], th[key, j];
        for (k = 1; k <= nm; k++) {
            v = g[order[k], key, j]; printf " %15.8g", v;
            d = (v - th[key, j]) / th[key, j]; if (d < 0) d = -d; if (d > worst) worst = d;
        }
        printf " %8.3f%%\n", 100 * worst;
    }
    printf "\nmax dev: the largest relative deviation of the methods from the thesis value (printed there\n";
    printf "with 4 digits, so about 0.05 %% is its own rounding); the methods agree with each other to\n";
    printf "the digits the discretization allows (ddm and davm: the same discrete gradient, to 8 digits;\n";
    printf "cavm: the continuous one, O(h^2) away; fd: step 1e-4, to its truncation and solver noise).\n";
}' "$OUT/ddm_ali3p_com" "$OUT/ddm_matrixr_origin" "$OUT/davm_ali3p_origin" "$OUT/cavm_ali3p_com" \
   "$OUT/cavm_matrixr_origin" "$OUT/fd_ali3p_com"

# The ship-anchor lift (thesis 7.5, docs/models.md): the first second of the
# 20 s lift, 20 000 steps of 0.05 ms with the fully recursive index-1
# formulation (a few seconds). The whole lift is the same command with
# --tf 20 (docs/benchmarks.md, "Anchor lift": about half a minute of CPU).
ANCHOR="$SRC/models/anchor_lift.json"
step "The ship-anchor lift (thesis 7.5): 64 bodies, 130 coordinates, 67 hull contacts with friction;
      the first second of the lift, fully recursive index-1, 0.05 ms steps" \
     "mbsens simulate models/anchor_lift.json --tf 1 --output-dt 0.1 -o anchor.csv"
"$MBS" simulate "$ANCHOR" --tf 1 --output-dt 0.1 -o "$OUT/anchor.csv"
awk -F, 'NR == 1 { for (k = 1; k <= NF; k++) c[$k] = k; printf "%6s %14s %16s %12s\n", "t", "hoist z (m)", "anchor crown z", "kinetic (J)"; next }
         { printf "%6.2f %14.6f %16.6f %12.4f\n", $1, $c["C01.top.z"], $c["anchor.crown.z"], $c["kinetic_energy"] }' "$OUT/anchor.csv"
printf '    (the whole 20 s lift, 400 000 steps: the same command with --tf 20)\n'

# The Python package (docs/python.md): the same five-bar gradient from numpy
# arrays, direct differentiation and the discrete adjoint of ALI3-P.
PY=${PYTHON:-/usr/bin/python3}
step "From Python (docs/python.md): the five-bar gradient with the mbsens package" \
     "PYTHONPATH=$BUILD/python $PY examples/python/fivebar_gradient.py"
PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}" "$PY" "$SRC/examples/python/fivebar_gradient.py"
