#!/bin/sh
# Command-line test: bad input gives a clear message and a non-zero exit,
# never a silent wrong result or a damaged file (docs/cli.md, "Exit
# status", "Output files", simulate "Output rows").
#
#   - time grids: tf/dt beyond MBS_SIM_MAX_STEPS (1e9) steps, for simulate
#     and sensitivity, instead of an overflowed count and "steps 0";
#   - output rows: --every / --output-dt, the rows streamed (the memory of
#     a long run does not grow with its rows), the spool's TMPDIR;
#   - non-finite results: inverse and kinematics at overflowing states
#     exit 1 naming the result, and large finite states still succeed;
#   - output files: devices and FIFOs written through, symbolic links kept,
#     the mode of a replaced file kept, the input model refused, the
#     temporary file removed on SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE;
#     for every command that writes files;
#   - model files: a URDF attribute with an entity reference, a directory
#     given as a model (one message, nothing printed by libxml2);
#   - a model with tangent velocities (docs/model-format.md): inverse
#     dynamics and the derivative check run, and the commands not yet
#     written for it (simulate with cvodes) exit non-zero naming the joint.
#
# Environment (set by CTest): MBS_CLI, MBS_SOURCE_DIR, MBS_SANITIZE.
SUITE=bad_input
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
SRC=$MBS_SOURCE_DIR
P=$SRC/models/double_pendulum.json
OBJ=$SRC/tests/models/double_pendulum_objectives.json
need_python

stderr_lines() {
    n=$(wc -l < "$ERR")
    if [ "$n" -eq "$1" ]; then ok "$2"; else ko "$2: $n lines on stderr"; sed 's/^/    stderr: /' "$ERR"; fi
}

# ---------------------------------------------------------------- time grids
run simulate "$P" --dt 1 --tf 1e19
expect 2 "simulate --dt 1 --tf 1e19"
stderr_has 't = 0 \.\. 1e\+19 with dt = 1 is 1e\+19 steps; at most 1e\+09 are allowed \(MBS_SIM_MAX_STEPS\)' \
    "1e19 steps: the count and the limit"
stdout_empty "simulate --dt 1 --tf 1e19"
run simulate "$P" --dt 1e-10 --tf 1e10
expect 2 "simulate --dt 1e-10 --tf 1e10"
stderr_has 'is 1e\+20 steps; at most 1e\+09' "1e20 steps refused"
for method in cavm davm ddm; do
    run sensitivity "$SRC/models/fivebar.json" --method $method --dt 1e-10 --history "$TMP/h.csv"
    expect 1 "sensitivity --method $method --dt 1e-10"
    stderr_has 'with dt = 1e-10 is 1e\+10 steps; at most 1e\+09 are allowed' "sensitivity $method: the limit"
done
[ ! -e "$TMP/h.csv" ] && ok "no history left" || ko "history written"

# ---------------------------------------------------------------- output rows
run simulate "$P" --tf 0.05 --dt 0.01 --every 2 -q
expect 0 "simulate --every 2"
[ "$(cut -d, -f1 "$OUT" | tr '\n' ' ')" = "t 0 0.02 0.04 0.05 " ] && ok "--every 2: t0, every 2 steps, and tf" ||
    ko "--every 2 rows: $(cut -d, -f1 "$OUT" | tr '\n' ' ')"
run simulate "$P" --tf 0.05 --dt 0.01 --output-dt 0.02 -q
expect 0 "simulate --output-dt 0.02"
[ "$(cut -d, -f1 "$OUT" | tr '\n' ' ')" = "t 0 0.02 0.04 0.05 " ] && ok "--output-dt 0.02 = --every 2" || ko "--output-dt rows"
run simulate "$P" --tf 0.05 --dt 0.01 --output-dt 0.015
expect 2 "--output-dt not a multiple of dt"
stderr_has '--output-dt 0.015 is not a whole multiple of the step dt = 0.01' "--output-dt message"
for bad in "--every 0" "--every 1.5" "--every -3" "--every 2 --output-dt 0.02" "--output-dt 0"; do
    # shellcheck disable=SC2086
    run simulate "$P" --tf 0.05 $bad
    expect 2 "simulate $bad"
    stdout_empty "simulate $bad"
done
run simulate "$P" --tf 0.02 --dt 0.01
stderr_has 'steps +2 \(3 output rows\)' "summary without --every"
run simulate "$P" --tf 0.05 --dt 0.01 --every 2
stderr_has 'steps +5 \(4 output rows, one every 2 dt\)' "summary with --every"
# without --out the rows go to an unnamed file in TMPDIR, copied at the end
TMPDIR=$TMP/no/such/dir run simulate "$P" --tf 0.01
expect 1 "simulate with an unusable TMPDIR"
stderr_has "cannot create a temporary file in '$TMP/no/such/dir' \(TMPDIR\)" "the spool's directory is named"
stdout_empty "simulate with an unusable TMPDIR"
# memory does not grow with the rows (it did: 130 bytes per row of the
# double pendulum, 26 MB for these 2e5); not under the sanitizers, whose
# allocator keeps freed memory
if [ "${MBS_SANITIZE:-OFF}" != ON ]; then
    if python3 - "$CLI" "$P" >"$TMP/py.log" 2>&1 <<'EOF'
