#!/bin/sh
# Command-line test: the mbsens command (docs/cli.md).
#
# Checks help texts and exit statuses, `generate chain` for every joint type
# with and without a floating base (n up to 256) and that the results load,
# `info --json` fields, `kinematics` and `inverse` on generated chains and on
# the double pendulum (closed-form static torques), value-list errors, load
# errors (file:line:col), numerical errors, and that `generate -o` never
# leaves a half-written or temporary file behind.
#
# Environment (set by CTest): MBS_CLI (the mbsens executable), MBS_SOURCE_DIR.
# Ends with "cli: N passed, M failed"; the exit status is non-zero on failure.
SUITE=cli
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
PENDULUM=$MBS_SOURCE_DIR/models/double_pendulum.json
need_python

# pycheck FILE DESCRIPTION CODE: run python CODE with d = json.load(FILE).
pycheck() {
    _f=$1 _d=$2
    shift 2
    if python3 - "$_f" "$*" >"$TMP/py.log" 2>&1 <<'EOF'
import json, math, sys
with open(sys.argv[1]) as fh:
    d = json.load(fh)
exec(sys.argv[2])
EOF
    then ok "$_d"; else ko "$_d"; sed 's/^/    /' "$TMP/py.log" | tail -n 5; fi
}

# ---------------------------------------------------------------- help
run --help;        expect 0 "mbsens --help"; stdout_has '^Usage: mbsens' "--help prints usage"
stdout_has 'kinematics' "--help lists the commands"
run -h;            expect 0 "mbsens -h"
run --version;     expect 0 "mbsens --version"; stdout_has '^mbsens [0-9]+\.[0-9]+\.[0-9]+' "--version prints the version"
run help;          expect 0 "mbsens help"
for c in info kinematics inverse generate; do
    run "$c" --help; expect 0 "mbsens $c --help"
    stdout_has "^Usage: mbsens $c" "mbsens $c --help prints its usage"
    run help "$c";   expect 0 "mbsens help $c"
    stdout_has "^Usage: mbsens $c" "mbsens help $c prints its usage"
done
run generate chain --help; expect 0 "mbsens generate chain --help"
run info -h;       expect 0 "mbsens info -h"

# ---------------------------------------------------------------- usage errors
run;                         expect 2 "no command"; stderr_has 'Usage:' "no command prints usage"
run frobnicate;              expect 2 "unknown command"
stderr_has "unknown command 'frobnicate'" "unknown command is named"
stderr_has '^Usage: mbsens' "unknown command prints usage"
run --bogus;                 expect 2 "unknown global option"; stderr_has "unknown option '--bogus'" "unknown global option is named"
run help frobnicate;         expect 2 "help on an unknown command"
run info "$PENDULUM" --bogus; expect 2 "unknown info option"
stderr_has "unknown option '--bogus'" "unknown info option is named"
stderr_has '^Usage: mbsens info' "unknown info option prints the info usage"
stdout_empty "unknown info option"
run info;                    expect 2 "info without MODEL"; stderr_has 'MODEL' "missing MODEL is reported"
run info "$PENDULUM" extra;  expect 2 "info with an extra argument"
run kinematics "$PENDULUM" --q; expect 2 "option without its value"; stderr_has "needs a value" "missing value is reported"
run kinematics "$PENDULUM" --json=1; expect 2 "value given to a flag"
run kinematics "$PENDULUM" --ref middle; expect 2 "unknown --ref"; stderr_has 'middle' "unknown --ref value is named"
run generate;                expect 2 "generate without kind"
run generate tree --n 3 --joint revolute; expect 2 "generate unknown kind"; stderr_has "tree" "unknown kind is named"
run generate chain --joint revolute; expect 2 "generate without --n"
run generate chain --n 3;    expect 2 "generate without --joint"
for n in 1 257 abc 3x ""; do
    run generate chain --n "$n" --joint revolute -o "$TMP/bad.json"
    expect 2 "generate --n '$n'"
