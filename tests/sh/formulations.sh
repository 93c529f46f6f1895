#!/bin/sh
# Command-line test: `mbsens simulate --formulation` on closed loops
# (docs/cli.md, docs/formulations.md "Closed-loop formulations").
#
# A closed-loop model without a loop formulation is refused with a message
# naming the choices (exit 1, no file); the model file's "simulation"
# formulation is used, and --formulation overrides it; ali3p, matrixr, penalty and index1
# run the five-bar, add the columns phi_norm, phid_norm, phidd_norm and agree
# on the final state; the summary reports the violations; an unknown
# formulation is a usage error (exit 2). `mbsens sensitivity` (ddm) runs
# with ali3p and matrixr and refuses a closed-loop model without them.
#
# Environment (set by CTest): MBS_CLI (the mbsens executable), MBS_SOURCE_DIR.
# Ends with "formulations: N passed, M failed"; non-zero exit on failure.
SUITE=formulations
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
FIVEBAR=$MBS_SOURCE_DIR/models/fivebar.json
need_python

# the five-bar without its "simulation" section (which chooses ali3p): no loop formulation
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d.pop("simulation", None); json.dump(d, open(sys.argv[2], "w"))' \
    "$FIVEBAR" "$TMP/fivebar_noform.json" || ko "fivebar without a simulation section"
NOFORM=$TMP/fivebar_noform.json

# refused without a loop formulation
"$CLI" simulate "$NOFORM" --tf 0.01 --out "$TMP/none.csv" >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "has closed loops" "$TMP/err" && grep -q -- "--formulation ali3p|matrixr|penalty|index1" "$TMP/err" &&
    [ ! -e "$TMP/none.csv" ]; then ok "closed loop without a loop formulation refused"
else ko "closed loop without a loop formulation: rc $rc: $(cat "$TMP/err")"; fi

# the model file's formulation (models/fivebar.json: ali3p), and the command line overriding it
if "$CLI" simulate "$FIVEBAR" --tf 0.01 --out "$TMP/file.csv" 2>"$TMP/err" && grep -q "formulation ali3p" "$TMP/err"
then ok "the model file's formulation (ali3p)"; else ko "the model file's formulation: $(cat "$TMP/err")"; fi
if "$CLI" simulate "$FIVEBAR" --formulation matrixr --tf 0.01 --out "$TMP/cli.csv" 2>"$TMP/err" &&
    grep -q "formulation matrixr" "$TMP/err"
then ok "--formulation overrides the model file's"; else ko "--formulation matrixr over the file: $(cat "$TMP/err")"; fi
"$CLI" simulate "$FIVEBAR" --formulation fr --tf 0.01 --out "$TMP/fr.csv" >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "has closed loops" "$TMP/err"; then ok "--formulation fr overrides the file's ali3p (refused)"
else ko "--formulation fr over the file: rc $rc: $(cat "$TMP/err")"; fi

# an unknown formulation is a usage error
"$CLI" simulate "$FIVEBAR" --formulation bogus >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "bogus" "$TMP/err"; then ok "unknown formulation: usage error"
else ko "unknown formulation: rc $rc"; fi

for f in ali3p matrixr penalty index1; do
    if "$CLI" simulate "$FIVEBAR" --formulation $f --tf 0.2 --out "$TMP/$f.csv" 2>"$TMP/$f.err"; then
        ok "$f runs"
    else
        ko "$f: $(cat "$TMP/$f.err")"
    fi
    grep -q "constraints      max |Phi|" "$TMP/$f.err" && ok "$f: summary reports the violations" ||
        ko "$f: no violation line in the summary"
done
grep -q "projections      200 velocity, 200 acceleration" "$TMP/ali3p.err" && ok "ali3p: projections counted" ||
    ko "ali3p: projection count: $(grep projections "$TMP/ali3p.err")"

