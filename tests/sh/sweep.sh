#!/bin/sh
# Command-line test: `mbsens sweep` without MPI (docs/scaling.md).
#
# The five-bar over a grid with a case that fails (a mass below its
# bound): the table has one row per case in case order, the failed case
# carries its message, and 1, 2 and 3 threads give the same bytes. Each
# case's row equals `mbsens sensitivity` on the model with the case's
# parameter values (JSON, all 17 digits). A random sample is the same from
# run to run; simulate and derivatives sweeps run. Checkpoint: a sweep
# stopped by SIGTERM leaves no table and a checkpoint; --resume computes
# only the missing cases and gives the uninterrupted run's bytes; a
# checkpoint cut in the middle of a line resumes too; a checkpoint of
# another spec is refused. Usage and spec errors: exit 2 or 1 with the
# JSON path, nothing written.
#
# Environment (set by CTest): MBS_CLI, MBS_SOURCE_DIR.
SUITE=sweep
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
need_python

FB=$MBS_SOURCE_DIR/models/fivebar.json
cat >"$TMP/grid.json" <<EOF
{ "model": "$FB",
  "grid": { "L_s1": { "from": 2.0, "to": 2.4, "count": 3 }, "m_A1": [0.9, 1.1, -1] },
  "compute": { "what": "sensitivity", "method": "davm", "tf": 0.05 } }
EOF

run sweep "$TMP/grid.json" --threads 1 --csv "$TMP/t1.csv" --json "$TMP/t1.json"
expect 0 "grid sweep on 1 thread"
stderr_has "3 of 9 cases failed" "the failed cases are counted"
run sweep "$TMP/grid.json" --threads 2 --csv "$TMP/t2.csv"
expect 0 "grid sweep on 2 threads"
OMP_NUM_THREADS=3 "$CLI" sweep "$TMP/grid.json" >"$TMP/t3.csv" 2>"$ERR"
if cmp -s "$TMP/t1.csv" "$TMP/t2.csv" && cmp -s "$TMP/t1.csv" "$TMP/t3.csv"; then
    ok "1, 2 and 3 threads (OMP_NUM_THREADS=3, CSV on stdout): the same bytes"
else ko "the tables of 1, 2 and 3 threads differ"; fi

# every row against `mbsens sensitivity` on the model with the case's values
if python3 - "$TMP" "$FB" "$CLI" <<'EOF'
import csv, json, subprocess, sys
tmp, fb, cli = sys.argv[1:4]
rows = list(csv.DictReader(open(f"{tmp}/t1.csv")))
js = json.load(open(f"{tmp}/t1.json"))
assert [r["case"] for r in rows] == [str(i) for i in range(9)], "case order"
assert len(js["cases"]) == 9 and js["variables"] == ["L_s1", "m_A1"]
model = json.load(open(fb))
for i, r in enumerate(rows):
    x = js["cases"][i]["x"]
    assert x == [float(r["L_s1"]), float(r["m_A1"])]
    if float(r["m_A1"]) < 0:
        assert "outside its bounds" in r["status"] and "error" in js["cases"][i], r
        continue
    assert r["status"] == "ok"
    for p in model["parameters"]:
        if p["name"] == "L_s1": p["value"] = x[0]
        if p["name"] == "m_A1": p["value"] = x[1]
    # the parameters set the targets: write the targets too
    m = json.loads(json.dumps(model))
    m["forces"][0]["length"] = x[0]
    m["bodies"][0]["mass"] = x[1]
    path = f"{tmp}/case{i}.json"
    json.dump(m, open(path, "w"))
    out = json.loads(subprocess.run([cli, "sensitivity", path, "--method", "davm", "--tf", "0.05", "--json"],
                                    check=True, capture_output=True, text=True).stdout)
    want = out["psi"] + [g for row in out["gradient"] for g in row]
    got = js["cases"][i]["values"]
    assert got == want, (i, got, want)
