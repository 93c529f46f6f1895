#!/bin/sh
# Command-line test: `mbsens simulate` (docs/cli.md).
#
# Checks the CSV (header names and order, row count, first row = initial
# state, output columns of the model's "outputs" section, last time = tf),
# the model's "simulation" section as defaults and options overriding it,
# the three integrators agreeing on the final state, the summary on stderr,
# usage errors (exit 2, no file), and that a failing run (non-convergence,
# CVODES failure, unwritable destination) exits 1 with the time in the
# message and leaves neither the file nor a temporary file behind, and an
# existing file untouched.
#
# Environment (set by CTest): MBS_CLI (the mbsens executable), MBS_SOURCE_DIR.
# Ends with "simulate: N passed, M failed"; the exit status is non-zero on failure.
SUITE=simulate
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
PENDULUM=$MBS_SOURCE_DIR/models/double_pendulum.json
need_python

dir_is() {
    left=$(ls -A "$1" | tr '\n' ' ')
    if [ "$left" = "$2" ]; then ok "$3"; else ko "$3: directory holds '$left', expected '$2'"; fi
}
# pycsv FILE DESCRIPTION CODE: python CODE with rows = list of dicts, head = header
pycsv() {
    _f=$1 _d=$2
    shift 2
    if python3 - "$_f" "$*" >"$TMP/py.log" 2>&1 <<'EOF'
import csv, math, sys
with open(sys.argv[1]) as fh:
    r = list(csv.reader(fh))
head = r[0]
rows = [dict(zip(head, map(float, x))) for x in r[1:]]
assert all(len(x) == len(head) for x in r), "ragged rows"
exec(sys.argv[2])
EOF
    then ok "$_d"; else ko "$_d"; sed 's/^/    /' "$TMP/py.log" | tail -n 5; fi
}

# ---------------------------------------------------------------- help
run simulate --help;  expect 0 "simulate --help"
grep -q '^Usage: mbsens simulate' "$OUT" && ok "usage on stdout" || ko "usage on stdout"
run help simulate;    expect 0 "help simulate"
run --help;           grep -q 'simulate' "$OUT" && ok "simulate listed in mbsens --help" || ko "simulate not listed"

# ---------------------------------------------------------------- CSV to a file
mkdir "$TMP/w"
run simulate "$PENDULUM" --tf 0.5 --dt 0.01 --out "$TMP/w/traj.csv"
expect 0 "simulate --out"
stdout_empty "simulate --out"
dir_is "$TMP/w" "traj.csv " "only the CSV is left"
pycsv "$TMP/w/traj.csv" "header: t, coordinates, velocities, accelerations" \
    'assert head == ["t", "theta1", "theta2", "theta1.qd", "theta2.qd", "theta1.qdd", "theta2.qdd"], head'
pycsv "$TMP/w/traj.csv" "51 rows at t = 0, 0.01, ..., 0.5" \
    'assert len(rows) == 51, len(rows); assert all(abs(x["t"] - 0.01 * i) < 1e-12 for i, x in enumerate(rows)); assert rows[-1]["t"] == 0.5'
pycsv "$TMP/w/traj.csv" "first row is the model's initial state and its accelerations" \
    'x = rows[0]; assert (x["theta1"], x["theta2"], x["theta1.qd"], x["theta2.qd"]) == (0.5, 0.5, 0, 0); assert abs(x["theta1.qdd"] + 1.757967165173149) < 1e-12, x'
pycsv "$TMP/w/traj.csv" "energy is conserved along the rows (trapezoidal, h = 0.01)" '
g = 9.81
def E(x):
    q1, q2, w1, w2 = x["theta1"], x["theta2"], x["theta1.qd"], x["theta2.qd"]
    T = 0.5 * (5 * w1 * w1 + 2 * 2 * w1 * w2 + w2 * w2) + 0 * q2
    T = 0.5 * ((2 + 1 + 2 * math.cos(q2)) * w1 * w1 + 2 * (1 + math.cos(q2)) * w1 * w2 + w2 * w2)
    U = -g * (2 * math.cos(q1) + math.cos(q1 + q2))
    return T + U
