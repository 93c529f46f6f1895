#!/bin/sh
# Command-line test: `mbsens sweep` under mpirun (OpenMPI, loopback,
# --oversubscribe; docs/scaling.md).
#
# A five-bar grid with a failing case: mpirun -np 2 and -np 3 (one thread
# per rank, and chunks of 2 cases on 2 threads) give the serial run's CSV
# and JSON bytes; so do two cases on three ranks (more requests than
# chunks). A rank killed (SIGKILL) in the middle of the sweep under
# --enable-recovery: the sweep finishes with the serial tables and says the
# rank did not report back, with the chunks it held (its next one was
# already on its way: two, unless it was killed just as it reported).
# mpirun stopped by SIGTERM: no table, a checkpoint, and --resume under
# mpirun finishes with the serial tables (rows formatted by the ranks
# that computed them and, for the resumed cases, by rank 0).
# Skipped (77) where mpirun or the MPI part of mbsens is missing.
#
# Environment (set by CTest): MBS_CLI, MBS_SOURCE_DIR, MBS_SANITIZE.
SUITE=sweep_mpi
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"

command -v mpirun >/dev/null 2>&1 || { echo "mpirun not found: skipped"; exit 77; }
# root may run mpirun (this is a test machine; OpenMPI refuses it otherwise)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# OpenMPI's own start-up allocations stay until exit: not ours to free.
# They are matched by library name, which needs whole stacks (the fast
# unwinder stops at OpenMPI's frames, which keep no frame pointer).
if [ "${MBS_SANITIZE:-OFF}" = ON ]; then
    export LSAN_OPTIONS="suppressions=$MBS_SOURCE_DIR/tests/sh/lib/openmpi.supp:print_suppressions=0"
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
fi
MPIRUN="mpirun --oversubscribe --bind-to none"

FB=$MBS_SOURCE_DIR/models/fivebar.json
cat >"$TMP/grid.json" <<EOF
{ "model": "$FB",
  "grid": { "L_s1": { "from": 2.0, "to": 2.4, "count": 4 }, "m_A1": [0.9, 1.1, -1] },
  "compute": { "what": "sensitivity", "method": "davm", "tf": 0.05 } }
EOF
run sweep "$TMP/grid.json" --threads 1 --csv "$TMP/ref.csv" --json "$TMP/ref.json"
expect 0 "serial reference"

$MPIRUN -np 1 "$CLI" sweep "$TMP/grid.json" --csv "$TMP/np1.csv" >"$OUT" 2>"$ERR"
if grep -q "built without MPI" "$ERR"; then echo "mbsens built without MPI: skipped"; exit 77; fi

for np in 2 3; do
    $MPIRUN -np $np "$CLI" sweep "$TMP/grid.json" --threads 1 --csv "$TMP/np$np.csv" --json "$TMP/np$np.json" \
        --stats >"$OUT" 2>"$ERR"
    rc=$?
    expect 0 "mpirun -np $np"
    if cmp -s "$TMP/ref.csv" "$TMP/np$np.csv" && cmp -s "$TMP/ref.json" "$TMP/np$np.json"; then
        ok "mpirun -np $np: the serial CSV and JSON, bit for bit"
    else ko "mpirun -np $np: the table differs from the serial one"; fi
    stderr_has "12 cases on $np ranks x 1 threads" "mpirun -np $np: --stats"
    stderr_has "rank $((np - 1)): computing .* waiting for chunks" "mpirun -np $np: --stats, a worker's phases"
done
# every rank opens the sweep at once; a bad input is still reported once
printf '{ "model": "%s/missing.json", "grid": { "L_s1": [2.0] }, "compute": { "what": "none" } }\n' "$TMP" \
    >"$TMP/bad.json"
$MPIRUN -np 3 "$CLI" sweep "$TMP/bad.json" --csv "$TMP/bad.csv" >"$OUT" 2>"$ERR"
rc=$?
[ "$rc" -ne 0 ] && [ "$(grep -c 'missing.json: cannot read' "$ERR")" -eq 1 ] && [ ! -e "$TMP/bad.csv" ] \
    && ok "a missing model under mpirun -np 3: one message, no table" \
    || ko "a missing model under mpirun -np 3: rc $rc, $(grep -c 'missing.json' "$ERR") messages"
$MPIRUN -np 2 "$CLI" sweep "$TMP/grid.json" --threads 2 --chunk 2 --csv "$TMP/c2.csv" >"$OUT" 2>"$ERR"
rc=$?
expect 0 "mpirun -np 2, 2 threads per rank, chunks of 2"
cmp -s "$TMP/ref.csv" "$TMP/c2.csv" && ok "... the serial table" || ko "... the table differs"
$MPIRUN -np 3 "$CLI" sweep "$TMP/grid.json" --serve-only --csv "$TMP/so.csv" >"$OUT" 2>"$ERR"
rc=$?
expect 0 "mpirun -np 3 --serve-only"
cmp -s "$TMP/ref.csv" "$TMP/so.csv" && ok "... the serial table" || ko "... the table differs"

