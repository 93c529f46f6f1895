#!/bin/sh
# models/anchor_lift.json (docs/models.md, "anchor_lift.json"): written by
# scripts/gen_anchor_lift.py, which must give the committed file byte for
# byte; the sizes the docs state (64 bodies, 130 coordinates, 67 contacts,
# 4 constraint rows: three hoist drivers and one Euler normalization); and a
# few steps of the lift with each formulation the docs run it with.
SUITE=anchor_lift
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
SRC=$MBS_SOURCE_DIR
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

if "$PY" "$SRC/scripts/gen_anchor_lift.py" -o "$TMP/anchor_lift.json" 2>"$ERR"; then
    if cmp -s "$TMP/anchor_lift.json" "$SRC/models/anchor_lift.json"; then
        ok "scripts/gen_anchor_lift.py regenerates models/anchor_lift.json byte for byte"
    else
        ko "regenerated model differs from models/anchor_lift.json"
        diff "$TMP/anchor_lift.json" "$SRC/models/anchor_lift.json" | head -n 10
    fi
else
    ko "scripts/gen_anchor_lift.py failed"; sed 's/^/    /' "$ERR" | head -n 10
fi

M=$SRC/models/anchor_lift.json
run info "$M" --json
expect 0 "info"
"$PY" - "$OUT" <<'PYEOF' && ok "64 bodies, 130 coordinates, 67 forces, 4 constraint rows, mobility 126" || ko "model sizes"
import json, sys
i = json.load(open(sys.argv[1]))
got = (i["n_bodies"], i["n_coordinates"], len(i["forces"]), i["n_constraints"], i["mobility"])
print("bodies, coordinates, forces, constraint rows, mobility:", got)
sys.exit(got != (64, 130, 67, 4, 126))
PYEOF

# 20 steps of 0.05 ms with each formulation and reference point of docs/benchmarks.md
for f in index1 ali3p; do
    for r in com origin; do
        run simulate "$M" --formulation "$f" --ref "$r" --tf 0.001 -q -o "$TMP/a.csv"
        expect 0 "simulate --formulation $f --ref $r (20 steps)"
    done
done
finish