import resource, subprocess, sys
cli, model = sys.argv[1], sys.argv[2]
def peak(tf):
    r = subprocess.run([sys.executable, "-c", "import resource,subprocess,sys;"
                        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True);"
                        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
                        cli, "simulate", model, "--integrator", "rk4", "--dt", "0.01", "--tf", tf, "-q"],
                       capture_output=True, text=True, check=True)
    return int(r.stdout)
small, big = peak("0.01"), peak("2000")   # 2 and 200001 rows
print("peak resident kB:", small, big)
assert big - small < 8000, (small, big)
EOF
    then ok "2e5 rows to stdout: resident memory grows < 8 MB"; else ko "memory grows with the rows"; sed 's/^/    /' "$TMP/py.log"; fi
fi

# ---------------------------------------------------------------- non-finite results
run inverse "$P" --q 1e308,1e308 --qd 1e308,1e308
expect 1 "inverse at an overflowing state"
stderr_has '^mbsens inverse: error: inverse dynamics: tau\[theta1\] is not finite \(-?nan\)' "inverse names tau[theta1]"
stdout_empty "inverse at an overflowing state"
run inverse "$P" --q 1e308,1e308 --qd 1e308,1e308 --json
expect 1 "inverse --json at an overflowing state"
stdout_empty "inverse --json (no null printed)"
run kinematics "$P" --qd 1e200,1e200
expect 1 "kinematics --qd 1e200,1e200"
stderr_has "kinematics: acceleration of body 'body1' is not finite" "kinematics names the body"
stdout_empty "kinematics --qd 1e200,1e200"
run kinematics "$P" --qd 1e100,1e100 --json
expect 0 "kinematics --qd 1e100 (large, finite)"
stdout_has '"kinetic_energy": [0-9.]+e\+200' "kinetic energy 1e200 printed"
run simulate "$P" --tf 0.01 -q
expect 0 "simulate (reference)"
cat > "$TMP/fast.json" <<'EOF'
{ "name": "fast", "gravity": [0, -9.81, 0],
  "bodies": [ { "name": "bob", "mass": 1, "com": [0, -1, 0] } ],
  "joints": [ { "name": "theta", "type": "revolute", "parent": "ground", "child": "bob",
                "axis": [0, 0, 1], "q0": [0.3], "qd0": [1e200] } ] }
EOF
run simulate "$TMP/fast.json" --tf 0.01 --out "$TMP/fast.csv"
expect 1 "simulate from an overflowing initial state"
stderr_has 'not finite' "simulate names the non-finite result"
[ ! -e "$TMP/fast.csv" ] && ok "no CSV" || ko "CSV written"

# ---------------------------------------------------------------- output files
# every command that writes a file, with its output option
write_cmd() {   # write_cmd N FILE [MODEL]: command N of the list below, writing FILE
    case $1 in 1|2|3) _m=${3:-$P} ;; *) _m=${3:-$OBJ} ;; esac
    case $1 in
    1) run generate chain --n 2 --joint revolute -o "$2" ;;
    2) run convert "$_m" -o "$2" ;;
    3) run simulate "$_m" --tf 0.01 -q --out "$2" ;;
    4) run sensitivity "$_m" --tf 0.01 --history "$2" ;;
    5) run optimize "$_m" --tf 0.05 --max-iter 1 -q --out "$2" ;;
    6) run optimize "$_m" --tf 0.05 --max-iter 1 -q --history "$2" ;;
    7) run optimize "$_m" --tf 0.05 --max-iter 1 -q --plot "$2" ;;
    8) run optimize "$_m" --tf 0.05 --max-iter 1 -q --model-out "$2" ;;
    esac
}
NAMES="x generate convert simulate sensitivity optimize--out optimize--history optimize--plot optimize--model-out"
name_of() { echo "$NAMES" | cut -d' ' -f$(($1 + 1)); }

