#!/bin/sh
# mbsens check: the derivative check command on shipped and generated models.
SUITE=check
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
SRC=$MBS_SOURCE_DIR
tmp=$TMP
need_python

# shipped model with parameters: all blocks pass, JSON reports them
if "$CLI" check "$SRC/models/double_pendulum.json" --samples 3 --json > "$tmp/dp.json"; then ok; else ko "check double pendulum exit"; fi
python3 - "$tmp/dp.json" <<'PY' && ok || ko "double pendulum JSON content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["passed"] is True and d["samples"] == 3
w = d["worst_relative_error"]
assert set(w) == {"dtau/dq", "dtau/dqd", "dtau/drho", "dqdd/dq", "dqdd/dqd", "dqdd/dtau", "dqdd/drho", "fr vs semi"}
assert all(v < 1e-12 for v in w.values()), w
PY
# every reference point and a floating spherical chain
"$CLI" generate chain --n 5 --joint spherical --floating -o "$tmp/c.json" || ko "generate"
for ref in com origin joint; do
    if "$CLI" check "$tmp/c.json" --samples 2 --ref $ref > "$tmp/out.txt"; then ok; else ko "check chain ref $ref"; cat "$tmp/out.txt" >&2; fi
    grep -q "all derivatives agree" "$tmp/out.txt" && ok || ko "text summary ($ref)"
done
# a tolerance no floating-point result can meet fails with exit 1
"$CLI" check "$tmp/c.json" --samples 1 --tol 1e-300 > "$tmp/out.txt"; rc=$?
[ $rc -eq 1 ] && ok || ko "impossible tolerance should exit 1 (got $rc)"
grep -q "ABOVE TOLERANCE" "$tmp/out.txt" && ok || ko "above-tolerance marker"
# given state, and bad arguments
"$CLI" check "$SRC/models/double_pendulum.json" --q 0.1,0.2 --qd 1,-1 > /dev/null && ok || ko "check at a given state"
"$CLI" check "$SRC/models/double_pendulum.json" --q 0.1 2> "$tmp/err.txt"; rc=$?
[ $rc -eq 2 ] && grep -q "expected 2" "$tmp/err.txt" && ok || ko "wrong --q length (rc $rc)"
"$CLI" check "$SRC/models/double_pendulum.json" --samples 0 2> /dev/null; [ $? -eq 2 ] && ok || ko "--samples 0"
"$CLI" check "$SRC/models/double_pendulum.json" --ref nowhere 2> /dev/null; [ $? -eq 2 ] && ok || ko "--ref nowhere"
finish
