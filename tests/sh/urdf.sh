#!/bin/sh
# Command-line test: URDF files in the mbsens command (docs/cli.md "convert",
# docs/model-format.md "URDF"), on the small URDFs of tests/urdf/.
#
# `convert` writes JSON that loads and gives the same inverse dynamics as the
# URDF itself (identical text output), `info`/`inverse`/`kinematics` read
# URDF directly, loader warnings go to stderr with exit 0, --strict-inertia
# and load errors exit 1 with file:line, usage errors exit 2, and a failed
# convert leaves no file behind. --velocities converts the floating base
# (URDF) or a JSON model's spherical and floating joints, and back.
#
# Environment (set by CTest): MBS_CLI (the mbsens executable), MBS_SOURCE_DIR.
# Ends with "urdf: N passed, M failed"; the exit status is non-zero on failure.
SUITE=urdf
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
U=$MBS_SOURCE_DIR/tests/urdf

# info on a URDF: sizes and names
run info "$U/small_robot.urdf"
expect 0 "info small_robot.urdf"
stdout_has '^coordinates +14' "14 coordinates"
stdout_has 'slide_plane\.theta' "planar coordinate names"
stdout_has 'upper\.sensor' "merged link frame as a named point"
[ ! -s "$ERR" ] && ok "no warnings for small_robot" || ko "unexpected stderr: $(cat "$ERR")"

# convert, reload, same inverse dynamics
Q=0.4,-0.7,0.12,0.3,-0.2,0.9,0.955336489125606,0.177312123996804,0,0.236416165329072,0.25,-0.4,1.1,0.35
run convert "$U/small_robot.urdf" -o "$TMP/small.json"
expect 0 "convert small_robot.urdf -o small.json"
[ -s "$TMP/small.json" ] && ok "JSON written" || ko "no JSON written"
run inverse "$U/small_robot.urdf" --q "$Q" --qd 1,2,3,0.1,0.2,0.3,0,0,0,0,0.5,0.6,0.7,0.8 --qdd 1,1,1,1,1,1,0,0,0,0,1,1,1,1
expect 0 "inverse on the URDF"
cp "$OUT" "$TMP/tau_urdf"
run inverse "$TMP/small.json" --q "$Q" --qd 1,2,3,0.1,0.2,0.3,0,0,0,0,0.5,0.6,0.7,0.8 --qdd 1,1,1,1,1,1,0,0,0,0,1,1,1,1
expect 0 "inverse on the converted JSON"
if cmp -s "$OUT" "$TMP/tau_urdf"; then ok "same tau from URDF and JSON"; else
    ko "tau differs between URDF and JSON"; diff "$OUT" "$TMP/tau_urdf" | head -n 20; fi
run convert "$U/small_robot.urdf"
expect 0 "convert to standard output"
stdout_has '"name": "small"' "JSON on stdout"
run kinematics "$U/small_robot.urdf" --q "$Q"
expect 0 "kinematics on the URDF"

# warnings: stderr, exit 0; the JSON carries lenient_inertia and warns again
run info "$U/triangle.urdf"
expect 0 "info triangle.urdf"
stderr_has '^mbsens info: warning: .*triangle\.urdf:15: link rod: inertia violates the triangle inequality' \
    "warning names file:line and the link"
run convert "$U/triangle.urdf" -o "$TMP/tri.json"
expect 0 "convert triangle.urdf"
grep -q '"lenient_inertia": true' "$TMP/tri.json" && ok "lenient_inertia written" || ko "lenient_inertia missing"
run info "$TMP/tri.json"
expect 0 "info on the converted lenient JSON"
stderr_has '^mbsens info: warning: .*body rod: inertia violates the triangle inequality' "JSON warns per body"
run convert "$U/triangle.urdf" --strict-inertia -o "$TMP/strict.json"
expect 1 "convert --strict-inertia rejects"
stderr_has 'triangle\.urdf:15: link rod: inertia violates the triangle inequality' "strict error names file:line"
[ ! -e "$TMP/strict.json" ] && ok "no file after a failed convert" || ko "failed convert left a file"
ls -A "$TMP" | grep -q '^\.strict' && ko "temporary file left behind" || ok "no temporary file left"

# errors
run info "$U/malformed.urdf"
expect 1 "malformed XML"
stderr_has 'malformed\.urdf:7:[0-9]+: XML error' "XML error with file:line:column"
run info "$U/bad_joint_type.urdf"
expect 1 "unknown joint type"
stderr_has 'bad_joint_type\.urdf:7: joint j1: unknown joint type "hinge"' "joint type error with file:line"
run convert "$TMP/small.json" --floating-base
expect 2 "--floating-base on a JSON model is a usage error"
run convert "$U/small_robot.urdf" --floating-base
expect 1 "floating base on a massless root"
stderr_has 'small_robot\.urdf:7: link world is the floating base' "floating-base error names the root link"

# --velocities: the floating base with tangent velocities, and back
A=$MBS_SOURCE_DIR/models/arm.urdf
run convert "$A" --floating-base --velocities tangent -o "$TMP/arm_tg.json"
expect 0 "convert --velocities tangent"
grep -q '"velocities": "tangent"' "$TMP/arm_tg.json" && ok "tangent root_joint written" || ko "no tangent joint written"
run info "$TMP/arm_tg.json"
expect 0 "info on the tangent model"
run convert "$TMP/arm_tg.json" --velocities euler-rates -o "$TMP/arm_er.json"
expect 0 "convert a JSON model --velocities euler-rates"
run convert "$A" --floating-base -o "$TMP/arm_e.json"
expect 0 "convert --floating-base (Euler rates, the default)"
grep -q -- '-0\.0' "$TMP/arm_e.json" && ok "a negative zero written as -0.0" || ko "no -0.0 in arm_e.json"
if cmp -s "$TMP/arm_er.json" "$TMP/arm_e.json"; then ok "tangent and back: the Euler-rate model"; else
    ko "tangent and back differs"; diff "$TMP/arm_er.json" "$TMP/arm_e.json" | head -n 20; fi
run convert "$TMP/arm_e.json" -o "$TMP/arm_e2.json"
expect 0 "convert the Euler-rate JSON"
if cmp -s "$TMP/arm_e.json" "$TMP/arm_e2.json"; then ok "a written model writes back the same text"; else
    ko "the second write differs"; diff "$TMP/arm_e.json" "$TMP/arm_e2.json" | head -n 20; fi
run convert "$A" --velocities angular
expect 2 "--velocities: unknown convention"
stderr_has "--velocities: unknown value 'angular' \(expected tangent or euler-rates\)" "names the value"
cat >"$TMP/spring.json" <<'JSON'
{ "bodies": [ { "name": "a", "mass": 1, "inertia": [1, 1, 1, 0, 0, 0] } ],
  "joints": [ { "name": "jf", "type": "floating", "parent": "ground", "child": "a" } ],
  "forces": [ { "name": "k", "type": "joint_spring", "joint": "jf", "coordinate": "x", "stiffness": 1 } ] }
JSON
run convert "$TMP/spring.json" --velocities tangent -o "$TMP/spring_tg.json"
expect 1 "a joint spring on a joint made tangent"
stderr_has 'joint_spring k on coordinate jf\.x of joint jf, whose velocities are tangent' "the loader's message"
[ ! -e "$TMP/spring_tg.json" ] && ok "no file after the refusal" || ko "refused convert left a file"

finish
