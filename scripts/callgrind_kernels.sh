#!/bin/sh
# Instruction counts of the hot kernels (valgrind callgrind; stable on a
# shared machine, where timings are not), for the before/after comparison
# of a step that touches them:
#
#   sh scripts/callgrind_kernels.sh BUILD [N] > counts.txt
#
# Runs bench/bench_calls (N calls of each core public call, default 50) on
# a revolute chain of 30 links, a spherical chain of 12 on a floating base,
# human43 and the double pendulum, and a closed-loop simulation (five-bar,
# trapezoidal with ALI3-P and with Matrix R; the DDM of ALI3-P: the
# constraint tangents), and
# prints one line per run and function: the inclusive instructions (Ir)
# of that function over the whole run. Compare two builds with diff or
# side by side; a pure move gives the same numbers.
set -eu
BUILD=${1:?usage: callgrind_kernels.sh BUILD [N]}
N=${2:-50}
SRC=$(cd "$(dirname "$0")/.." && pwd)
export OPENBLAS_NUM_THREADS=1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
FUNCS='mbs_kinematics mbs_inverse_dynamics mbs_mass_matrix mbs_forward_dynamics
mbs_inverse_dynamics_derivatives mbs_forward_dynamics_derivatives mbs_kin_forward mbs_kin_forward_d_from
mbs_rnea mbs_rnea_jacobians mbs_crba mbs_aba mbs_abajf_forward_dynamics mbs_jac1_id_jacobians idl_front
mbs_con_kernel mbs_con_kernel_d mbs_form_tangent mbs_integrator_step'

"$BUILD/mbsens" generate chain --n 30 --joint revolute -o "$TMP/rev30.json"
"$BUILD/mbsens" generate chain --n 12 --joint spherical --floating -o "$TMP/sph12.json"

# count NAME CMD...: run CMD under callgrind, print the functions' inclusive Ir
count() {
    name=$1
    shift
    valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" "$@" >/dev/null 2>"$TMP/cg.err" ||
        { cat "$TMP/cg.err" >&2; exit 1; }
    callgrind_annotate --inclusive=yes --threshold=100 "$TMP/cg.out" 2>/dev/null >"$TMP/cg.txt"
    total=$(sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' "$TMP/cg.txt" | tr -d ,)
    printf '%-14s %-36s %14s\n' "$name" "(program total)" "$total"
    for f in $FUNCS; do
        ir=$(awk -v f="$f" '{ n = $NF; sub(/^.*:/, "", n); sub(/ .*$/, "", n) }
             $0 ~ ":" f " " || $0 ~ ":" f "$" { gsub(",", "", $1); print $1; exit }' "$TMP/cg.txt")
        if [ -n "$ir" ]; then printf '%-14s %-36s %14s\n' "$name" "$f" "$ir"; fi
    done
}

count rev30 "$BUILD/bench/bench_calls" "$TMP/rev30.json" "$N"
count sph12 "$BUILD/bench/bench_calls" "$TMP/sph12.json" "$N"
count human43 "$BUILD/bench/bench_calls" "$SRC/models/human43.json" "$N"
count dpend "$BUILD/bench/bench_calls" "$SRC/models/double_pendulum.json" "$N"
count fivebar_ali3p "$BUILD/mbsens" simulate "$SRC/models/fivebar.json" --formulation ali3p --tf 0.2 -q \
    --out "$TMP/o.csv"
count fivebar_mr "$BUILD/mbsens" simulate "$SRC/models/fivebar.json" --formulation matrixr --tf 0.2 -q \
    --out "$TMP/o.csv"
count fivebar_ddm "$BUILD/mbsens" sensitivity "$SRC/models/fivebar.json" --method ddm --formulation ali3p \
    --tf 0.05
