#!/bin/sh
# Command-line test: `mbsens optimize` (docs/cli.md, docs/optimization.md).
#
# On a small optimal-control problem (a pendulum tracking a reference with a
# spline torque) and the five-bar: one progress line per iteration, the
# summary (stop reason, iterations, evaluations), RESULT.json with the
# required members and psi decreased, the model copy with the optimized
# parameter values (it loads, and `mbsens sensitivity` on it gives
# psi_final), the history CSV (one row per iteration), the SVG plot (well
# formed, two panels), --fix/--free, --weights, --continuation, and the
# errors: usage errors exit 2 and write nothing, an unwritable output exits
# 1 and leaves no temporary file, a model without objectives exits 1.
#
# Environment (set by CTest): MBS_CLI, MBS_SOURCE_DIR.
SUITE=optimize
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
need_python

# the pendulum optimal-control problem of tests/test_optimize.c
cat >"$TMP/pend.json" <<'EOF'
{ "name": "pend_ocp", "gravity": [0, -9.81, 0],
  "bodies": [ { "name": "link", "mass": 1.0, "com": [0.5, 0, 0], "inertia": [0.001, 0.02, 0.02, 0, 0, 0] } ],
  "joints": [ { "name": "j", "type": "revolute", "parent": "ground", "child": "link", "axis": [0, 0, 1],
                "q0": [-1.5707963267948966] } ],
  "functions": [ { "name": "u", "type": "spline", "times": [0, 0.5, 1, 1.5, 2], "values": [0, 0, 0, 0, 0] },
                 { "name": "ref", "type": "sine", "amplitude": 0.6, "frequency": 0.5, "offset": -1.5707963267948966 } ],
  "forces": [ { "name": "motor", "type": "joint_force", "joint": "j", "function": "u" } ],
  "simulation": { "dt": 0.01, "tf": 2 },
  "parameters": [
    { "name": "u0", "value": 0, "lower": -20, "upper": 20, "sets": ["u.values[0]"] },
    { "name": "u1", "value": 0, "lower": -20, "upper": 20, "sets": ["u.values[1]"] },
    { "name": "u2", "value": 0, "lower": -20, "upper": 20, "sets": ["u.values[2]"] },
    { "name": "u3", "value": 0, "lower": -20, "upper": 20, "sets": ["u.values[3]"] },
    { "name": "u4", "value": 0, "lower": -20, "upper": 20, "sets": ["u.values[4]"] } ],
  "objectives": [ { "name": "track", "integral": [ { "coordinate": "j", "reference": "ref" } ] },
                  { "name": "speed", "integral": [ { "coordinate": "j", "quantity": "velocity" } ] } ] }
EOF
P=$TMP/pend.json

run optimize "$P" --max-iter 15 --out "$TMP/r.json" --model-out "$TMP/opt.json" --history "$TMP/h.csv" \
    --plot "$TMP/p.svg" --plot-coord j
expect 0 "optimize with every output"
grep -q "^stop: " "$OUT" && grep -q "iterations" "$OUT" && grep -q "evaluations" "$OUT" &&
    ok "summary: stop reason, iterations, evaluations" || ko "summary missing"
n_iter=$(python3 -c "import json; print(json.load(open('$TMP/r.json'))['iterations'])" 2>/dev/null)
n_lines=$(grep -c -E '^ +[0-9]+ +[0-9]+ +[-0-9.e+]+ +[0-9.e+-]+ +[0-9.e+-]+$' "$OUT")
[ -n "$n_iter" ] && [ "$n_lines" -eq $((n_iter + 1)) ] && ok "one progress line per iteration ($n_iter + start)" ||
    ko "progress lines: $n_lines for $n_iter iterations"
python3 - "$TMP/r.json" <<'EOF' && ok "RESULT.json: members, psi decreased" || ko "RESULT.json"
import json, sys
r = json.load(open(sys.argv[1]))
for k in ("psi_initial", "psi_final", "iterations", "evaluations", "stop_reason", "parameters"):
    assert k in r, k
assert r["psi_final"] < 0.2 * r["psi_initial"], (r["psi_initial"], r["psi_final"])
assert sorted(r["parameters"]) == ["u0", "u1", "u2", "u3", "u4"]
assert r["method"] == "davm" and r["objective"] == "track" and r["iterations"] <= 15
EOF
rows=$(($(wc -l <"$TMP/h.csv") - 1))
head -n 1 "$TMP/h.csv" | grep -q '^iteration,stage,tf,evaluations,psi,gnorm,step,u0,u1,u2,u3,u4$' &&
    [ "$rows" -eq $((n_iter + 1)) ] && ok "history CSV: header and $rows rows" || ko "history CSV ($rows rows)"
