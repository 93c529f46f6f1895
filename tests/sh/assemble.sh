#!/bin/sh
# mbsens assemble (docs/cli.md, "assemble"): the initial state a run starts
# from, the same to the last bit as the first row of simulate; --model-out
# writes it back so that a run starts where the file says; and the JSON
# files the command writes (assemble and optimize --model-out, convert)
# carry the shortest numbers that read back, small arrays on one line.
#
# Environment (set by CTest): MBS_CLI, MBS_SOURCE_DIR.
SUITE=assemble
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
need_python
UNFIXED=$MBS_SOURCE_DIR/tests/models/fivebar_unfixed.json

run assemble "$UNFIXED"
expect 0 "assemble a closed loop"
stdout_has '^model fivebar_unfixed: assembled at t = 0 in [0-9]+ iterations' "header"
stdout_has '^jA +-2\.356194490e\+00 +-2\.36549[0-9]+e\+00 .* 2\.000000000e\+00 +0\.000000000e\+00 +-2\.000e\+00$' \
    "jA: position and the zeroed speed"
run assemble "$UNFIXED" --json
expect 0 "assemble --json"
cp "$OUT" "$TMP/asm.json"
run simulate "$UNFIXED" --tf 0.001 --format json -q
expect 0 "simulate"
cp "$OUT" "$TMP/sim.json"
if python3 - "$TMP/asm.json" "$TMP/sim.json" >"$TMP/py.log" 2>&1 <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))
cols, row = s["columns"], s["rows"][0]
q = [row[cols.index(c)] for c in a["coordinates"]]
qd = [row[cols.index(c + ".qd")] for c in a["coordinates"]]
assert a["assembled"] is True and a["fixed"] == [], a
assert a["q"] == q, (a["q"], q)          # the same calls: equal to the last bit
assert a["qd"] == qd, (a["qd"], qd)
assert a["residual"] <= 1e-8, a["residual"]   # mbs_kin_options.residual_tol
PY
then ok "assembled state = first row of the run"; else ko "assembled state vs the run"; sed 's/^/    /' "$TMP/py.log"; fi

# shortest FILE LABEL: every number of FILE has as many significant digits
# as Python's repr, the shortest text that reads back (both read back; the
# last digit may differ where 16 or 17 are needed), and no array of
# numbers is written one number per line.
shortest() {
    if python3 - "$1" >"$TMP/py.log" 2>&1 <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def digits(tok):
    mant = re.split('[eE]', tok.lstrip('-'))[0].replace('.', '').lstrip('0')
    return len(mant.rstrip('0')) if '.' in tok or 'e' in tok.lower() else len(mant.rstrip('0') or '0')
for tok in re.findall(r'(?<![\w."])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w."])', text):
    x = float(tok)
    assert digits(tok) <= max(digits(repr(x)), 1), (tok, repr(x))
assert not re.search(r'^\s*-?[0-9.eE+-]+,?$', text, re.M), "a number alone on a line"
PY
    then ok "$2: shortest numbers, arrays on one line"; else ko "$2"; sed 's/^/    /' "$TMP/py.log"; fi
}

# --model-out: the run then starts from the file's state, and says nothing
run assemble "$UNFIXED" --model-out "$TMP/assembled.json"
expect 0 "assemble --model-out"
run simulate "$TMP/assembled.json" --tf 0.001 -q --out "$TMP/a.csv"
expect 0 "simulate the written model"
if grep -q 'note:' "$ERR"; then ko "the written model is still corrected"; sed 's/^/    /' "$ERR"; else ok "the written model needs no correction"; fi
shortest "$TMP/assembled.json" "assemble --model-out"
run assemble "$UNFIXED" --model-out "$UNFIXED"
expect 1 "--model-out onto the input"
stderr_has "it is the input model" "refused before anything is written"
run assemble "$MBS_SOURCE_DIR/models/arm.urdf" --model-out "$TMP/arm.json"
expect 1 "--model-out from a URDF"
stderr_has "convert it first" "says what to do"
if [ ! -e "$TMP/arm.json" ]; then ok "nothing written"; else ko "$TMP/arm.json written"; fi
run assemble "$MBS_SOURCE_DIR/models/arm3.json"
expect 0 "an open tree"
stdout_has 'no loops or drivers' "nothing to assemble"
run assemble "$UNFIXED" --t abc
expect 2 "--t abc"

# convert and optimize --model-out write numbers alike
run convert "$MBS_SOURCE_DIR/models/arm.urdf" -o "$TMP/arm.json"
expect 0 "convert"
shortest "$TMP/arm.json" "convert"
grep -q '"com": \[0.2, 0, 0\]' "$TMP/arm.json" && ok "convert: [0.2, 0, 0]" || ko "convert: com of upper_arm"
run inverse "$TMP/arm.json" --q 0.3,-0.4,0.5 --json
cp "$OUT" "$TMP/inv_json.json"
run inverse "$MBS_SOURCE_DIR/models/arm.urdf" --q 0.3,-0.4,0.5 --json
if cmp -s "$OUT" "$TMP/inv_json.json"; then ok "convert: same torques to the last digit"; else ko "convert changed the dynamics"; fi
run optimize "$MBS_SOURCE_DIR/models/arm3.json" --objective reach --free k --tf 0.2 --max-iter 2 -q --model-out "$TMP/opt.json"
expect 0 "optimize --model-out"
shortest "$TMP/opt.json" "optimize --model-out"
finish
