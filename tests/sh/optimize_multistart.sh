#!/bin/sh
# Command-line test: `mbsens optimize --multistart N` (docs/cli.md,
# docs/scaling.md).
#
# The three-link arm with the lower bound of m3 moved below zero, so that
# some starts draw a negative mass: those starts fail with the model's
# message and the others finish; the report names the best start and the
# outcome of every start (text and --json, --out FILE the same JSON). The
# report is the same bytes on 1 and 3 threads and under mpirun -np 2
# (--oversubscribe; skipped where mpirun or the MPI part of mbsens is
# missing). Every start failing exits 1; bad options exit 2; a free
# parameter without finite bounds exits 1 with its name.
#
# Environment (set by CTest): MBS_CLI, MBS_SOURCE_DIR, MBS_SANITIZE.
SUITE=optimize_multistart
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"

sed 's/"lower": 0.2, "upper": 3.0/"lower": -1.5, "upper": 3.0/' "$MBS_SOURCE_DIR/models/arm3.json" >"$TMP/arm.json"
grep -q '"lower": -1.5' "$TMP/arm.json" && ok "model edited" || ko "model edit"
ARGS="--multistart 6 --seed 7 --max-iter 2 --tf 0.2"

run optimize "$TMP/arm.json" $ARGS --threads 1
expect 0 "6 starts, 2 of them failing, on 1 thread"
cp "$OUT" "$TMP/t1.txt"
stdout_has "^multistart: 6 starts \(seed 7\) drawn uniformly within the bounds of 3 free parameters" "the header"
stdout_has "^start 1: FAILED: .*body link3: mass must be >= 0" "a failing start: its message"
stdout_has "^start 0: psi .* -> .*, \|g\| .*, 3 evaluations \(0 failed\), 2 iterations" "a finished start: psi, |g|, evaluations"
stdout_has "^    stop: the iteration limit \(--max-iter\) was reached \(max_iter\); NOT converged" "its stop reason in words"
stdout_has "^best: start [0-9]+, psi " "the best start"
[ "$(grep -c '^start [0-9]*: ' "$OUT")" -eq 6 ] && ok "every start reported" || ko "not every start reported"
[ "$(grep -c 'FAILED' "$OUT")" -eq 2 ] && ok "two failed, four finished" || ko "expected two failed starts"
stderr_has "2 of 6 starts failed" "the failures noted on stderr"

run optimize "$TMP/arm.json" $ARGS --threads 3
expect 0 "on 3 threads"
cmp -s "$OUT" "$TMP/t1.txt" && ok "3 threads: the 1-thread report, bit for bit" || ko "3 threads: the report differs"

run optimize "$TMP/arm.json" $ARGS --threads 1 --json --out "$TMP/ms.json"
expect 0 "--json and --out"
cp "$OUT" "$TMP/t1.json"
cmp -s "$OUT" "$TMP/ms.json" && ok "--out holds the --json report" || ko "--out differs from --json"
if command -v python3 >/dev/null 2>&1; then
    python3 - "$TMP/t1.json" <<'EOF' && ok "JSON: the best start, every start's outcome" || ko "JSON content"
import json, sys
r = json.load(open(sys.argv[1]))
runs = r["runs"]
assert r["starts"] == 6 and r["seed"] == 7 and len(runs) == 6
assert r["parameters"] == ["k", "l0", "m3"] and r["fixed"] == [False] * 3
okr = [x for x in runs if x["status"] == "ok"]
bad = [x for x in runs if x["status"] != "ok"]
assert len(okr) == 4 and len(bad) == 2 and all("mass must be >= 0" in x["status"] for x in bad)
for x in okr:
    assert x["stop_reason"] == "max_iter" and x["stop"].startswith("the iteration limit")
    assert x["evaluations"] == 3 and x["iterations"] == 2 and x["psi"] <= x["psi_initial"]
    assert all(lo <= v <= hi for v, lo, hi in zip(x["x0"], [10, 0.05, -1.5], [400, 0.6, 3.0]))
best = min(okr, key=lambda x: x["psi"])
assert r["best"] == best["start"]
EOF
fi

run optimize "$TMP/arm.json" $ARGS --threads 1 --seed 8
cmp -s "$OUT" "$TMP/t1.txt" && ko "another seed: the same starts" || ok "another seed: other starts"

# under mpirun: rank 0 hands the starts out as `mbsens sweep` does
if command -v mpirun >/dev/null 2>&1; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    if [ "${MBS_SANITIZE:-OFF}" = ON ]; then
        export LSAN_OPTIONS="suppressions=$MBS_SOURCE_DIR/tests/sh/lib/openmpi.supp:print_suppressions=0"
        export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
    fi
    mpirun --oversubscribe --bind-to none -np 2 "$CLI" optimize "$TMP/arm.json" $ARGS --threads 1 --json \
        >"$OUT" 2>"$ERR"
    rc=$?
    if grep -q "built without MPI" "$ERR"; then
        echo "mbsens built without MPI: mpirun part skipped"
    else
        expect 0 "mpirun -np 2"
        cmp -s "$OUT" "$TMP/t1.json" && ok "mpirun -np 2: the serial JSON, bit for bit" \
            || ko "mpirun -np 2: the report differs"
        stderr_has "2 of 6 starts failed" "mpirun -np 2: the failures noted once"
        [ "$(grep -c 'starts failed' "$ERR")" -eq 1 ] && ok "... by rank 0 alone" || ko "... more than once"
    fi
else
    echo "mpirun not found: mpirun part skipped"
fi

# every start failing (a start with m3 >= 0 has the chance 1/1001; none of these three)
sed 's/"lower": 0.2, "upper": 3.0/"lower": -1000, "upper": 1.0/' "$MBS_SOURCE_DIR/models/arm3.json" >"$TMP/neg.json"
run optimize "$TMP/neg.json" --multistart 3 --max-iter 2 --tf 0.2 --threads 1
expect 1 "every start failing"
stderr_has "every start failed" "... says so"
# a free parameter without finite bounds
sed 's/"lower": 10, "upper": 400, //' "$MBS_SOURCE_DIR/models/arm3.json" >"$TMP/nob.json"
run optimize "$TMP/nob.json" --multistart 3 --max-iter 2 --tf 0.2
expect 1 "a free parameter without bounds"
stderr_has "parameter k has bounds \[-?inf, -?inf\]" "... named"
run optimize "$TMP/nob.json" --multistart 2 --max-iter 2 --tf 0.2 --fix k --threads 1
expect 0 "... held with --fix: its value in every start"
# options
for bad in "--multistart 0" "--multistart x" "--seed 3" "--json" "--multistart 2 --seed -1" \
           "--multistart 2 --plot $TMP/p.svg" "--multistart 2 --history $TMP/h.csv" "--threads -1"; do
    run optimize "$TMP/arm.json" $bad
    expect 2 "usage error: $bad"
done
finish