# fewer chunks than requests: every worker asks for two chunks at the start,
# so most requests get an empty answer, some at once; the ranks still stop
# and the table is the serial one
cat >"$TMP/two.json" <<EOF
{ "model": "$FB",
  "grid": { "L_s1": [2.1, 2.3] },
  "compute": { "what": "sensitivity", "method": "davm", "tf": 0.05 } }
EOF
run sweep "$TMP/two.json" --threads 1 --csv "$TMP/two.csv"
expect 0 "serial reference of a two-case sweep"
for extra in "" --serve-only; do
    $MPIRUN -np 3 "$CLI" sweep "$TMP/two.json" --threads 1 --chunk 1 $extra --csv "$TMP/two3.csv" >"$OUT" 2>"$ERR"
    rc=$?
    expect 0 "mpirun -np 3 ${extra:+$extra }on two cases"
    cmp -s "$TMP/two.csv" "$TMP/two3.csv" && ok "... the serial table" || ko "... the table differs"
done

# longer cases for the faults: 48 cases of about 0.1 s (mpirun takes about a second to
# stop its ranks after a SIGTERM)
cat >"$TMP/long.json" <<EOF
{ "model": "$FB",
  "grid": { "L_s1": { "from": 2.0, "to": 2.4, "count": 48 } },
  "compute": { "what": "sensitivity", "method": "davm", "tf": 1.5 } }
EOF
run sweep "$TMP/long.json" --csv "$TMP/long.csv" --json "$TMP/long.json.out"
expect 0 "serial reference of the long sweep"

# the pid of rank R among the children of mpirun $1
rank_pid() {
    for p in $(pgrep -P "$1"); do
        if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -q "^OMPI_COMM_WORLD_RANK=$2\$"; then
            echo "$p"
            return
        fi
    done
}
# wait until checkpoint $1 has at least $2 lines (at most 20 s)
wait_lines() {
    n=0
    while [ "$n" -lt 1000 ] && [ "$(cat "$1" 2>/dev/null | wc -l)" -lt "$2" ]; do sleep 0.02; n=$((n + 1)); done
}

$MPIRUN --enable-recovery -np 3 "$CLI" sweep "$TMP/long.json" --threads 1 --csv "$TMP/kill.csv" \
    --json "$TMP/kill.json" --checkpoint "$TMP/kill.ck" >"$OUT" 2>"$ERR" &
mp=$!
wait_lines "$TMP/kill.ck" 3
victim=$(rank_pid $mp 1)
[ -n "$victim" ] && kill -KILL "$victim"
wait $mp
rc=$?
expect 0 "a rank killed during the sweep (mpirun --enable-recovery)"
stderr_has "1 rank\\(s\\) did not report back \\(taken for dead; the [12] chunk\\(s\\) they held" "... is reported"
cmp -s "$TMP/long.csv" "$TMP/kill.csv" && cmp -s "$TMP/long.json.out" "$TMP/kill.json" \
    && ok "... and the tables are the serial ones" || ko "killed rank: a table differs"

$MPIRUN -np 2 "$CLI" sweep "$TMP/long.json" --threads 1 --csv "$TMP/term.csv" --json "$TMP/term.json" \
    --checkpoint "$TMP/term.ck" >"$OUT" 2>"$ERR" &
mp=$!
wait_lines "$TMP/term.ck" 2
kill -TERM $mp
wait $mp
lines=$(wc -l <"$TMP/term.ck")
if [ ! -e "$TMP/term.csv" ] && [ ! -e "$TMP/term.json" ] && [ "$lines" -ge 2 ] && [ "$lines" -lt 49 ]; then
    ok "mpirun stopped by SIGTERM: no table, $((lines - 1)) cases in the checkpoint"
else ko "SIGTERM under mpirun: table exists or checkpoint has $lines lines"; fi
# rank 0 writes the tables to temporary files as the cases come in: both removed
ls -a "$TMP" | grep -q '^\.term\.' && ko "SIGTERM under mpirun: a temporary table was left" \
    || ok "... and no temporary table left"
# the resumed cases' rows are formatted by rank 0, the others by the rank
# that computed them: the tables are still the serial bytes
$MPIRUN -np 2 "$CLI" sweep "$TMP/long.json" --threads 1 --csv "$TMP/term.csv" --json "$TMP/term.json" \
    --checkpoint "$TMP/term.ck" --resume >"$OUT" 2>"$ERR"
rc=$?
expect 0 "--resume under mpirun -np 2"
cmp -s "$TMP/long.csv" "$TMP/term.csv" && cmp -s "$TMP/long.json.out" "$TMP/term.json" \
    && ok "... gives the serial tables" || ko "resume under mpirun: a table differs"
finish