# columns, violations and agreement of the final states
if python3 - "$TMP" <<'PY'
import csv, sys
d = sys.argv[1]
ref = None
for f in ["ali3p", "matrixr", "penalty", "index1"]:
    rows = list(csv.reader(open(f"{d}/{f}.csv")))
    head = rows[0]
    assert head[-3:] == ["phi_norm", "phid_norm", "phidd_norm"], head
    assert len(rows) == 202, (f, len(rows))
    last = [float(x) for x in rows[-1]]
    assert abs(last[0] - 0.2) < 1e-12
    tol = {"ali3p": (1e-10, 1e-10), "matrixr": (1e-12, 1e-12)}.get(f, (1e-6, 1e-5))
    for r in rows[1:]:
        assert float(r[-3]) <= tol[0] and float(r[-2]) <= tol[1], (f, r[-3:])
    q = last[1:5]
    if ref is None:
        ref = q
    else:
        # second-order schemes of the same DAE: O(h^2) apart (docs/formulations.md)
        assert max(abs(a - b) for a, b in zip(q, ref)) < 1e-7, (f, q, ref)
PY
then ok "columns, violations and final states"; else ko "columns, violations and final states"; fi

# sensitivities of the closed-loop formulations (docs/cli.md: mbsens sensitivity): ddm with ali3p
# and matrixr prints the objectives x parameters table; without a closed-loop formulation, or
# with one that has no ddm, a clear error
for f in ali3p matrixr; do
    if "$CLI" sensitivity "$FIVEBAR" --formulation $f --tf 0.05 --json >"$TMP/s_$f.json" 2>"$TMP/s_$f.err" &&
        python3 - "$TMP/s_$f.json" $f <<'PY'
import json, math, sys
r = json.load(open(sys.argv[1]))
assert r["formulation"] == sys.argv[2] and r["method"] == "ddm", r
assert r["objectives"] == ["psi1", "psi2", "psi3"], r["objectives"]
assert r["parameters"] == ["L_s1", "L_s2", "m_A1", "rG", "L_A1"], r["parameters"]
g = r["gradient"]
assert len(g) == 3 and all(len(row) == 5 for row in g), g
assert all(math.isfinite(x) for row in g for x in row) and all(math.isfinite(x) for x in r["psi"])
# the crank length L_A1 moves the assembly: a clearly non-zero entry (test_sensitivity_loops.c checks values)
assert abs(g[2][4]) > 1, g
PY
    then ok "sensitivity ddm $f"; else ko "sensitivity ddm $f: $(cat "$TMP/s_$f.err")"; fi
done
# the continuous adjoint of both closed-loop formulations (test_sensitivity_cavm_loops.c checks values):
# the same table shape, and the same gradient for both (one continuous gradient)
for f in ali3p matrixr; do
    if "$CLI" sensitivity "$FIVEBAR" --formulation $f --method cavm --tf 0.05 --json >"$TMP/c_$f.json" \
        2>"$TMP/c_$f.err" && python3 - "$TMP/c_$f.json" $f "$TMP/s_$f.json" <<'PY'
import json, math, sys
r = json.load(open(sys.argv[1]))
d = json.load(open(sys.argv[3]))
assert r["formulation"] == sys.argv[2] and r["method"] == "cavm", r
assert r["parameters"] == ["L_s1", "L_s2", "m_A1", "rG", "L_A1"], r["parameters"]
g = r["gradient"]
assert len(g) == 3 and all(len(row) == 5 for row in g), g
assert all(math.isfinite(x) for row in g for x in row)
# psi by the formulation's quadrature: the ddm's; the gradient within the O(h^2) of the ddm's
assert max(abs(a - b) for a, b in zip(r["psi"], d["psi"])) < 1e-12 * max(map(abs, d["psi"])), (r["psi"], d["psi"])
for a, b in zip(g, d["gradient"]):
    assert max(abs(x - y) for x, y in zip(a, b)) < 1e-3 * max(map(abs, b)), (a, b)
PY
    then ok "sensitivity cavm $f"; else ko "sensitivity cavm $f: $(cat "$TMP/c_$f.err")"; fi
done
"$CLI" sensitivity "$NOFORM" --tf 0.05 >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "closed loops: choose a closed-loop formulation" "$TMP/err" &&
    grep -q -- "--formulation ali3p|matrixr" "$TMP/err"; then ok "sensitivity without a loop formulation refused"
else ko "sensitivity without a loop formulation: rc $rc: $(cat "$TMP/err")"; fi

finish
