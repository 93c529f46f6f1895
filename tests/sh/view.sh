#!/bin/sh
# Command-line test: `mbsens view`, `simulate --poses/--format json` and
# `convert --to mjcf` (docs/viewer.md, docs/cli.md): the commands the docs
# show, and bad input (exit 2 for the command line, 1 with FILE:LINE for
# files; no page left behind). What the page shows is tested in a browser
# by tests/browser/test_viewer.mjs.
#
# Environment (set by CTest): MBS_CLI (the mbsens executable), MBS_SOURCE_DIR.
# Ends with "view: N passed, M failed"; the exit status is non-zero on failure.
SUITE=view
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
need_python
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
M=$MBS_SOURCE_DIR/models
cd "$TMP" || { ko "cd $TMP"; finish; }

# ---- simulate: poses and JSON (docs/viewer.md "Body poses")
run simulate "$M/fivebar.json" --tf 1 --poses all --out fivebar.csv -q
expect 0 "simulate fivebar --poses all"
head -n 1 fivebar.csv | grep -q 'b23.x,b23.y,b23.z,b23.qw,b23.qx,b23.qy,b23.qz' && ok "pose columns" ||
    ko "pose columns: $(head -n 1 fivebar.csv)"
run simulate "$M/double_pendulum.json" --tf 0.01 --poses body2 --format json --out dp.json -q
expect 0 "simulate --poses body2 --format json"
if "$PY" -c "
import json, sys
d = json.load(open('dp.json'))
assert d['columns'][-7:] == ['body2.x', 'body2.y', 'body2.z', 'body2.qw', 'body2.qx', 'body2.qy', 'body2.qz'], d['columns']
assert len(d['rows']) == 11 and all(len(r) == len(d['columns']) for r in d['rows'])
r = d['rows'][0][-4:]
assert abs(sum(x * x for x in r) - 1) < 1e-15
"; then ok "JSON run: columns, 11 rows, unit quaternions"; else ko "JSON run"; fi
run simulate "$M/double_pendulum.json" --poses elbow -q
expect 2 "--poses with an unknown body"
stderr_has "unknown body 'elbow'" "names the body"
run simulate "$M/double_pendulum.json" --format xml -q
expect 2 "--format xml"

# ---- view (the commands of docs/viewer.md)
run view "$M/fivebar.json" fivebar.csv -o fivebar.html
expect 0 "view fivebar.json fivebar.csv -o fivebar.html"
grep -q '"frames": {"n": 1001' fivebar.html && ok "1001 frames in the page" || ko "frames"
grep -q '@MBS_DATA@' fivebar.html && ko "placeholder left in the page" || ok "data filled in"
run sensitivity "$M/fivebar.json" --tf 0.5 --json
expect 0 "sensitivity --json"
cp "$OUT" grad.json
run view "$M/fivebar.json" fivebar.csv -o fivebar.html --sensitivity grad.json --trace b12.P2
expect 0 "view with --sensitivity and --trace"
grep -q '"sensitivity": {' fivebar.html && ok "gradient in the page" || ko "gradient"
run view "$M/human43.json" -o human43.html
expect 0 "view without a run"
grep -q '"frames": {"n": 1,' human43.html && ok "one frame" || ko "one frame"
run view "$MBS_SOURCE_DIR/tests/urdf/viewer_arm.urdf" -o arm.html
expect 0 "view a URDF"
grep -q '"kind": "cylinder"' arm.html && grep -q '"format": "stl"' arm.html && ok "URDF shapes and the STL" ||
    ko "URDF shapes"

# ---- view: bad input
run view "$M/fivebar.json" fivebar.csv
expect 2 "view without -o"
run view "$M/fivebar.json" fivebar.csv -o x.html --trace b12.nope
expect 2 "--trace with an unknown point"
sed '1s/,jA,/,jAA,/' fivebar.csv > nocol.csv
run view "$M/fivebar.json" nocol.csv -o bad.html
expect 1 "a CSV without a coordinate column"
stderr_has 'nocol.csv:1: no column for coordinate jA' "names the file, line and coordinate"
awk 'NR == 5 { $0 = "0.0001" substr($0, index($0, ",")) } { print }' fivebar.csv > back.csv
run view "$M/fivebar.json" back.csv -o bad.html
expect 1 "times that go back"
stderr_has 'back.csv:5: time 0.0001 does not increase' "names the line"
awk -F, 'NR == 7 { $3 = "abc" } { print }' OFS=, fivebar.csv > word.csv
run view "$M/fivebar.json" word.csv -o bad.html
expect 1 "a word in the CSV"
stderr_has 'word.csv:7: column 3' "names line and column"
echo '{"objectives": ["psi1"], "parameters": ["a"], "psi": [1], "gradient": [["x"]]}' > badgrad.json
run view "$M/fivebar.json" fivebar.csv -o bad.html --sensitivity badgrad.json
expect 1 "a malformed sensitivity result"
stderr_has 'badgrad.json: gradient\[0\]\[0\]: not a number' "names the JSON path"
[ ! -e bad.html ] && ok "no page left behind" || ko "bad.html written"
ls -a | grep -q '^\.bad\.html' && ko "temporary file left behind" || ok "no temporary file left"

# ---- convert --to mjcf (docs/viewer.md "MJCF export")
run convert "$M/fivebar.json" --to mjcf -o fivebar.xml
expect 0 "convert fivebar.json --to mjcf -o fivebar.xml"
grep -q '<connect body1="world" body2="b3B"' fivebar.xml && ok "the loop as connect equalities" || ko "connect"
grep -q '<spatial name="spring1" stiffness="100"' fivebar.xml && ok "the springs as tendons" || ko "tendons"
run convert "$M/human43.json" --to mjcf
expect 0 "MJCF on standard output"
stdout_has '<joint name="q10_r_knee" type="hinge"' "hinges named after the coordinates"
stderr_has 'note: 23 moving bodies without mass' "the massless bodies are reported"
run generate chain --n 60 --joint revolute -o chain60.json
expect 0 "generate a 60-body chain"
run convert chain60.json --to mjcf -o chain60.xml
expect 0 "a deep chain into several files"
[ -s chain60_seg1.xml ] && grep -q '<include file="chain60_seg1.xml"/>' chain60.xml && ok "included segment" ||
    ko "segment files: $(ls)"
run convert chain60.json --to mjcf
expect 1 "a deep chain on standard output"
stderr_has 'give -o FILE.xml' "says to give -o"
run convert "$M/fivebar.json" --to sdf
expect 2 "--to sdf"
finish
