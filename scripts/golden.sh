#!/bin/sh
# Golden results of a build, for a bit-for-bit comparison of two commits:
#
#   sh scripts/golden.sh BUILD DIR [--no-tests]
#   (check out and build the other commit)
#   sh scripts/golden.sh BUILD DIR2 [--no-tests]
#   diff -r DIR DIR2          # must print nothing
#
# Three parts, each file one command's output:
#   cli/    the command line over every shipped model (models/*.json,
#           tests/models/*.json, tests/urdf/*.urdf): info --json, convert
#           (JSON and MJCF), kinematics --json, inverse --json, check,
#           simulate --format json for every integrator and formulation
#           with its statistics (short horizons; those that do not apply
#           record their message),
#           sensitivity --json for every method and formulation, optimize
#           --max-iter 3 --out. The command line prints shortest round-trip
#           or %.17g numbers: equal text is equal bits. Each file ends with
#           the exit status.
#   dump    bench/golden_dump (every result of the core calls with %a, on
#           the shipped models and on seeded random trees and loops).
#   tests/  the standard output of every test program (skipped with
#           --no-tests), lines with timings removed.
# Lines that hold wall-clock times are removed everywhere (see `untimed`).
set -u
BUILD=$(cd "${1:?usage: golden.sh BUILD DIR [--no-tests]}" && pwd)
OUT=${2:?usage: golden.sh BUILD DIR [--no-tests]}
TESTS=${3:-}
SRC=$(cd "$(dirname "$0")/.." && pwd)
CLI=$BUILD/mbsens
export MBS_SOURCE_DIR="$SRC" OPENBLAS_NUM_THREADS=1
mkdir -p "$OUT/cli" "$OUT/tests"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# wall-clock figures vary from run to run
untimed() {
    sed -E -e '/wall|elapsed|[0-9.]+ ?(s|ms|us|ns)( |,|\)|\]|$)|per second|calls\/s/d' \
           -e "s|$TMP|TMP|g"
}

# run NAME CMD...: stdout and stderr of CMD into cli/NAME, then its status
run() {
    name=$1
    shift
    "$@" >"$TMP/o" 2>"$TMP/e"
    rc=$?
    { untimed <"$TMP/o"; echo "-- stderr"; untimed <"$TMP/e"; echo "-- exit $rc"; } >"$OUT/cli/$name"
    for of in "$TMP"/out.*; do
        [ -e "$of" ] || continue
        { echo "-- file ${of##*/}"; untimed <"$of"; } >>"$OUT/cli/$name"
        rm -f "$of"
    done
}

H="--tf 0.02 --dt 0.001"
for f in "$SRC"/models/*.json "$SRC"/tests/models/*.json "$SRC"/tests/urdf/*.urdf; do
    b=$(basename "$f")
    run "$b.info" "$CLI" info --json "$f"
    run "$b.convert" "$CLI" convert "$f"
    run "$b.mjcf" "$CLI" convert --to mjcf "$f"
    run "$b.kinematics" "$CLI" kinematics --json "$f"
    run "$b.inverse" "$CLI" inverse --json "$f"
    run "$b.check" "$CLI" check "$f"
    for i in trapezoidal rk4 cvodes; do
        for fm in fr semi ali3p matrixr penalty index1; do
            run "$b.sim.$i.$fm" "$CLI" simulate "$f" --integrator "$i" --formulation "$fm" $H --format json \
                --out "$TMP/out.json"
        done
    done
    case $b in *.urdf) continue ;; esac
    grep -q '"objectives"' "$f" || continue
    for me in ddm davm cavm fd cs; do
        for fm in semi fr ali3p matrixr; do
            run "$b.sens.$me.$fm" "$CLI" sensitivity "$f" --method "$me" --formulation "$fm" $H --json
        done
    done
    run "$b.optimize" "$CLI" optimize "$f" --max-iter 3 --tf 0.05 --quiet --out "$TMP/out.json" \
        --model-out "$TMP/out.model.json" --history "$TMP/out.history.csv"
done

"$BUILD/bench/golden_dump" "$SRC"/models/*.json "$SRC"/tests/models/*.json "$SRC"/tests/urdf/small_robot.urdf \
    >"$OUT/dump" 2>&1
echo "-- exit $?" >>"$OUT/dump"

if [ "$TESTS" != "--no-tests" ]; then
    for t in "$BUILD"/tests/test_*; do
        [ -x "$t" ] || continue
        n=$(basename "$t")
        (cd "$TMP" && MBS_CLI="$CLI" "$t" 2>/dev/null | untimed >"$OUT/tests/$n"; echo "-- exit $?" >>"$OUT/tests/$n")
    done
fi
echo "golden: $OUT ($(find "$OUT" -type f | wc -l) files)"