mkdir "$TMP/o"
for k in 1 2 3 4 5 6 7 8; do
    n=$(name_of $k)
    # a character device is written to, not replaced
    write_cmd $k /dev/null
    expect 0 "$n onto /dev/null"
    [ -c /dev/null ] && ok "$n: /dev/null is still a character device" || ko "$n replaced /dev/null"
    # a FIFO is written to (a reader drains it)
    rm -f "$TMP/o/fifo" "$TMP/o/fifo.out"
    mkfifo "$TMP/o/fifo"
    cat "$TMP/o/fifo" > "$TMP/o/fifo.out" &
    reader=$!
    write_cmd $k "$TMP/o/fifo"
    # (a command that did not open the FIFO would leave the reader waiting)
    kill -0 $reader 2>/dev/null && timeout 5 sh -c ": > '$TMP/o/fifo'"
    wait $reader
    expect 0 "$n onto a FIFO"
    [ -p "$TMP/o/fifo" ] && ok "$n: the FIFO is still a FIFO" || ko "$n replaced the FIFO"
    [ -s "$TMP/o/fifo.out" ] && ok "$n: the reader got the output" || ko "$n: nothing through the FIFO"
    # a symbolic link stays a link; its destination is replaced, with its mode
    rm -f "$TMP/o/dest" "$TMP/o/link"
    echo old > "$TMP/o/dest"
    chmod 640 "$TMP/o/dest"
    ln -s dest "$TMP/o/link"
    write_cmd $k "$TMP/o/link"
    expect 0 "$n through a symbolic link"
    [ -L "$TMP/o/link" ] && ok "$n: the link is still a link" || ko "$n replaced the link"
    [ "$(cat "$TMP/o/dest")" != old ] && ok "$n: the destination was written" || ko "$n: destination unchanged"
    [ "$(stat -c %a "$TMP/o/dest")" = 640 ] && ok "$n: mode 640 kept" || ko "$n: mode $(stat -c %a "$TMP/o/dest")"
    # a dangling link: its destination is created
    rm -f "$TMP/o/dangling" "$TMP/o/created"
    ln -s created "$TMP/o/dangling"
    write_cmd $k "$TMP/o/dangling"
    expect 0 "$n through a dangling link"
    [ -L "$TMP/o/dangling" ] && [ -f "$TMP/o/created" ] && ok "$n: destination created, link kept" ||
        ko "$n: dangling link"
    # the input model itself, by name, through a link and through a hard link
    cp "$P" "$TMP/o/in.json"
    cp "$OBJ" "$TMP/o/obj.json"
    case $k in 1) continue ;; 4|5|6|7|8) IN=$TMP/o/obj.json ;; *) IN=$TMP/o/in.json ;; esac
    cksum < "$IN" > "$TMP/o/sum"
    ln -sf "$IN" "$TMP/o/inlink"
    rm -f "$TMP/o/inhard"; ln "$IN" "$TMP/o/inhard"
    for target in "$IN" "$TMP/o/inlink" "$TMP/o/inhard"; do
        write_cmd $k "$target" "$IN"
        expect 1 "$n onto its input model ($(basename "$target"))"
        stderr_has "cannot write '.*': it is the input model" "$n: the input model is named"
        stdout_empty "$n onto its input model"
    done
    cksum < "$IN" | cmp -s - "$TMP/o/sum" && ok "$n: the input model is untouched" || ko "$n changed its input"
    ls -A "$TMP/o" | grep -q '^\.' && ko "$n: temporary file left: $(ls -A "$TMP/o")" || ok "$n: no temporary file"
done
# a regular file keeps its mode; a directory is refused
echo old > "$TMP/o/reg.csv"
chmod 600 "$TMP/o/reg.csv"
run simulate "$P" --tf 0.01 -q --out "$TMP/o/reg.csv"
expect 0 "simulate over a mode-600 file"
[ "$(stat -c %a "$TMP/o/reg.csv")" = 600 ] && ok "mode 600 kept" || ko "mode $(stat -c %a "$TMP/o/reg.csv")"
run generate chain --n 2 --joint revolute -o "$TMP/o"
expect 1 "generate onto a directory"
stderr_has "cannot write '.*/o': Is a directory" "a directory is refused by name"

# signals: the temporary file is removed, an existing file untouched
if python3 - "$CLI" "$P" "$TMP/sig" >"$TMP/py.log" 2>&1 <<'EOF'
import os, resource, signal, subprocess, sys, time
cli, model, d = sys.argv[1], sys.argv[2], sys.argv[3]
os.mkdir(d)
for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGPIPE):
    with open(os.path.join(d, "keep.csv"), "w") as f:
        f.write("keep me\n")
    p = subprocess.Popen([cli, "simulate", model, "--tf", "1000", "-q", "--out", os.path.join(d, "keep.csv")],
                         preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)))
    t0 = time.time()
    while not [n for n in os.listdir(d) if n.startswith(".keep.csv.")]:
        assert time.time() - t0 < 60 and p.poll() is None, "no temporary file appeared"
        time.sleep(0.05)
    p.send_signal(sig)
    rc = p.wait(60)
    assert rc == -sig, (sig, rc)
    left = sorted(os.listdir(d))
    assert left == ["keep.csv"], (sig, left)
    assert open(os.path.join(d, "keep.csv")).read() == "keep me\n", sig
    print("ok", signal.Signals(sig).name)