e0 = E(rows[0]); assert max(abs(E(x) - e0) for x in rows) < 2e-3 * abs(e0)'
stderr_has '^mbsens simulate: double_pendulum, trapezoidal \(newton\)' "summary names the model and method"
stderr_has 'steps +50 \(51 output rows\)' "summary: steps and rows"
stderr_has 'iterations +mean [0-9.]+, max [0-9]+ per step' "summary: Newton iterations"
stderr_has 'energy drift +[0-9.e+-]+' "summary: energy drift"
stderr_has 'Euler drift +0\.000e\+00' "summary: Euler drift"
stderr_has 'wall time +[0-9.]+ s' "summary: wall time"

# the same run on stdout gives the same bytes; --quiet prints no summary
run simulate "$PENDULUM" --tf 0.5 --dt 0.01 -q
expect 0 "simulate to stdout"
cmp -s "$OUT" "$TMP/w/traj.csv" && ok "stdout CSV = file CSV" || ko "stdout CSV differs from the file"
[ ! -s "$ERR" ] && ok "--quiet: nothing on stderr" || ko "--quiet printed on stderr"

# an existing file is replaced
echo "old" > "$TMP/w/old.csv"
run simulate "$PENDULUM" --tf 0.1 --dt 0.05 --out "$TMP/w/old.csv" -q
expect 0 "simulate over an existing file"
[ "$(wc -l < "$TMP/w/old.csv")" -eq 4 ] && ok "existing file replaced (header + 3 rows)" || ko "existing file not replaced"

# ---------------------------------------------------------------- integrators agree
for integ in trapezoidal rk4 cvodes; do
    run simulate "$PENDULUM" --integrator "$integ" --dt 0.001 --tf 1 --rtol 1e-10 --atol 1e-12 -q --out "$TMP/w/$integ.csv"
    expect 0 "simulate --integrator $integ"
done
run simulate "$PENDULUM" --integrator trapezoidal --solver fixedpoint --formulation semi --ref origin --dt 0.001 --tf 1 -q --out "$TMP/w/fp.csv"
expect 0 "simulate --solver fixedpoint --formulation semi --ref origin"
run simulate "$PENDULUM" --tangent analytic --tangent-update step --dt 0.001 --tf 1 --out "$TMP/w/an.csv"
expect 0 "simulate --tangent analytic --tangent-update step"
stderr_has 'per step \(newton, tangent analytic once per step\)' "summary names the tangent"
if python3 - "$TMP/w" >"$TMP/py.log" 2>&1 <<'EOF'
import csv, sys
d = sys.argv[1]
last = {}
for n in ("trapezoidal", "rk4", "cvodes", "fp", "an"):
    with open(f"{d}/{n}.csv") as fh:
        r = list(csv.reader(fh))
    assert len(r) == 1002, (n, len(r))
    last[n] = list(map(float, r[-1][1:5]))
def dist(a, b): return max(abs(x - y) for x, y in zip(last[a], last[b]))
# trapezoidal error at h = 1e-3 over 1 s is ~1e-5 (test_integrators); rk4 and cvodes ~1e-9
assert dist("rk4", "cvodes") < 1e-7, dist("rk4", "cvodes")
assert dist("trapezoidal", "rk4") < 1e-4, dist("trapezoidal", "rk4")
assert dist("trapezoidal", "fp") < 1e-9, dist("trapezoidal", "fp")
assert dist("trapezoidal", "an") < 1e-9, dist("trapezoidal", "an")
EOF
then ok "trapezoidal, fixed point, rk4 and cvodes agree"; else ko "integrators disagree"; sed 's/^/    /' "$TMP/py.log"; fi

# ---------------------------------------------------------------- model sections
cat > "$TMP/sec.json" <<'EOF'
{ "name": "sections", "gravity": [0, -9.81, 0],
  "bodies": [ { "name": "bob", "mass": 2, "com": [0, -1, 0], "points": { "tip": [0, -1, 0] } } ],
  "joints": [ { "name": "theta", "type": "revolute", "parent": "ground", "child": "bob",
                "axis": [0, 0, 1], "q0": [0.3], "qd0": [0] } ],
  "simulation": { "integrator": "rk4", "dt": 0.02, "tf": 0.2 },
  "outputs": [ { "point": "bob.tip", "quantities": ["position", "velocity"] }, "energy" ] }
