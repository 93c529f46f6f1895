#!/bin/sh
# Command-line test: `mbsens simulate --formulation` on closed loops
# (docs/cli.md, docs/formulations.md "Closed-loop formulations").
#
# A closed-loop model without a loop formulation is refused with a message
# naming the choices (exit 1, no file); ali3p, matrixr, penalty and index1
# run the five-bar, add the columns phi_norm, phid_norm, phidd_norm and agree
# on the final state; the summary reports the violations; an unknown
# formulation is a usage error (exit 2).
#
# Environment (set by CTest): MBS_CLI (the mbsens executable), MBS_SOURCE_DIR.
# Ends with "formulations: N passed, M failed"; non-zero exit on failure.
set -u

: "${MBS_CLI:?MBS_CLI not set}"
: "${MBS_SOURCE_DIR:?MBS_SOURCE_DIR not set}"
CLI=$MBS_CLI

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok: $*"; }
ko() { fail=$((fail + 1)); echo "FAILED: $*"; }
finish() {
    echo "formulations: $pass passed, $fail failed"
    [ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
    exit $?
}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/mbsens-form.XXXXXX") || { ko "mktemp"; finish; }
trap 'rm -rf "$TMP"' EXIT
FIVEBAR=$MBS_SOURCE_DIR/models/fivebar.json
command -v python3 >/dev/null 2>&1 || { ko "python3 is required"; finish; }

# refused without a loop formulation
"$CLI" simulate "$FIVEBAR" --tf 0.01 --out "$TMP/none.csv" >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "has closed loops" "$TMP/err" && grep -q -- "--formulation ali3p|matrixr|penalty|index1" "$TMP/err" &&
    [ ! -e "$TMP/none.csv" ]; then ok "closed loop without a loop formulation refused"
else ko "closed loop without a loop formulation: rc $rc: $(cat "$TMP/err")"; fi

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

finish