done
run generate chain --n 3 --joint prismatic -o "$TMP/bad.json"; expect 2 "generate --joint prismatic"
run generate chain --n 3 --joint hinge -o "$TMP/bad.json"; expect 2 "generate --joint hinge"
if [ ! -e "$TMP/bad.json" ]; then ok "failed generate wrote no file"; else ko "failed generate left $TMP/bad.json"; fi
run generate free-bodies -o "$TMP/bad.json"; expect 2 "generate free-bodies without --bodies"
run generate free-bodies --bodies 3 --joint revolute -o "$TMP/bad.json"; expect 2 "generate free-bodies --joint"
stderr_has "does not apply" "an option of the other kind is named"
run generate free-bodies --bodies 3 --robot "$PENDULUM" --floating-base -o "$TMP/bad.json"
expect 2 "generate free-bodies --floating-base with a JSON robot"
run generate free-bodies --bodies 3 --robot "$TMP/none.json" -o "$TMP/bad.json"; expect 1 "generate free-bodies, no robot file"
if [ ! -e "$TMP/bad.json" ]; then ok "failed generate free-bodies wrote no file"; else ko "failed generate left $TMP/bad.json"; fi

# ---------------------------------------------------------------- generate
# nq(joint) and dof(joint); floating base: 7 coordinates, 6 dof.
for joint in revolute cardan spherical; do
    case $joint in
        revolute) nqj=1 ndj=1 ;;
        cardan) nqj=2 ndj=2 ;;
        spherical) nqj=4 ndj=3 ;;
    esac
    for floating in no yes; do
        for n in 2 7 256; do
            f=$TMP/chain_${joint}_${n}_${floating}.json
            if [ "$floating" = yes ]; then
                run generate chain --n "$n" --joint "$joint" --floating -o "$f"
                nq=$((7 + (n - 1) * nqj)); nd=$((6 + (n - 1) * ndj))
            else
                run generate chain --n "$n" --joint "$joint" -o "$f"
                nq=$((n * nqj)); nd=$((n * ndj))
            fi
            what="generate chain --n $n --joint $joint floating=$floating"
            expect 0 "$what"
            stdout_empty "$what -o FILE"
            [ -s "$f" ] || { ko "$what: no file"; continue; }
            run info "$f" --json
            expect 0 "info on $what"
            cp "$OUT" "$TMP/info.json"
            pycheck "$TMP/info.json" "$what: $n bodies, $nq coordinates, $nd dof" "
assert d['n_bodies'] == $n, d['n_bodies']
assert d['n_coordinates'] == $nq, d['n_coordinates']
assert d['n_dof'] == $nd, d['n_dof']
assert d['n_constraints'] == $nq - $nd, d['n_constraints']   # one Euler normalization per quadruple
assert len(d['coordinates']) == $nq
assert len(d['bodies']) == $n and len(d['joints']) == $n
assert len(d['points']) == 2 * $n
assert d['parameters'] == ['m1', 'L1'], d['parameters']
assert [j['type'] for j in d['joints']][1:] == ['$joint'] * ($n - 1)
assert d['joints'][0]['type'] == ('floating' if '$floating' == 'yes' else '$joint')
assert len(set(b['mass'] for b in d['bodies'])) == $n, 'masses are not distinct'
assert all(abs(b['mass'] - 1) <= 0.2 + 1e-12 for b in d['bodies'])
assert any(x != 0 for x in d['q0']) and any(x != 0 for x in d['qd0'])
"
            # Awk/grep view of the same count, as a user would do it.
            c=$(awk -F: '/"n_coordinates"/ { gsub(/[ ,]/, "", $2); print $2 }' "$TMP/info.json")
            if [ "$c" = "$nq" ]; then ok "$what: n_coordinates via awk"; else ko "$what: n_coordinates via awk is '$c', expected $nq"; fi
        done
    done
