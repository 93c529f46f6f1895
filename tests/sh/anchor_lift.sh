#!/bin/sh
# models/anchor_lift.json (docs/models.md, "anchor_lift.json"): written by
# scripts/gen_anchor_lift.py, which must give the committed file byte for
# byte; the sizes the docs state (64 bodies, 130 coordinates, 67 contacts,
# 4 constraint rows: three hoist drivers and one Euler normalization); and the
# commands of the 20 s lift the docs show, over 0.02 s.
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

# The 20 s runs of docs/benchmarks.md, "Anchor lift" (each formulation and reference
# point, and the model's own settings), as the doc writes them but over 0.02 s
# (400 steps of 0.05 ms): they run, and write the rows at 0, 0.01 and 0.02 s.
rows() {
    if [ "$(awk 'END { print NR }' "$1")" -eq 4 ] && awk -F, 'NR > 1 { t = t " " $1 } END { exit t != " 0 0.01 0.02" }' "$1"
    then ok "$2: rows at 0, 0.01, 0.02 s"; else ko "$2: rows"; head -c 300 "$1"; fi
}
for f in index1 ali3p; do
    for r in com origin; do
        run simulate "$M" --formulation "$f" --ref "$r" --tf 0.02 --output-dt 0.01 -o "$TMP/$f-$r.csv"
        expect 0 "simulate --formulation $f --ref $r --tf 0.02 --output-dt 0.01"
        rows "$TMP/$f-$r.csv" "$f $r"
    done
done
run simulate "$M" --tf 0.02 --output-dt 0.01 -o "$TMP/lift.csv"
expect 0 "simulate with the model's settings (index-1, com) --tf 0.02 --output-dt 0.01"
stderr_has "formulation index1, ref com" "the model's settings: index-1, com"
rows "$TMP/lift.csv" "the model's settings"
finish