EOF
then ok "SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE: temporary file removed, file untouched"
else ko "signals"; sed 's/^/    /' "$TMP/py.log"; fi

# ---------------------------------------------------------------- the examples of docs/cli.md, verbatim
stderr_is() {   # the first line of stderr, exactly
    if [ "$(head -n 1 "$ERR")" = "$1" ]; then ok "$2"; else
        ko "$2: stderr starts with '$(head -n 1 "$ERR")'"; fi
}
cd "$SRC" || ko "cd $SRC"
run inverse models/double_pendulum.json --q 1e308,1e308 --qd 1e308,1e308
expect 1 "docs: inverse at 1e308"
stderr_is "mbsens inverse: error: inverse dynamics: tau[theta1] is not finite (-nan)" "docs: inverse message"
run kinematics models/double_pendulum.json --qd 1e200,1e200
expect 1 "docs: kinematics at 1e200"
stderr_is "mbsens kinematics: error: kinematics: acceleration of body 'body1' is not finite" "docs: kinematics message"
run info models
expect 1 "docs: info models"
stderr_is "mbsens info: error: models: is a directory, not a model file" "docs: directory message"
run simulate models/double_pendulum.json --dt 1 --tf 1e19
expect 2 "docs: simulate --dt 1 --tf 1e19"
stderr_is "mbsens simulate: error: simulation options: t = 0 .. 1e+19 with dt = 1 is 1e+19 steps; at most 1e+09 are allowed (MBS_SIM_MAX_STEPS): increase dt or shorten the run" "docs: the limit's message"
"$CLI" simulate models/double_pendulum.json --tf 0.05 --dt 0.01 --every 2 -q | cut -d, -f1 > "$OUT"
[ "$(tr '\n' ' ' < "$OUT")" = "t 0 0.02 0.04 0.05 " ] && ok "docs: --every 2 rows" || ko "docs: --every 2 rows"
# (on a copy: the command would replace the shipped model if the refusal failed)
mkdir -p "$TMP/docs/models" && cp "$P" "$TMP/docs/models/" && cd "$TMP/docs" || ko "copy"
run convert models/double_pendulum.json -o models/double_pendulum.json
expect 1 "docs: convert onto the input"
stderr_is "mbsens convert: error: cannot write 'models/double_pendulum.json': it is the input model 'models/double_pendulum.json'" "docs: input model message"
cmp -s "$P" models/double_pendulum.json && ok "docs: model untouched" || ko "docs: model changed"
cd "$TMP" || ko "cd $TMP"

# ---------------------------------------------------------------- model files
run info "$SRC/tests/urdf/entity_attribute.urdf"
expect 1 "URDF attribute with an entity reference"
stderr_has 'entity_attribute\.urdf:7: <link name="\.\.\.">: the value holds the entity reference &e;' \
    "entity reference refused with file:line"
stdout_empty "URDF attribute with an entity reference"
mkdir "$TMP/model_dir" "$TMP/robot.urdf"
for d in "$TMP/model_dir" "$TMP/robot.urdf"; do
    run info "$d"
    expect 1 "a directory as a model ($(basename "$d"))"
    stderr_has ": is a directory, not a model file" "directory named as such"
    stderr_lines 1 "one line on stderr (libxml2 prints nothing itself)"
done
printf '<robot name="x">\n  <link name="a">\n    <oops </robot>\n' > "$TMP/bad.urdf"
run info "$TMP/bad.urdf"
expect 1 "malformed URDF"
stderr_has 'bad\.urdf:3:[0-9]+: XML error' "XML error with file:line:column"
stderr_lines 1 "one line on stderr for an XML error"

# ---------------------------------------------------------------- tangent velocities
TG=$TMP/tangent_free_body.json
cat > "$TG" <<'JSON'
{ "name": "tangent_free_body", "velocities": "tangent",
  "bodies": [ { "name": "box", "mass": 2, "com": [0.1, 0, 0], "inertia": [0.2, 0.3, 0.4, 0, 0, 0] } ],
  "joints": [ { "name": "free", "type": "floating", "parent": "ground", "child": "box",
                "q0": [0, 0, 1, 1, 0, 0, 0], "v0": [0.1, 0, 0, 0, 0, 2] } ] }
JSON
run inverse "$TG"
expect 0 "inverse on a tangent floating joint"
run simulate "$TG" --integrator cvodes --tf 0.01
[ "$rc" -ne 0 ] && ok "cvodes on a tangent joint refused (exit $rc)" || ko "cvodes on a tangent joint: exit 0"
stderr_has "not yet implemented for joint 'free' with tangent velocities" "cvodes: the joint named"
stdout_empty "cvodes on a tangent joint"
run check "$TG"
expect 0 "check on a tangent floating joint"

finish