done
# A deterministic generator: -o and stdout give the same text.
run generate chain --n 7 --joint cardan
expect 0 "generate to stdout"
if cmp -s "$OUT" "$TMP/chain_cardan_7_no.json"; then ok "generate is deterministic, stdout = file"; else ko "generate to stdout differs from -o"; fi
# Only the target file in the directory: no temporary file left behind.
mkdir "$TMP/gen" && run generate chain --n 3 --joint spherical -o "$TMP/gen/model.json"
expect 0 "generate into a fresh directory"
left=$(ls -A "$TMP/gen")
if [ "$left" = "model.json" ]; then ok "no temporary file left after generate"; else ko "directory holds: $left"; fi
# Failure keeps an existing file untouched.
echo "keep me" >"$TMP/gen/keep.json"
run generate chain --n 300 --joint spherical -o "$TMP/gen/keep.json"
expect 2 "generate --n 300 over an existing file"
if [ "$(cat "$TMP/gen/keep.json")" = "keep me" ]; then ok "failed generate kept the existing file"; else ko "failed generate modified the existing file"; fi
# Into a missing directory: fails, leaves nothing.
run generate chain --n 3 --joint revolute -o "$TMP/missing/dir/model.json"
expect 1 "generate -o into a non-existent directory"
stderr_has "missing/dir/model.json" "the error names the output file"
if [ ! -e "$TMP/missing" ]; then ok "nothing created for a non-existent directory"; else ko "$TMP/missing was created"; fi
# Onto a directory: the rename fails, the temporary file is removed.
mkdir "$TMP/gen/sub"
run generate chain --n 3 --joint revolute -o "$TMP/gen/sub"
expect 1 "generate -o onto a directory"
left=$(ls -A "$TMP/gen" | tr '\n' ' ')
if [ "$left" = "keep.json model.json sub " ]; then ok "no temporary file left after a failed rename"; else ko "directory holds: $left"; fi

# ---------------------------------------------------------------- info
run info "$PENDULUM"
expect 0 "info (text)"
stdout_has 'double_pendulum' "info names the model"
stdout_has 'body1' "info lists the bodies"
stdout_has 'theta2' "info lists the joints and coordinates"
stdout_has 'body2\.Q' "info lists the points"
stdout_has 'M_Q' "info lists the parameters"
run info "$PENDULUM" --json
expect 0 "info --json"
cp "$OUT" "$TMP/pend_info.json"
pycheck "$TMP/pend_info.json" "info --json on the double pendulum" "
assert d['model'] == 'double_pendulum'
assert (d['n_bodies'], d['n_coordinates'], d['n_dof'], d['n_constraints']) == (2, 2, 2, 0)
assert d['coordinates'] == ['theta1', 'theta2']
assert d['parameters'] == ['L1', 'L2', 'M_P', 'M_Q']
assert [b['name'] for b in d['bodies']] == ['body1', 'body2']
assert [b['parent'] for b in d['bodies']] == ['ground', 'body1']
assert [b['mass'] for b in d['bodies']] == [1.0, 1.0]
assert [j['type'] for j in d['joints']] == ['revolute', 'revolute']
assert [j['coordinates'] for j in d['joints']] == [['theta1'], ['theta2']]
assert sorted(p['name'] for p in d['points']) == ['body1.P', 'body1.pivot', 'body2.Q', 'body2.pivot']
assert d['q0'] == [0.5, 0.5] and d['qd0'] == [0.0, 0.0]
p = {x['name']: x for x in d['parameter_details']}
assert p['L1']['value'] == 1.0 and p['L1']['lower'] == 0.1 and p['L1']['upper'] == 10.0
"

