#!/bin/sh
# Names in CSV headers and in tables (docs/cli.md, "simulate" and "info"):
# a coordinate, objective or parameter name holding a comma or a quote is
# quoted as RFC 4180 says in simulate, sensitivity --history and optimize
# --history, and view reads such a header back; the sensitivity table is as
# wide as its longest names; info lists the simulation settings, outputs
# and objectives.
#
# Environment (set by CTest): MBS_CLI, MBS_SOURCE_DIR.
SUITE=csv_names
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
need_python
python3 - "$MBS_SOURCE_DIR/tests/models/double_pendulum_objectives.json" "$TMP/odd.json" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
# the joints renamed everywhere they are named (objectives too)
text = text.replace('"theta1"', '"theta,1"').replace('"theta2"', '"the \\"2\\""')
d = json.loads(text)
d["objectives"][0]["name"] = "position_of_the_tip,x"
d["parameters"][0]["name"] = "length_of_the_first_rod"
json.dump(d, open(sys.argv[2], "w"))
PY

run simulate "$TMP/odd.json" --tf 0.01 -q --out "$TMP/odd.csv"
expect 0 "simulate"
if head -n 1 "$TMP/odd.csv" | grep -q '^t,"theta,1","the ""2""","theta,1\.qd",'; then ok "quoted header"; else
    ko "header: $(head -n 1 "$TMP/odd.csv")"; fi
if python3 -c "
import csv, sys
h = next(csv.reader(open('$TMP/odd.csv')))
assert h[:3] == ['t', 'theta,1', 'the \"2\"'], h
assert all(len(r) == len(h) for r in csv.reader(open('$TMP/odd.csv')))
" 2>"$TMP/py.log"; then ok "Python's csv reads the names back"; else ko "csv module"; cat "$TMP/py.log"; fi
run view "$TMP/odd.json" "$TMP/odd.csv" -o "$TMP/odd.html"
expect 0 "view reads the quoted header"

run sensitivity "$TMP/odd.json" --tf 0.01 --history "$TMP/hist.csv"
expect 0 "sensitivity --history"
if head -n 1 "$TMP/hist.csv" | grep -q '^t,"position_of_the_tip,x",vel,acc,mixed,"dposition_of_the_tip,x/dlength_of_the_first_rod",'; then
    ok "history header quoted"; else ko "history header: $(head -n 1 "$TMP/hist.csv" | cut -c1-120)"; fi
# the table: every line as wide as the header (names longer than the columns)
awk 'NR > 1 { print length($0) }' "$OUT" | sort -u >"$TMP/widths"
if [ "$(wc -l <"$TMP/widths")" -eq 1 ]; then ok "table columns as wide as the names"; else
    ko "table lines of different widths"; cat "$OUT"; fi
stdout_has '^objective +psi length_of_the_first_rod ' "long parameter name in the header"

run optimize "$TMP/odd.json" --objective vel --free L2 --tf 0.01 --max-iter 1 -q --history "$TMP/ohist.csv"
expect 0 "optimize --history"
if head -n 1 "$TMP/ohist.csv" | grep -q '^iteration,stage,tf,evaluations,psi,gnorm,step,length_of_the_first_rod,L2,'; then
    ok "optimize history header"; else ko "optimize history: $(head -n 1 "$TMP/ohist.csv")"; fi

run info "$MBS_SOURCE_DIR/models/arm3.json"
expect 0 "info"
stdout_has '^  integrator trapezoidal, formulation fr, ref com, dt 0\.001, t = 0 \.\. 2$' "info: simulation settings"
stdout_has '^  link3\.tip\.x, link3\.tip\.y, link3\.tip\.z, kinetic_energy, potential_energy, elastic_energy, energy$' "info: outputs"
stdout_has '^  reach rest$' "info: objectives"
run info "$MBS_SOURCE_DIR/models/arm3.json" --json
if python3 -c "
import json, sys
d = json.load(open('$OUT'))
assert d['simulation'] == {'integrator': 'trapezoidal', 'formulation': 'fr', 'ref': 'com', 'dt': 0.001, 't0': 0, 'tf': 2}, d['simulation']
assert d['objectives'] == ['reach', 'rest'] and len(d['outputs']) == 7
" 2>"$TMP/py.log"; then ok "info --json: simulation, outputs, objectives"; else ko "info --json"; cat "$TMP/py.log"; fi
finish