EOF
then ok "each row equals mbsens sensitivity on the case's model (bit for bit)"; else ko "rows against mbsens sensitivity"; fi

# random samples, simulate and derivatives
cat >"$TMP/rand.json" <<EOF
{ "model": "$MBS_SOURCE_DIR/models/double_pendulum.json",
  "random": { "count": 6, "seed": 11,
              "variables": { "q0.theta1": { "uniform": [-1, 1] }, "qd0.theta2": { "normal": [0, 0.5] } } },
  "compute": { "what": "simulate", "tf": 0.1, "dt": 0.01 } }
EOF
run sweep "$TMP/rand.json" --threads 2 --csv "$TMP/r1.csv"
expect 0 "random sample of an initial coordinate, simulate"
run sweep "$TMP/rand.json" --threads 1 --csv "$TMP/r2.csv"
if cmp -s "$TMP/r1.csv" "$TMP/r2.csv" && [ "$(wc -l <"$TMP/r1.csv")" -eq 7 ]; then
    ok "the seeded sample and its results are the same on 1 and 2 threads (6 rows)"
else ko "random sample: tables differ or wrong row count"; fi
sed 's/"simulate", "tf": 0.1, "dt": 0.01/"derivatives", "write": ["qdd", "dqdd_dq"]/' "$TMP/rand.json" >"$TMP/der.json"
run sweep "$TMP/der.json" --json "$TMP/der.out.json"
expect 0 "derivatives sweep"
python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
n = len(j['columns']); q = sum(c.startswith('qdd.') for c in j['columns'])
sys.exit(0 if n == q + q * q and len(j['cases']) == 6 else 1)" "$TMP/der.out.json" \
    && ok "derivatives: qdd and dqdd/dq columns" || ko "derivatives columns"

# checkpoint, SIGTERM, --resume
cat >"$TMP/long.json" <<EOF
{ "model": "$FB",
  "grid": { "L_s1": { "from": 2.0, "to": 2.4, "count": 12 } },
  "compute": { "what": "sensitivity", "method": "davm", "tf": 0.4 } }
EOF
run sweep "$TMP/long.json" --threads 2 --csv "$TMP/full.csv"
expect 0 "the uninterrupted sweep"
"$CLI" sweep "$TMP/long.json" --threads 1 --csv "$TMP/part.csv" --json "$TMP/part.json" --checkpoint "$TMP/ck" \
    2>"$ERR" &
pid=$!
n=0
while [ "$n" -lt 200 ] && [ "$(cat "$TMP/ck" 2>/dev/null | wc -l)" -lt 4 ]; do sleep 0.05; n=$((n + 1)); done
kill -TERM "$pid"
wait "$pid"
lines=$(wc -l <"$TMP/ck")
if [ ! -e "$TMP/part.csv" ] && [ ! -e "$TMP/part.json" ] && [ "$lines" -ge 4 ] && [ "$lines" -lt 13 ]; then
    ok "SIGTERM: no table, a checkpoint of $((lines - 1)) cases"
else ko "SIGTERM: table exists or checkpoint has $lines lines"; fi
# the tables are written to temporary files while the cases are computed:
# both are removed
ls -a "$TMP" | grep -q '^\.part\.' && ko "a temporary table was left" || ok "no temporary table left"
run sweep "$TMP/long.json" --threads 2 --csv "$TMP/part.csv" --checkpoint "$TMP/ck" --resume --stats
expect 0 "--resume"
stderr_has "12 cases \\($((13 - lines)) computed\\)" "--resume computes only the missing cases"
cmp -s "$TMP/full.csv" "$TMP/part.csv" && ok "resumed table = uninterrupted table (bytes)" \
    || ko "resumed table differs"
[ ! -e "$TMP/ck" ] && ok "the checkpoint is removed once the table is written" || ko "checkpoint left"