# ---------------------------------------------------------------- kinematics
run kinematics "$PENDULUM"
expect 0 "kinematics (text, default state)"
stdout_has '^body body2' "kinematics text names the bodies"
stdout_has '^point body2\.Q' "kinematics text names the points"
stdout_has 'kinetic' "kinematics text prints the energies"
run kinematics "$PENDULUM" --q 0.3,-0.4 --qd 1,2 --qdd 0.5,-1 --json
expect 0 "kinematics --json"
cp "$OUT" "$TMP/pend_kin.json"
# Closed form: P = L1 (sin q1, -cos q1), Q = P + L2 (sin(q1+q2), -cos(q1+q2)).
pycheck "$TMP/pend_kin.json" "kinematics of the double pendulum (closed form)" "
q1, q2, u1, u2 = 0.3, -0.4, 1.0, 2.0
pts = {p['name']: p for p in d['points']}
P = [math.sin(q1), -math.cos(q1), 0]
Q = [P[0] + math.sin(q1 + q2), P[1] - math.cos(q1 + q2), 0]
vQ = [math.cos(q1) * u1 + math.cos(q1 + q2) * (u1 + u2), math.sin(q1) * u1 + math.sin(q1 + q2) * (u1 + u2), 0]
close = lambda a, b: all(abs(x - y) < 1e-12 for x, y in zip(a, b))
assert close(pts['body1.P']['r'], P), pts['body1.P']['r']
assert close(pts['body2.Q']['r'], Q), pts['body2.Q']['r']
assert close(pts['body2.Q']['v'], vQ), pts['body2.Q']['v']
assert close(pts['body2.pivot']['r'], P)
b = {x['name']: x for x in d['bodies']}
assert close(b['body2']['omega'], [0, 0, u1 + u2])
assert close(b['body2']['alpha'], [0, 0, -0.5])
V = 9.81 * (P[1] + Q[1])
T = 0.5 * (u1 ** 2 + vQ[0] ** 2 + vQ[1] ** 2)
assert abs(d['potential_energy'] - V) < 1e-12, (d['potential_energy'], V)
assert abs(d['kinetic_energy'] - T) < 1e-12, (d['kinetic_energy'], T)
assert d['q'] == [0.3, -0.4] and d['coordinates'] == ['theta1', 'theta2']
"
# --jacobian / --com: the closed form of the double pendulum (J columns at
# Q, J-dot v = the acceleration of Q at qdd = 0, J_G = (J_P + J_Q)/2); the
# round-off of a few operations on numbers of order 1 (1e-12 as above).
run kinematics "$PENDULUM" --q 0.3,-0.4 --qd 1,2 --jacobian body2 --point 0,-1,0 --com --json
expect 0 "kinematics --jacobian --com --json"
cp "$OUT" "$TMP/pend_jac.json"
pycheck "$TMP/pend_jac.json" "frame Jacobian and centre of mass of the double pendulum (closed form)" "
q1, q2, u1, u2 = 0.3, -0.4, 1.0, 2.0
s1, c1, s12, c12 = math.sin(q1), math.cos(q1), math.sin(q1 + q2), math.cos(q1 + q2)
close = lambda a, b: all(abs(x - y) < 1e-12 for x, y in zip(a, b))
J = d['jacobian']['J']
assert close(J[0], [c1 + c12, c12]) and close(J[1], [s1 + s12, s12]) and close(J[5], [1, 1]), J
w1, w12 = u1, u1 + u2
assert close(d['jacobian']['Jdot_v'], [-s1 * w1**2 - s12 * w12**2, c1 * w1**2 + c12 * w12**2, 0, 0, 0, 0])
JG = d['com']['J_G']
assert close(JG[0], [c1 + c12 / 2, c12 / 2]) and close(JG[1], [s1 + s12 / 2, s12 / 2]), JG
assert close(d['com']['r_G'], [(2 * s1 + s12) / 2, (-2 * c1 - c12) / 2, 0])
assert d['jacobian']['axes'] == 'world' and d['jacobian']['body'] == 'body2'
"
run kinematics "$PENDULUM" --jacobian body2 --axes local
expect 0 "kinematics --jacobian --axes local"
stdout_has 'local axes' "--axes local is reported"
run kinematics "$PENDULUM" --jacobian body9; expect 2 "unknown --jacobian body"
stderr_has "no body 'body9'" "the unknown body is named"; stderr_has '^  body1$' "the bodies are listed"
run kinematics "$PENDULUM" --jacobian body2 --axes lokal; expect 2 "unknown --axes"
stderr_has 'world or local' "--axes lists its values"
run kinematics "$PENDULUM" --jacobian body2 --point 1,2; expect 2 "--point with 2 numbers"
run kinematics "$PENDULUM" --jacobian body2 --point 1,x,2; expect 2 "--point not a number"
run kinematics "$PENDULUM" --point 1,2,3; expect 2 "--point without --jacobian"
stderr_has 'needs --jacobian' "--point without --jacobian is explained"
# --ref only selects the formulation: results agree.
for ref in origin joint; do
    run kinematics "$PENDULUM" --q 0.3,-0.4 --qd 1,2 --qdd 0.5,-1 --ref "$ref" --json
    expect 0 "kinematics --ref $ref"
    cp "$OUT" "$TMP/pend_kin_$ref.json"
    pycheck "$TMP/pend_kin_$ref.json" "kinematics --ref $ref agrees with --ref com" "
