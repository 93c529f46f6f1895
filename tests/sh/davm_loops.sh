#!/bin/sh
# Command-line test: `mbsens sensitivity --formulation ali3p|matrixr --method
# davm` (the discrete adjoints of the closed-loop formulations;
# docs/sensitivity.md) on the five-bar: runs, reports method davm, the same
# psi as ddm and the same gradient to 1e-8 relative
# (test_sensitivity_davm_loops.c checks the values over 5 s); --formulation
# penalty --method davm is refused with a message naming the choices (exit 1).
#
# Environment (set by CTest): MBS_CLI, MBS_SOURCE_DIR.
# Ends with "davm_loops: N passed, M failed"; non-zero exit on failure.
SUITE=davm_loops
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
FIVEBAR=$MBS_SOURCE_DIR/models/fivebar.json
need_python

for f in ali3p matrixr; do
for meth in davm ddm; do
    if "$CLI" sensitivity "$FIVEBAR" --formulation $f --method $meth --tf 0.2 --json >"$TMP/$f$meth.json" \
        2>"$TMP/$meth.err"; then ok "sensitivity $f $meth runs"; else ko "sensitivity $f $meth: $(cat "$TMP/$meth.err")"; fi
done
if python3 - "$TMP/${f}davm.json" "$TMP/${f}ddm.json" $f <<'PY'
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert a["method"] == "davm" and b["method"] == "ddm", (a["method"], b["method"])
assert a["formulation"] == sys.argv[3], a["formulation"]
assert a["parameters"] == ["L_s1", "L_s2", "m_A1", "rG", "L_A1"], a["parameters"]
assert a["psi"] == b["psi"], (a["psi"], b["psi"])
for ra, rb in zip(a["gradient"], b["gradient"]):
    s = max(abs(x) for x in rb)
    assert s > 0
    for x, y in zip(ra, rb):
        assert abs(x - y) <= 1e-8 * s, (x, y)
PY
then ok "$f: davm = ddm (psi equal, gradient to 1e-8)"; else ko "$f: davm against ddm"; fi
done

"$CLI" sensitivity "$FIVEBAR" --formulation penalty --method davm --tf 0.05 >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "ali3p|matrixr" "$TMP/err"; then ok "davm with penalty refused (exit 1, names ali3p|matrixr)"
else ko "davm with penalty: exit $rc, $(cat "$TMP/err")"; fi

finish