EOF
run simulate "$TMP/sec.json" --out "$TMP/w/sec.csv"
expect 0 "simulate with a simulation section"
stderr_has 'rk4, formulation fr, ref com, dt 0.02, t = 0 .. 0.2' "defaults from the simulation section"
pycsv "$TMP/w/sec.csv" "output columns after the state, 11 rows" '
assert head == ["t", "theta", "theta.qd", "theta.qdd", "bob.tip.x", "bob.tip.y", "bob.tip.z", "bob.tip.vx", "bob.tip.vy", "bob.tip.vz", "kinetic_energy", "potential_energy", "elastic_energy", "energy"], head
assert len(rows) == 11
for x in rows:
    q, w = x["theta"], x["theta.qd"]
    assert abs(x["bob.tip.x"] - math.sin(q)) < 1e-14 and abs(x["bob.tip.y"] + math.cos(q)) < 1e-14
    assert abs(x["bob.tip.vx"] - w * math.cos(q)) < 1e-13 and abs(x["bob.tip.vy"] - w * math.sin(q)) < 1e-13
    assert abs(x["kinetic_energy"] - w * w) < 1e-13 and abs(x["potential_energy"] + 2 * 9.81 * math.cos(q)) < 1e-12
    assert x["elastic_energy"] == 0 and abs(x["energy"] - x["kinetic_energy"] - x["potential_energy"]) < 1e-13'
run simulate "$TMP/sec.json" --integrator trapezoidal --dt 0.05 -q --out "$TMP/w/sec2.csv"
expect 0 "options override the section"
[ "$(wc -l < "$TMP/w/sec2.csv")" -eq 6 ] && ok "--dt 0.05 over tf 0.2 from the section: 5 rows" || ko "override rows"

# ---------------------------------------------------------------- usage errors: exit 2, no file
mkdir "$TMP/u"
for bad in "--dt 0" "--dt -1" "--dt abc" "--tf nan" "--integrator euler" "--solver gauss" "--formulation abc" \
           "--ref middle" "--rtol 0" "--max-iterations 0" "--max-iterations 2.5" "--cvodes-method rk" "--bogus" \
           "--tangent exact" "--tangent-update never"; do
    # shellcheck disable=SC2086
    run simulate "$PENDULUM" $bad --out "$TMP/u/x.csv"
    expect 2 "simulate $bad"
    stdout_empty "simulate $bad"
done
run simulate "$PENDULUM" --out; expect 2 "--out without a file"
stderr_has "needs a value" "missing --out value is reported"
run simulate --dt 0.1;            expect 2 "simulate without MODEL"
run simulate "$PENDULUM" --tf -1; expect 2 "tf < 0"; stderr_has 'tf' "tf is named"
dir_is "$TMP/u" "" "usage errors leave no file"

# ---------------------------------------------------------------- failing runs: exit 1, no file
echo "keep me" > "$TMP/u/keep.csv"
run simulate "$PENDULUM" --dt 0.001 --tf 1 --max-iterations 1 --out "$TMP/u/keep.csv"
expect 1 "non-convergence"
stderr_has 'trapezoidal rule \(newton\): no convergence at t = 0\.00[0-9]+ \(step from t = [0-9.]+, h = 0\.001\) after 1 iteration' "non-convergence names the time"
stdout_empty "non-convergence"
[ "$(cat "$TMP/u/keep.csv")" = "keep me" ] && ok "existing file untouched by a failing run" || ko "existing file changed"
run simulate "$PENDULUM" --dt 0.5 --tf 2 --solver fixedpoint --out "$TMP/u/fp.csv"
expect 1 "fixed point with a too large step"
stderr_has 'fixedpoint\): .*at t = 0\.5 \(step from t = 0, h = 0\.5\)' "fixed-point failure names the time"
run simulate "$PENDULUM" --integrator cvodes --dt 1 --tf 2 --rtol 1e-300 --atol 1e-300 --out "$TMP/u/cv.csv"
expect 1 "cvodes failure"
stderr_has 'cvodes \(bdf\): .* at t = ' "cvodes failure names the time"
dir_is "$TMP/u" "keep.csv " "failing runs leave no file and no temporary file"
run simulate "$PENDULUM" --dt 0.001 --tf 1 --max-iterations 1
expect 1 "non-convergence to stdout"
stdout_empty "non-convergence to stdout"