e = json.load(open('$TMP/pend_kin.json'))
assert d['ref'] == '$ref'
for a, b in zip(d['points'], e['points']):
    for k in ('r', 'v', 'a'):
        assert all(abs(x - y) < 1e-10 for x, y in zip(a[k], b[k])), (a['name'], k)
assert abs(d['kinetic_energy'] - e['kinetic_energy']) < 1e-10
"
done
# Generated chain: joints connect linkK-1.tip to linkK.base.
for f in "$TMP/chain_spherical_7_yes.json" "$TMP/chain_revolute_7_no.json" "$TMP/chain_cardan_7_no.json"; do
    run kinematics "$f" --json
    expect 0 "kinematics --json on $(basename "$f")"
    cp "$OUT" "$TMP/chain_kin.json"
    pycheck "$TMP/chain_kin.json" "kinematics of $(basename "$f"): joints connect the links" "
pts = {p['name']: p for p in d['points']}
assert len(d['bodies']) == 7 and len(pts) == 14
for k in range(2, 8):
    a, b = pts['link%d.tip' % (k - 1)], pts['link%d.base' % k]
    for key in ('r', 'v', 'a'):
        assert all(abs(x - y) < 1e-10 for x, y in zip(a[key], b[key])), (k, key)
assert d['kinetic_energy'] > 0
for b in d['bodies']:
    A = b['A']
    for i in range(3):
        for j in range(3):
            s = sum(A[i][k] * A[j][k] for k in range(3))
            assert abs(s - (i == j)) < 1e-12
"
done

# The generated chain is spatial; a floating base starts at [0.1, -0.2, 1.0].
run kinematics "$TMP/chain_revolute_7_no.json" --json
cp "$OUT" "$TMP/chain_kin.json"
pycheck "$TMP/chain_kin.json" "generated revolute chain is spatial" "
r = [p['r'] for p in d['points']]
assert max(abs(x[1]) for x in r) > 1e-2 and max(abs(x[2]) for x in r) > 1e-2
"
run kinematics "$TMP/chain_cardan_7_yes.json" --json
cp "$OUT" "$TMP/chain_kin.json"
pycheck "$TMP/chain_kin.json" "floating base starts at [0.1, -0.2, 1.0]" "
p = {x['name']: x for x in d['points']}
assert all(abs(a - b) < 1e-12 for a, b in zip(p['link1.base']['r'], [0.1, -0.2, 1.0]))
A = d['bodies'][0]['A']
assert all(abs(A[i][j] - (i == j)) < 1e-12 for i in range(3) for j in range(3))
"

# ---------------------------------------------------------------- inverse
# Static torques of the double pendulum (qd = qdd = 0), see tests/sh/install.sh.
run inverse "$PENDULUM" --q 0.5,0.5 --qd 0,0 --qdd 0,0 --json
expect 0 "inverse --json"
cp "$OUT" "$TMP/pend_inv.json"
pycheck "$TMP/pend_inv.json" "inverse: static torques of the double pendulum" "
g, q1, q2 = 9.81, 0.5, 0.5
t2 = g * math.sin(q1 + q2)
t1 = g * (math.sin(q1) + math.sin(q1) + math.sin(q1 + q2))
assert d['coordinates'] == ['theta1', 'theta2']
assert d['model'] == 'double_pendulum'
assert abs(d['tau'][0] - t1) < 1e-10 and abs(d['tau'][1] - t2) < 1e-10, d['tau']
"
run inverse "$PENDULUM"
expect 0 "inverse (text, default state)"
stdout_has '^theta2 +[-+ ]?[0-9]' "inverse text prints tau per coordinate"
for f in "$TMP"/chain_*_256_*.json "$TMP"/chain_*_7_*.json; do
    run info "$f" --json
    nq=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["n_coordinates"])' <"$OUT")
    run inverse "$f" --json
    expect 0 "inverse --json on $(basename "$f")"
    cp "$OUT" "$TMP/chain_inv.json"
    pycheck "$TMP/chain_inv.json" "inverse on $(basename "$f"): $nq tau values" "
