#!/bin/sh
# simulate --format npy (docs/cli.md, "simulate"): a .npy file that numpy
# reads with no extra package (Debian's python3-numpy, /usr/bin/python3):
# one record per row, a float64 field per CSV column, the same values as
# the CSV to the last bit (the CSV's numbers read back exactly); the same
# bytes through standard output; a repeated column name made unique; a
# device refused before anything is written.
#
# Environment (set by CTest): MBS_CLI, MBS_SOURCE_DIR.
SUITE=npy
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
NUMPY_PY=/usr/bin/python3
FIVEBAR=$MBS_SOURCE_DIR/models/fivebar.json

run simulate "$FIVEBAR" --tf 0.05 -q --format npy --out "$TMP/f.npy"
expect 0 "simulate --format npy"
run simulate "$FIVEBAR" --tf 0.05 -q --out "$TMP/f.csv"
expect 0 "simulate (CSV)"
run simulate "$FIVEBAR" --tf 0.05 -q --format npy
expect 0 "--format npy to standard output"
if cmp -s "$OUT" "$TMP/f.npy"; then ok "standard output = file"; else ko "standard output differs from the file"; fi

# the format itself, read by hand (magic, version, header, 64-byte alignment)
check_npy() {   # check_npy PYTHON NPY CSV LABEL
    if "$1" - "$2" "$3" >"$TMP/py.log" 2>&1 <<'PY'
import ast, csv, struct, sys
raw = open(sys.argv[1], "rb").read()
assert raw[:6] == b"\x93NUMPY", raw[:6]
major = raw[6]
n = struct.unpack("<H", raw[8:10])[0] if major == 1 else struct.unpack("<I", raw[8:12])[0]
start = (10 if major == 1 else 12) + n
assert start % 64 == 0, start
h = ast.literal_eval(raw[10 if major == 1 else 12:start].decode("utf-8"))
assert h["fortran_order"] is False
names = [f[0] for f in h["descr"]]
rows = list(csv.reader(open(sys.argv[2])))
assert names == rows[0], (names[:5], rows[0][:5])
assert h["shape"] == (len(rows) - 1,), h["shape"]
assert all(f[1] == "<f8" for f in h["descr"])
vals = struct.unpack("<%dd" % ((len(raw) - start) // 8), raw[start:])
assert len(vals) == len(names) * (len(rows) - 1)
flat = [float(x) for r in rows[1:] for x in r]
assert list(vals) == flat   # bit for bit
PY
    then ok "$4"; else ko "$4"; sed 's/^/    /' "$TMP/py.log"; fi
}
check_npy python3 "$TMP/f.npy" "$TMP/f.csv" "npy read by hand: header, shape, the CSV's values to the last bit"

if "$NUMPY_PY" -c 'import numpy' 2>/dev/null; then
    if "$NUMPY_PY" - "$TMP/f.npy" "$TMP/f.csv" >"$TMP/py.log" 2>&1 <<'PY'
import csv, sys
import numpy as np
a = np.load(sys.argv[1])
rows = list(csv.reader(open(sys.argv[2])))
assert a.dtype.names == tuple(rows[0])
assert a.shape == (len(rows) - 1,)
for j, name in enumerate(rows[0]):
    assert (a[name] == np.array([float(r[j]) for r in rows[1:]])).all(), name
assert a["t"][-1] == 0.05 and a["phi_norm"].max() < 1e-9
PY
    then ok "numpy.load: fields by name, the CSV's values"; else ko "numpy.load"; sed 's/^/    /' "$TMP/py.log"; fi
else
    ko "numpy is missing from $NUMPY_PY (scripts/install-deps.sh installs python3-numpy)"
fi

# a repeated column: the model's pose output and --poses of the same body
python3 - "$MBS_SOURCE_DIR/models/double_pendulum.json" "$TMP/dp.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["outputs"] = [{"body": "body2"}]
json.dump(d, open(sys.argv[2], "w"))
PY
run simulate "$TMP/dp.json" --tf 0.01 -q --poses body2 --format npy --out "$TMP/dp.npy"
expect 0 "a column twice"
run simulate "$TMP/dp.json" --tf 0.01 -q --poses body2 --out "$TMP/dp.csv"
if "$NUMPY_PY" -c "
import numpy as np
a = np.load('$TMP/dp.npy')
assert 'body2.x' in a.dtype.names and 'body2.x#2' in a.dtype.names, a.dtype.names
assert (a['body2.x'] == a['body2.x#2']).all()
" 2>"$TMP/py.log"; then ok "repeated name: body2.x and body2.x#2"; else ko "repeated name"; cat "$TMP/py.log"; fi

run simulate "$FIVEBAR" --tf 0.01 --format npy --out /dev/null
expect 1 "npy to a device"
stderr_has "is a device or a FIFO; write to a file or to standard output" "device refused"
run simulate "$FIVEBAR" --format npz
expect 2 "--format npz"
stderr_has "expected csv, json or npy" "the formats are named"
finish