# a checkpoint cut within a line (a kill during a write) resumes
"$CLI" sweep "$TMP/long.json" --threads 1 --csv /dev/null --checkpoint "$TMP/ck2" 2>"$ERR" &
pid=$!
n=0
while [ "$n" -lt 200 ] && [ "$(cat "$TMP/ck2" 2>/dev/null | wc -l)" -lt 3 ]; do sleep 0.05; n=$((n + 1)); done
kill -KILL "$pid"
wait "$pid" 2>/dev/null
head -c "$(($(wc -c <"$TMP/ck2") - 7))" "$TMP/ck2" >"$TMP/ck3"
run sweep "$TMP/long.json" --csv "$TMP/part3.csv" --checkpoint "$TMP/ck3" --resume
expect 0 "--resume of a checkpoint cut within a line"
cmp -s "$TMP/full.csv" "$TMP/part3.csv" && ok "... gives the uninterrupted table" || ko "cut checkpoint: table differs"

# the command of docs/scaling.md, from the source directory
(cd "$MBS_SOURCE_DIR" && "$CLI" sweep examples/sweep_fivebar.json --csv "$TMP/doc.csv" --json "$TMP/doc.json") \
    >"$OUT" 2>"$ERR"
rc=$?
expect 0 "mbsens sweep examples/sweep_fivebar.json --csv sweep.csv --json sweep.json (docs/scaling.md)"
[ "$(grep -c ',ok,' "$TMP/doc.csv")" -eq 16 ] && ok "... 16 cases, all ok" || ko "... not 16 ok rows"

# errors
printf 'mbsens sweep checkpoint 0000000000000000 12 18\n' >"$TMP/other"
run sweep "$TMP/long.json" --csv "$TMP/x.csv" --checkpoint "$TMP/other" --resume
expect 1 "a checkpoint of another sweep"
stderr_has "another sweep" "... is named as such"
run sweep "$TMP/long.json" --csv "$TMP/x.csv" --checkpoint "$TMP/other"
expect 1 "an existing checkpoint without --resume"
stderr_has "exists: continue it with --resume" "... says what to do"
run sweep "$TMP/long.json" --resume
expect 2 "--resume without --checkpoint"
run sweep "$TMP/long.json" --threads 0
expect 2 "--threads 0"
# a table that cannot be written (600 kB to a full device: the stream's
# writes fail while the cases are computed): the message names the file
printf '{ "model": "%s", "grid": { "L_s1": { "from": 2.0, "to": 2.4, "count": 20000 } }, "compute": { "what": "none" } }\n' \
    "$FB" >"$TMP/nop.json"
run sweep "$TMP/nop.json" --csv /dev/full
expect 1 "--csv /dev/full"
stderr_has "--csv: cannot write '/dev/full'" "... names the table and the file"
sed 's/"count": 12/"count": 0/' "$TMP/long.json" >"$TMP/bad.json"
run sweep "$TMP/bad.json" --csv "$TMP/x.csv"
expect 1 "a grid of 0 values"
stderr_has "bad.json: grid.L_s1: expected 1 to" "... named by its JSON path"
sed 's/"L_s1"/"nope"/' "$TMP/long.json" >"$TMP/bad.json"
run sweep "$TMP/bad.json" --csv "$TMP/x.csv"
expect 1 "an unknown variable"
stderr_has "grid.nope: 'nope' is neither a parameter" "... named"
sed 's/"davm"/"adj"/' "$TMP/long.json" >"$TMP/bad.json"
run sweep "$TMP/bad.json" --csv "$TMP/x.csv"
expect 1 "an unknown method"
stderr_has "compute.method: expected ddm" "... named"
printf '{ "model": "%s", "grid": {' "$FB" >"$TMP/bad.json"
run sweep "$TMP/bad.json" --csv "$TMP/x.csv"
expect 1 "a spec that is not JSON"
stderr_has "bad.json:1:[0-9]+: " "... file:line:col"
[ ! -e "$TMP/x.csv" ] && ok "no table written by the failed commands" || ko "a table was written"
finish