assert len(d['tau']) == $nq and len(d['coordinates']) == $nq
assert all(isinstance(x, (int, float)) and math.isfinite(x) for x in d['tau'])
"
done

# --ref selects the formulation only: tau agrees on a spatial chain.
f=$TMP/chain_spherical_7_yes.json
for ref in com origin joint; do
    run inverse "$f" --qdd "$(python3 -c 'print(",".join(str(0.1 * ((k % 5) - 2)) for k in range(31)))')" --ref "$ref" --json
    expect 0 "inverse --ref $ref on $(basename "$f")"
    cp "$OUT" "$TMP/inv_$ref.json"
done
pycheck "$TMP/inv_com.json" "inverse: tau independent of --ref" "
for ref in ('origin', 'joint'):
    e = json.load(open('$TMP/inv_' + ref + '.json'))
    s = max(1.0, max(abs(x) for x in d['tau']))
    err = max(abs(a - b) for a, b in zip(d['tau'], e['tau'])) / s
    assert err < 1e-9, (ref, err)
"

# ---------------------------------------------------------------- value lists
run inverse "$PENDULUM" --q 0.1,0.2,0.3
expect 2 "wrong --q length"
stderr_has '--q.*expected 2.*got 3' "wrong --q length: expected vs got"
stderr_has 'theta1.*theta2' "wrong --q length lists the coordinate names"
stdout_empty "wrong --q length"
run kinematics "$PENDULUM" --qd 0.1
expect 2 "short --qd"
stderr_has '--qd.*expected 2.*got 1' "short --qd: expected vs got"
run kinematics "$PENDULUM" --qdd 0.1,abc
expect 2 "non-numeric --qdd"
stderr_has "--qdd.*'abc'" "non-numeric value: option and token named"
stdout_empty "non-numeric --qdd"
run kinematics "$PENDULUM" --q 0.1,,0.2
expect 2 "empty value in --q"
run kinematics "$PENDULUM" --q nan,0
expect 2 "nan in --q"
run kinematics "$PENDULUM" --q=-0.1,0.2 --qd -1,-2
expect 0 "negative values and --opt=value"

# ---------------------------------------------------------------- load errors
printf '{\n  "name": "broken",\n  "bodies": [ ,\n}\n' >"$TMP/broken.json"
run info "$TMP/broken.json"
expect 1 "syntax error in the model"
stderr_has 'broken\.json:[0-9]+:[0-9]+' "syntax error message has file:line:col"
stdout_empty "syntax error"
run kinematics "$TMP/broken.json" --json
expect 1 "kinematics on a broken model"
stdout_empty "kinematics on a broken model"
run info "$TMP/no_such_model.json"
expect 1 "missing model file"
stderr_has 'no_such_model\.json' "missing model file is named"
printf '{ "bodies": [ { "name": "b", "mass": -1 } ],\n  "joints": [ { "name": "j", "type": "revolute", "parent": "ground", "child": "b" } ] }\n' >"$TMP/invalid.json"
run info "$TMP/invalid.json"
expect 1 "invalid model (negative mass)"
stderr_has 'invalid\.json' "invalid model message names the file"

# ---------------------------------------------------------------- numerical errors
# Euler parameters that are not normalized.
f=$TMP/chain_spherical_2_no.json
run kinematics "$f" --q 1,1,1,1,1,0,0,0 --qd 0,0,0,0,0,0,0,0
expect 1 "kinematics with non-normalized Euler parameters"
if [ -s "$ERR" ]; then ok "numerical failure prints a message"; else ko "numerical failure printed nothing"; fi
stdout_empty "kinematics with non-normalized Euler parameters"
run inverse "$f" --q 2,0,0,0,1,0,0,0 --qd 0,0,0,0,0,0,0,0 --json
expect 1 "inverse with non-normalized Euler parameters"
stdout_empty "inverse with non-normalized Euler parameters"
run inverse "$f" --q 1,0,0,0,1,0,0,0 --qd 0,0,0,0,0,0,0,0 --json
expect 0 "inverse with normalized Euler parameters"