python3 - "$TMP/p.svg" <<'EOF' && ok "SVG plot well formed, two panels, two responses" || ko "SVG plot"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg"
assert len(root.findall(ns + "polyline")) == 3, "psi + initial + optimized"
texts = " ".join(t.text or "" for t in root.iter(ns + "text"))
assert "psi against iterations" in texts and "initial" in texts and "optimized" in texts
EOF
# the model copy loads and reproduces psi_final
run sensitivity "$TMP/opt.json" --method davm --json
expect 0 "sensitivity on the model copy"
python3 - "$OUT" "$TMP/r.json" "$TMP/opt.json" <<'EOF' && ok "model copy: optimized values, psi_final reproduced" || ko "model copy"
import json, sys
s = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2])); m = json.load(open(sys.argv[3]))
vals = {p["name"]: p["value"] for p in m["parameters"]}
assert all(vals[k] == v for k, v in r["parameters"].items())
assert abs(s["psi"][0] - r["psi_final"]) <= 1e-12 * abs(r["psi_final"]), (s["psi"][0], r["psi_final"])
EOF

# --free / --fix, --weights, algorithms, --continuation
run optimize "$P" --free u1,u2 --algorithm slsqp --max-iter 10 --out "$TMP/r2.json" --quiet
expect 0 "--free with slsqp"
python3 -c "
import json; r = json.load(open('$TMP/r2.json'))
assert r['fixed'] == ['u0', 'u3', 'u4'] and all(r['parameters'][k] == 0 for k in r['fixed'])
assert r['parameters']['u1'] != 0 and r['psi_final'] < r['psi_initial']" && ok "held parameters unchanged" ||
    ko "--free"
run optimize "$P" --weights 1,0.01 --algorithm mma --max-iter 8 --out "$TMP/r3.json" --quiet
expect 0 "--weights with mma"
python3 -c "
import json; r = json.load(open('$TMP/r3.json'))
assert r['weights'] == {'track': 1, 'speed': 0.01} and r['psi_final'] < r['psi_initial']" && ok "weighted sum" ||
    ko "--weights"
run optimize "$P" --continuation --max-iter 10 --out "$TMP/r4.json"
expect 0 "--continuation"
grep -q "^stage 1: horizon \[.., 2\] s" "$OUT" && python3 -c "
import json; r = json.load(open('$TMP/r4.json')); assert r['stages'] == 2" && ok "two stages (1 s, 2 s)" ||
    ko "continuation stages"

# the five-bar: two free lengths, closed loop (ALI3-P direct differentiation)
run optimize "$MBS_SOURCE_DIR/models/fivebar.json" --free L_s1,L_s2 --tf 0.3 --dt 0.01 --max-iter 20 \
    --out "$TMP/fb.json" --quiet
expect 0 "five-bar"
python3 -c "
import json; r = json.load(open('$TMP/fb.json'))
assert r['method'] == 'ddm' and r['formulation'] == 'ali3p'
assert r['psi_final'] < 1e-8 * r['psi_initial'], r['psi_final']" && ok "five-bar: equilibrium lengths" ||
    ko "five-bar"

# errors
for args in "--algorithm bfgs" "--objective nope" "--weights 1" "--free nope" "--method cs" "--max-iter 0" \
            "--objective track --weights 1,1" "--plot-coord nope"; do
    # shellcheck disable=SC2086
    run optimize "$P" $args --out "$TMP/bad.json"
    expect 2 "usage error: $args"
    [ -e "$TMP/bad.json" ] && ko "file written after a usage error ($args)"
done
run optimize "$MBS_SOURCE_DIR/models/double_pendulum.json" --out "$TMP/bad.json"
expect 1 "model without objectives"
grep -q "no objectives" "$ERR" && ok "message names the missing objectives" || ko "message: $(cat "$ERR")"
mkdir "$TMP/ro" && chmod 500 "$TMP/ro"
if [ "$(id -u)" -ne 0 ]; then
    run optimize "$P" --max-iter 2 --out "$TMP/ro/r.json" --quiet
    expect 1 "unwritable output"
    [ -z "$(ls -A "$TMP/ro")" ] && ok "no temporary file left" || ko "files left: $(ls -A "$TMP/ro")"
fi
run optimize "$P" --max-iter 2 --out "$TMP/missing/r.json" --quiet
expect 1 "output in a missing directory"
[ ! -e "$TMP/missing" ] && ok "nothing created" || ko "created $TMP/missing"
ls "$TMP" | grep -q '\.tmp' && ko "temporary files left: $(ls "$TMP")" || ok "no temporary files left"
finish
