#!/bin/sh
# What a run does to the model's initial state is said, never silent
# (docs/cli.md, "Initial state"): a closed-loop model whose q0 is
# re-assembled and whose qd0 the velocity problem changes or zeroes gets a
# note on standard error and the figures in the summary and in --json; a
# model whose initial state is already consistent gets no note.
#
# Environment (set by CTest): MBS_CLI, MBS_SOURCE_DIR.
SUITE=initial_state
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
need_python
UNFIXED=$MBS_SOURCE_DIR/tests/models/fivebar_unfixed.json
FIVEBAR=$MBS_SOURCE_DIR/models/fivebar.json
PENDULUM=$MBS_SOURCE_DIR/models/double_pendulum.json

no_note() {
    if grep -q 'note:' "$ERR"; then ko "$1: unexpected note"; sed 's/^/    stderr: /' "$ERR" | head -n 5; else ok "$1: no note"; fi
}

# ---------------------------------------------------------------- simulate
run simulate "$UNFIXED" --tf 0.01 --out "$TMP/unfixed.csv"
expect 0 "simulate, q0 off the loops and qd0 without assembly.fixed"
stderr_has "^mbsens simulate: note: the model's q0 was assembled at t0 \(closed loops\): max \|q - q0\| = [0-9.e-]+ \(j1\)$" \
    "re-assembled q0 announced with the largest change"
stderr_has "^mbsens simulate: note: the model's qd0 was set to zero by the velocity problem \(max change 2, jA\)" \
    "zeroed qd0 announced"
stderr_has '"assembly": \{"fixed": \[\.\.\.\]\}' "the note says how to keep qd0"
stderr_has "^  initial state    assembled: max \|q - q0\| [0-9.e+-]+ \(j1\), max \|qd - qd0\| 2\.000e\+00 \(jA\), qd0 set to zero$" \
    "summary line"
# The announced change is the change of the first row of the trajectory.
run simulate "$UNFIXED" --tf 0.01 --format json -q
expect 0 "simulate --format json"
cp "$OUT" "$TMP/unfixed.json"
if python3 - "$TMP/unfixed.json" "$UNFIXED" >"$TMP/py.log" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
m = json.load(open(sys.argv[2]))
ini = r["initial_state"]
assert ini["assembled"] is True and ini["qd_zeroed"] is True, ini
q0 = [j["q0"][0] for j in m["joints"] if "q0" in j]
qd0 = [j.get("qd0", [0])[0] for j in m["joints"] if "q0" in j]
names = [j["name"] for j in m["joints"] if "q0" in j]
row = r["rows"][0]
cols = r["columns"]
q = [row[cols.index(n)] for n in names]
qd = [row[cols.index(n + ".qd")] for n in names]
dq = [abs(a - b) for a, b in zip(q, q0)]
dqd = [abs(a - b) for a, b in zip(qd, qd0)]
# the command evaluates the same calls as the run: equal to the last bit
assert ini["q_change"] == max(dq), (ini["q_change"], max(dq))
assert ini["q_change_at"] == names[dq.index(max(dq))]
assert ini["qd_change"] == max(dqd) == 2 and ini["qd_change_at"] == "jA", ini
assert all(v == 0 for v in qd), qd
PY
then ok "initial_state in JSON = the change of the first row"; else ko "initial_state in JSON"; sed 's/^/    /' "$TMP/py.log"; fi
stderr_has "note: the model's qd0 was set to zero" "-q keeps the notes"

run simulate "$FIVEBAR" --tf 0.01 --out "$TMP/fivebar.csv"
expect 0 "simulate fivebar (assembled q0, assembly.fixed)"
no_note "fivebar"
stderr_has "^  initial state    assembled: max \|q - q0\| [0-9.e+-]+ \(.*\), max \|qd - qd0\| 0\.000e\+00 \(-\)$" \
    "fivebar: qd0 unchanged"
run simulate "$PENDULUM" --tf 0.01 --out "$TMP/pendulum.csv"
expect 0 "simulate an open tree"
no_note "open tree"
if grep -q 'initial state' "$ERR"; then ko "open tree, nothing changed: no initial-state line"; else
    ok "open tree, nothing changed: no initial-state line"; fi

# index1 with the trapezoidal rule runs the fixed-point solver
run simulate "$FIVEBAR" --tf 0.01 --formulation index1 --solver newton --out "$TMP/i1.csv"
expect 0 "index1 --solver newton"
stderr_has "note: index1 with the trapezoidal rule uses the fixedpoint solver, not newton" "solver override announced"
run simulate "$FIVEBAR" --tf 0.01 --formulation index1 --out "$TMP/i1.csv"
expect 0 "index1, default solver"
no_note "index1 without --solver"

# ---------------------------------------------------------------- sensitivity, optimize
run sensitivity "$UNFIXED" --tf 0.01 --json
expect 0 "sensitivity --json"
stderr_has "^mbsens sensitivity: note: the model's qd0 was set to zero" "sensitivity: note"
cp "$OUT" "$TMP/sens.json"
if python3 -c "
import json, sys
r = json.load(open('$TMP/sens.json'))
i = r['initial_state']
assert i['assembled'] and i['qd_zeroed'] and i['q_change_at'] == 'j1' and i['qd_change'] == 2, i
" >"$TMP/py.log" 2>&1; then ok "sensitivity --json: initial_state"; else ko "sensitivity --json: initial_state"; cat "$TMP/py.log"; fi
run sensitivity "$FIVEBAR" --tf 0.01
expect 0 "sensitivity fivebar"
no_note "sensitivity fivebar"
run optimize "$UNFIXED" --tf 0.01 --max-iter 1 -q
expect 0 "optimize"
stderr_has "^mbsens optimize: note: the model's q0 was assembled" "optimize: note"
finish