# ---------------------------------------------------------------- nq != nv
# A floating base and a ball joint with tangent velocities: 11 coordinates,
# 9 velocities; --qd/--qdd are per velocity, the outputs name the velocities.
T=$TMP/tchain.json
run generate chain --n 2 --joint spherical --floating --velocities tangent -o "$T"
expect 0 "generate chain --velocities tangent"
run info "$T"
expect 0 "info on a tangent model"
stdout_has '^coordinates  11$' "info: nq"
stdout_has '^velocities   9$' "info: nv"
stdout_has '^  j1 +tangent +j1\.vx j1\.vy j1\.vz j1\.wx j1\.wy j1\.wz$' "info: the floating joint's convention and velocities"
stdout_has '^  j2 +tangent +j2\.wx j2\.wy j2\.wz$' "info: the ball joint's convention and velocities"
run info "$T" --json
expect 0 "info --json on a tangent model"
cp "$OUT" "$TMP/tinfo.json"
pycheck "$TMP/tinfo.json" "info --json: n_velocities, velocities, v0, joint conventions" '
assert d["n_coordinates"] == 11 and d["n_velocities"] == 9
assert d["velocities"][:3] == ["j1.vx", "j1.vy", "j1.vz"] and d["velocities"][-1] == "j2.wz"
assert len(d["v0"]) == 9 and len(d["qd0"]) == 11
assert [j["velocities"] for j in d["joints"]] == ["tangent", "tangent"]
assert d["joints"][1]["velocity_names"] == ["j2.wx", "j2.wy", "j2.wz"]'
run info "$PENDULUM" --json
cp "$OUT" "$TMP/pinfo.json"
pycheck "$TMP/pinfo.json" "info --json of an Euler-rate model: no velocity members" '
assert "n_velocities" not in d and "v0" not in d and "velocity_names" not in d["joints"][0]'
run info "$PENDULUM"
stdout_has '^velocities   2$' "info text: nv of an Euler-rate model"
run generate chain --n 2 --joint spherical --floating -o "$TMP/echain.json"
run info "$TMP/echain.json"
stdout_has '^  j2 +euler_rates +j2\.e0 j2\.e1 j2\.e2 j2\.e3$' "info: an Euler-rate ball joint's convention"

run kinematics "$T" --qd 0,0,0,0,0,0,0,0,0,0,0
expect 2 "--qd sized nq on a tangent model"
stderr_has '--qd: expected 9 values \(one per velocity\), got 11' "--qd counts velocities"
stderr_has '^  velocities: j1\.vx, j1\.vy, j1\.vz, j1\.wx, j1\.wy, j1\.wz, j2\.wx, j2\.wy, j2\.wz$' "--qd lists the velocity names"
stdout_empty "--qd sized nq"
run kinematics "$T" --qdd 1,2
expect 2 "short --qdd on a tangent model"
stderr_has '--qdd: expected 9 values \(one per velocity\), got 2' "--qdd counts velocities"
run kinematics "$T" --q 0,0,0,1,0,0,0,1,0,0
expect 2 "--q counts coordinates on a tangent model"
stderr_has '--q: expected 11 values \(one per coordinate\), got 10' "--q: one per coordinate"
stderr_has '^  coordinates: j1\.x,' "--q lists the coordinate names"

