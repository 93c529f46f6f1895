#!/bin/sh
# optimize says in words why it stopped and whether the result is a
# minimum (docs/cli.md, "optimize"): a converged run, one stopped by the
# iteration limit, and one whose --pgtol is out of reach, which NLopt ends
# itself; the same verdict in --out RESULT.json.
#
# Environment (set by CTest): MBS_CLI, MBS_SOURCE_DIR.
SUITE=optimize_stop
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
need_python
ARM=$MBS_SOURCE_DIR/models/arm3.json

run optimize "$ARM" --objective reach --free k,l0 --tf 0.5 -q --out "$TMP/conv.json"
expect 0 "a converged run"
stdout_has '^stop: pgtol after ' "stop reason"
stdout_has '^      the projected gradient fell below --pgtol$' "in words"
stdout_has '^result: converged: projected gradient [0-9.e+-]+ <= pgtol 1e-08 \(scaled problem\)$' "verdict: converged"

run optimize "$ARM" --objective reach --free k,l0 --tf 0.5 -q --max-iter 1 --out "$TMP/short.json"
expect 0 "a run stopped by --max-iter"
stdout_has '^      the iteration limit \(--max-iter\) was reached$' "max_iter in words"
stdout_has '^result: NOT converged: projected gradient ' "verdict: not converged"

run optimize "$ARM" --objective reach --free k,l0 --tf 0.5 -q --pgtol 1e-30 --out "$TMP/tight.json"
expect 0 "a run with --pgtol out of reach"
if grep -q '^stop: pgtol' "$OUT"; then ko "pgtol 1e-30 reached"; else ok "NLopt ends the run: $(sed -n 's/^stop: \([a-z_]*\).*/\1/p' "$OUT")"; fi
stdout_has "^result: converged to the objective's resolution: projected gradient [0-9.e+-]+ <= sqrt\(ftol\) 1e-05" \
    "verdict: converged to the objective's resolution"

if python3 - "$TMP/conv.json" "$TMP/short.json" "$TMP/tight.json" >"$TMP/py.log" 2>&1 <<'PY'
import json, math, sys
conv, short, tight = (json.load(open(f)) for f in sys.argv[1:4])
assert conv["converged"] is True and conv["stop_reason"] == "pgtol", conv
assert conv["stop_words"] == "the projected gradient fell below --pgtol"
assert conv["verdict"].startswith("converged:")
assert short["converged"] is False and short["verdict"].startswith("NOT converged"), short
# the verdict follows the projected gradient of the scaled problem
assert conv["projected_gradient_norm_scaled"] <= 1e-8
assert short["projected_gradient_norm_scaled"] > math.sqrt(1e-10)
assert tight["converged"] is True and tight["projected_gradient_norm_scaled"] <= math.sqrt(1e-10), tight
PY
then ok "RESULT.json: stop_words, converged, verdict"; else ko "RESULT.json"; sed 's/^/    /' "$TMP/py.log"; fi
finish