# unwritable destinations
run simulate "$PENDULUM" --tf 0.01 --out "$TMP/no/such/dir/x.csv"
expect 1 "--out into a missing directory"; stderr_has "cannot create" "missing directory is reported"
mkdir "$TMP/u/adir"
run simulate "$PENDULUM" --tf 0.01 --out "$TMP/u/adir"
expect 1 "--out onto a directory"
dir_is "$TMP/u" "adir keep.csv " "no temporary file after a failed rename"
if [ -w /dev/full ]; then
    "$CLI" simulate "$PENDULUM" --tf 0.1 -q >/dev/full 2>"$ERR"; rc=$?
    expect 1 "stdout on a full device"
fi

# ---------------------------------------------------------------- Euler parameters
"$CLI" generate chain --n 3 --joint spherical --floating -o "$TMP/chain.json" || ko "generate"
run simulate "$TMP/chain.json" --tf 0.05 --dt 0.005 --out "$TMP/w/chain.csv"
expect 0 "simulate a floating spherical chain"
stderr_has 'Euler drift +[1-9][0-9.]*e-[0-9]+ \(max \|\|p\| - 1\| before projection\)' "Euler drift reported"
pycsv "$TMP/w/chain.csv" "Euler parameters normalized in the CSV" '
for x in rows:
    for j in ("j1", "j2", "j3"):
        n = sum(x[f"{j}.e{k}"] ** 2 for k in range(4))
        assert abs(n - 1) < 1e-14, (j, n)'

# ---------------------------------------------------------------- tangent velocities
# a top on a ball joint whose velocity is its angular velocity: rk4 and the
# trapezoidal rule (analytic and fd Newton tangents, fixed point) step on
# the manifold; cvodes refuses it, naming what is missing
cat >"$TMP/top.json" <<'END'
{ "name": "top", "velocities": "tangent",
  "bodies": [ { "name": "top", "mass": 1, "com": [0, 0, 0.3], "inertia": [0.02, 0.02, 0.01, 0, 0, 0] } ],
  "joints": [ { "name": "ball", "type": "spherical", "parent": "ground", "child": "top",
                "q0": [0.9950041652780258, 0.09983341664682815, 0, 0], "v0": [0, 0, 20] } ] }
END
run simulate "$TMP/top.json" --integrator rk4 --tf 0.5 --out "$TMP/w/top.csv"
expect 0 "rk4 on a tangent model"
stderr_has 'Euler drift +[0-9.]+e-1[45] \(max' "rk4: quaternion unit to round-off without projection"
pycsv "$TMP/w/top.csv" "rk4: velocity columns named by the velocities, quaternion unit" '
assert head[5:8] == ["ball.wx.qd", "ball.wy.qd", "ball.wz.qd"], head
for x in rows:
    n = sum(x[f"ball.e{k}"] ** 2 for k in range(4))
    assert abs(n - 1) < 1e-14, n'
run simulate "$TMP/top.json" --tangent fd --tf 0.5 --out "$TMP/w/top_trap.csv"
expect 0 "trapezoidal, fd tangent, on a tangent model"
run simulate "$TMP/top.json" --solver fixedpoint --tf 0.5 --out "$TMP/w/top_fp.csv"
expect 0 "trapezoidal, fixed point, on a tangent model"
run simulate "$TMP/top.json" --tf 0.5 --out "$TMP/w/top_an.csv"
expect 0 "trapezoidal, analytic tangent (the default), on a tangent model"
# the same equations solved to the Newton tolerance (1e-10 on the increment)
# at each of the 500 steps: the final states within 500 x 1e-10
pycsv "$TMP/w/top_an.csv" "analytic and fd Newton tangents: the same solution" '
with open(sys.argv[1].replace("top_an", "top_trap")) as fh:
    other = [list(map(float, x)) for x in list(csv.reader(fh))[1:]]
last = list(rows[-1].values())
assert len(other) == len(rows), (len(other), len(rows))
d = max(abs(a - b) for a, b in zip(last, other[-1]))
assert d < 500 * 1e-10, d'
run simulate "$TMP/top.json" --integrator cvodes --tf 0.5 --out "$TMP/w/top_cv.csv"
expect 1 "cvodes refused on a tangent model"
stderr_has "integrator cvodes .*joint 'ball' with tangent velocities" "the refusal names cvodes and the joint"

finish
