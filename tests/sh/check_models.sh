#!/bin/sh
# mbsens check with its defaults (10 samples, one mbs_data for all of them)
# on every model in models/ and tests/models/: every derivative block agrees
# with complex step within its derived tolerance.
# tests/models/bad_*.json are invalid on purpose: they must be refused with
# a message naming the file.
SUITE=check_models
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
SRC=$MBS_SOURCE_DIR

n=0
for f in "$SRC"/models/*.json "$SRC"/tests/models/*.json; do
    name=${f#"$SRC"/}
    n=$((n + 1))
    # the default tolerances: derived per block and state from round-off and
    # the condition number of M' (docs/formulations.md, "Checking the
    # derivatives"; anchor_lift.json's 3e8 included)
    run check "$f"
    case $(basename "$f") in
    bad_*)
        if [ "$rc" -ne 0 ] && grep -q -F "$f" "$ERR" && ! grep -q "agree" "$OUT"; then
            ok "$name refused (exit $rc)"
        else
            ko "$name: expected a load error naming the file (exit $rc)"
            sed 's/^/    stderr: /' "$ERR" | head -n 5
        fi ;;
    *)
        expect 0 "check $name"
        stdout_has "^all derivatives agree" "$name: every block within the tolerance" ;;
    esac
done
# the globs matched: the shipped and the test models are there
[ "$n" -ge 10 ] && ok "$n models checked" || ko "only $n models found"
finish
