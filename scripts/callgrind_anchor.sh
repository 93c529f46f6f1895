#!/bin/sh
# Instructions per step of the anchor lift (models/anchor_lift.json) with
# the formulations of thesis Table 7.29, and per fully recursive
# forward-dynamics call, from valgrind callgrind (instruction counts are
# stable on a shared machine, timings are not):
#
#   sh scripts/callgrind_anchor.sh BUILD [STEPS]
#
# Each figure is the difference of two runs of bench/bench_anchor, with
# STEPS and 2 STEPS steps (default 100) or calls, divided by the
# difference: loading, assembly and the start of the run cancel. The runs
# start from the model's initial state (the chain at rest on the hull), so
# the steps are those of the first 0.005 s (0.01 s) of the lift.
# docs/benchmarks.md, "Anchor lift", has the figures.
set -eu
BUILD=${1:?usage: callgrind_anchor.sh BUILD [STEPS]}
N=${2:-100}
SRC=$(cd "$(dirname "$0")/.." && pwd)
M=$SRC/models/anchor_lift.json
B=$BUILD/bench/bench_anchor
export OPENBLAS_NUM_THREADS=1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# the same model without its force elements: the forward dynamics alone
/usr/bin/python3 - "$M" "$TMP/noforce.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m.pop("forces")
m["parameters"] = [p for p in m["parameters"] if p["name"] not in ("K_hull", "mu_hull")]
json.dump(m, open(sys.argv[2], "w"))
PY

ir() {
    valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" "$@" >/dev/null 2>"$TMP/cg.err" ||
        { cat "$TMP/cg.err" >&2; exit 1; }
    sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$TMP/cg.out"
}
# per NAME N ARGS-with-N ARGS-with-2N
per() {
    a=$(ir $3)
    b=$(ir $4)
    echo "$1 $(( (b - a) / $2 ))"
}

for ref in com origin; do
    per "fr_index1_$ref" "$N" "$B sim $M index1 $ref $N" "$B sim $M index1 $ref $((2 * N))"
    per "semi_ali3p_$ref" "$N" "$B sim $M ali3p $ref $N" "$B sim $M ali3p $ref $((2 * N))"
done
K=$((10 * N))
per "fd_contacts_com" "$K" "$B fd $M com $N $K" "$B fd $M com $N $((2 * K))"
per "fd_alone_com" "$K" "$B fd $TMP/noforce.json com 0 $K" "$B fd $TMP/noforce.json com 0 $((2 * K))"