# J v = [v_P; w] with v the tangent velocities: the point link2.tip.
V=0.1,-0.2,0.3,0.4,-0.5,0.6,-0.7,0.8,0.9
run kinematics "$T" --qd "$V" --json
expect 0 "kinematics --json with tangent velocities"
cp "$OUT" "$TMP/tkin.json"
pycheck "$TMP/tkin.json" "kinematics --json: velocities named, qd sized nv" '
assert len(d["velocities"]) == 9 and len(d["qd"]) == 9 and len(d["q"]) == 11'
run kinematics "$T" --qd "$V" --jacobian link2 --point 0.3,0,0 --json
expect 0 "kinematics --jacobian on a tangent model"
cp "$OUT" "$TMP/tjac.json"
pycheck "$TMP/tjac.json" "J v = [v_P; omega] with tangent velocities" '
k = json.load(open(sys.argv[1].replace("tjac", "tkin")))
v = [0.1, -0.2, 0.3, 0.4, -0.5, 0.6, -0.7, 0.8, 0.9]
J = d["jacobian"]["J"]
assert d["velocities"] == k["velocities"] and all(len(r) == 9 for r in J)
Jv = [sum(a * b for a, b in zip(r, v)) for r in J]
p = [x for x in k["points"] if x["name"] == "link2.tip"][0]
b = [x for x in k["bodies"] if x["name"] == "link2"][0]
ref = p["v"] + b["omega"]
# round-off of a few products of unit rotations, 0.3 m arms and O(1) velocities
assert max(abs(a - c) for a, c in zip(Jv, ref)) <= 1e-14, (Jv, ref)'
run kinematics "$T" --jacobian link2 --point 0.3,0
expect 2 "--point with two numbers"
stderr_has '^mbsens kinematics: error: --point: expected 3 values, got 2$' "--point: three numbers, no coordinate talk"
run inverse "$T" --qd "$V" --json
expect 0 "inverse on a tangent model"
cp "$OUT" "$TMP/tinv.json"
pycheck "$TMP/tinv.json" "inverse --json: tau per velocity, velocities named" '
assert len(d["tau"]) == 9 and d["velocities"][3:6] == ["j1.wx", "j1.wy", "j1.wz"]'
run simulate "$T" --tf 0.01 --out "$TMP/tsim.csv"
expect 0 "simulate steps on the manifold"
run simulate "$T" --integrator cvodes --tf 0.01
expect 1 "cvodes refuses tangent velocities until it steps on the manifold"
stderr_has "tangent velocities" "cvodes: the refusal names the convention"

# convert --velocities both ways: the Euler-rate model comes back.
run convert "$TMP/echain.json" --velocities tangent -o "$TMP/c_t.json"
expect 0 "convert --velocities tangent"
run convert "$TMP/c_t.json" --velocities euler-rates -o "$TMP/c_e.json"
expect 0 "convert --velocities euler-rates"
run info "$TMP/c_t.json" --json
cp "$OUT" "$TMP/c_t_info.json"
pycheck "$TMP/c_t_info.json" "convert --velocities tangent: nv = nq - 2" '
assert d["n_coordinates"] == 11 and d["n_velocities"] == 9'
run info "$TMP/echain.json" --json
cp "$OUT" "$TMP/e_info.json"
run info "$TMP/c_e.json" --json
cp "$OUT" "$TMP/c_e_info.json"
pycheck "$TMP/c_e_info.json" "convert tangent then euler-rates gives the model back" '
a = json.load(open(sys.argv[1].replace("c_e_info", "e_info")))
assert "n_velocities" not in d and a["q0"] == d["q0"]
# qd0 through T^+ and back (p.pdot = 0 in the generated state): a few
# roundings of O(1) products, 1e-15
assert max(abs(x - y) for x, y in zip(a["qd0"], d["qd0"])) <= 1e-15'
run convert "$TMP/echain.json" --velocities sideways
expect 2 "convert --velocities: unknown value"
stderr_has "--velocities: unknown value 'sideways' \(expected tangent or euler-rates\)" "convert --velocities: the values named"
run generate chain --n 2 --joint revolute --velocities angular
expect 2 "generate --velocities: unknown value"
stdout_empty "generate --velocities: unknown value"
run generate chain --n 2 --joint spherical --velocities euler-rates -o "$TMP/g_e.json"
expect 0 "generate --velocities euler-rates"
run generate chain --n 2 --joint spherical -o "$TMP/g_d.json"
if cmp -s "$TMP/g_e.json" "$TMP/g_d.json"; then ok "generate --velocities euler-rates is the default file"; else ko "generate --velocities euler-rates differs from the default"; fi

finish
